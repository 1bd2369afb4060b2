package cairn_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/internal/sample"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// sampleRecords is how many searchable records the sample holds (26
// observations, 2 summaries): each wants one vector.
const sampleRecords = 28

// downEmbedder is an embedder whose upstream is unreachable.
type downEmbedder struct{ embed.Hash }

func (downEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("dial tcp 10.9.8.7:11434: connection refused")
}

// skewedEmbedder answers, but wrongly: "dim" gives vectors one longer
// than its space, "nan" and "inf" put a non-finite value in each vector,
// "count" gives one vector too few.
type skewedEmbedder struct {
	embed.Hash
	mode string
}

func (s skewedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := s.Hash.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, v := range vs {
		switch s.mode {
		case "dim":
			vs[i] = append(v, 0.5)
		case "nan":
			v[0] = float32(math.NaN())
		case "inf":
			v[len(v)-1] = float32(math.Inf(-1))
		}
	}
	if s.mode == "count" {
		vs = vs[:len(vs)-1]
	}
	return vs, nil
}

// search runs a retrieval that must succeed.
func search(t *testing.T, eng *cairn.Engine, req cairn.RetrieveRequest) cairn.RetrieveResult {
	t.Helper()
	res, err := eng.Retrieve(ctx, req)
	if err != nil {
		t.Fatalf("retrieve %q (%s): %v", req.Query, req.Provider, err)
	}
	return res
}

// candidate returns the candidate with id, if any.
func candidate(res cairn.RetrieveResult, id string) (retrieve.Candidate, bool) {
	for _, c := range res.Candidates {
		if c.Entity.ID() == id {
			return c, true
		}
	}
	return retrieve.Candidate{}, false
}

func candidateIDs(res cairn.RetrieveResult) []string {
	ids := make([]string, len(res.Candidates))
	for i, c := range res.Candidates {
		ids[i] = c.Entity.ID()
	}
	return ids
}

// component is a candidate's named score component; it fails the test
// when the explanation lacks it.
func component(t *testing.T, c retrieve.Candidate, name string) float64 {
	t.Helper()
	e, ok := c.Explanation.Child(name)
	if !ok {
		t.Fatalf("candidate %s: no %q in its explanation %+v", c.Entity.ID(), name, c.Explanation)
	}
	return e.Value
}

func vectorStatus(t *testing.T, eng *cairn.Engine) cairn.EmbedderStatus {
	t.Helper()
	st, err := eng.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.Embedder
}

// reembedAll embeds every pending record and checks that the report and
// the progress calls agree.
func reembedAll(t *testing.T, eng *cairn.Engine, req cairn.ReembedRequest, want int) cairn.ReembedReport {
	t.Helper()
	var calls [][2]int
	rep, err := eng.Reembed(ctx, req, func(done, total int) { calls = append(calls, [2]int{done, total}) })
	if err != nil {
		t.Fatalf("reembed: %v (report %+v)", err, rep)
	}
	if rep.Embedded != want || rep.Pending != 0 {
		t.Fatalf("reembed: %+v; want %d embedded, 0 pending", rep, want)
	}
	if len(calls) == 0 || calls[len(calls)-1] != [2]int{want, want} {
		t.Fatalf("progress calls %v; want the last to be done == total == %d", calls, want)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] < calls[i-1][0] {
			t.Fatalf("progress went backwards: %v", calls)
		}
	}
	if vs := vectorStatus(t, eng); vs.Pending != 0 || vs.InSpace < want {
		t.Fatalf("after reembed: %+v; want none pending, at least %d in space", vs, want)
	}
	return rep
}

// settle embeds whatever is still pending (an import may or may not have
// embedded its records) and checks that n records have a vector.
func settle(t *testing.T, eng *cairn.Engine, n int) {
	t.Helper()
	if rep, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil); err != nil || rep.Pending != 0 {
		t.Fatalf("reembed: %+v %v", rep, err)
	}
	if vs := vectorStatus(t, eng); vs.InSpace != n || vs.Pending != 0 {
		t.Fatalf("vectors %+v; want %d in space, none pending", vs, n)
	}
}

func TestIndexFollowsAnotherEngine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	opts := func() *cairn.Options { return &cairn.Options{Embedder: embed.Hash{Dim: 64}} }
	// b loads its index from the empty database: everything after reaches
	// it through the change log only, the import included.
	b := openAt(t, path, opts())
	const skew = "TestValidateToken_ClockSkew expected nil error"
	if res := search(t, b, cairn.RetrieveRequest{Query: skew}); len(res.Candidates) != 0 {
		t.Fatalf("candidates in an empty database: %v", candidateIDs(res))
	}
	a := openSampleAt(t, path, opts())
	settle(t, a, sampleRecords)
	inRepo := memory.Scope{RepoID: repo}
	res := search(t, b, cairn.RetrieveRequest{Query: skew, ScopeIDs: inRepo})
	if c, ok := candidate(res, "obs_s1_04"); !ok || component(t, c, "semantic") <= 0 {
		t.Fatalf("b does not find the imported obs_s1_04 with its vector: %v", candidateIDs(res))
	}
	if len(res.Candidates) < 3 {
		t.Fatalf("b finds only %v after the import", candidateIDs(res))
	}

	// A record logged through a.
	o, err := a.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: "the zeppelin hangar door sticks when the frost comes",
		ScopeIDs: memory.Scope{SessionID: "s9", RepoID: repo}})
	if err != nil {
		t.Fatal(err)
	}
	res = search(t, b, cairn.RetrieveRequest{Query: "zeppelin hangar", ScopeIDs: inRepo})
	if len(res.Candidates) == 0 || res.Candidates[0].Entity.ID() != o.ID {
		t.Fatalf("b's hybrid retrieval does not rank a's new record first: %v", candidateIDs(res))
	}
	top := res.Candidates[0]
	if component(t, top, "bm25") <= 0 || component(t, top, "semantic") <= 0 {
		t.Fatalf("the new record reached b without its words or its vector: %+v", top.Explanation)
	}
	if _, ok := res.Provenance.Scoring.Params["candidatesWithoutVector"]; ok {
		t.Fatalf("every record has a vector, yet b counts candidates without one: %v", res.Provenance.Scoring.Params)
	}

	// Forgotten through a: gone from b's results (the read-back would
	// show it as [redacted] if b's index still held it).
	for _, id := range []string{o.ID, "obs_s1_04"} {
		if _, err := a.Forget(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"zeppelin hangar", skew} {
		res := search(t, b, cairn.RetrieveRequest{Query: q, ScopeIDs: inRepo})
		for _, c := range res.Candidates {
			if c.Entity.ID() == o.ID || c.Entity.ID() == "obs_s1_04" || c.Entity.Redacted() || c.Entity.Content() == memory.RedactedContent {
				t.Fatalf("query %q: b still returns forgotten %s", q, c.Entity.ID())
			}
		}
	}

	// A capsule summary replaced through a: b searches the new text, not
	// the old.
	const newSummary = "Running summary: the quokka ledger reconciliation now runs nightly in a background worker."
	if _, err := a.SetSummary(ctx, cairn.SummaryRequest{CapsuleID: "cap_s2", SummaryInput: cairn.SummaryInput{Content: newSummary}}); err != nil {
		t.Fatal(err)
	}
	res = search(t, b, cairn.RetrieveRequest{Query: "quokka reconciliation", ScopeIDs: inRepo})
	if len(res.Candidates) == 0 || res.Candidates[0].Entity.ID() != "sum_s2" || res.Candidates[0].Entity.Content() != newSummary {
		t.Fatalf("b does not rank the replaced summary first for its new words: %v", candidateIDs(res))
	}
	if component(t, res.Candidates[0], "bm25") <= 0 || component(t, res.Candidates[0], "semantic") <= 0 {
		t.Fatalf("the replaced summary reached b without its words or its new vector: %+v", res.Candidates[0].Explanation)
	}
	res = search(t, b, cairn.RetrieveRequest{Query: "non-idempotent payment webhook migrator", ScopeIDs: inRepo})
	if c, ok := candidate(res, "sum_s2"); ok && component(t, c, "bm25") > 0 {
		t.Fatalf("b still matches the summary's old words: %+v", c.Explanation)
	}
	// The rewritten summary was embedded again, once, in a's space.
	if vs := vectorStatus(t, a); vs.Pending != 0 || vs.InSpace != sampleRecords+1-2 {
		t.Fatalf("vectors after the changes: %+v; want %d in space (the sample, the new record, minus two forgotten), none pending", vs, sampleRecords+1-2)
	}
}

func TestEmbedderDownKeepsWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	space := embed.Hash{Dim: 32}
	var logs bytes.Buffer
	down := openAt(t, path, &cairn.Options{Embedder: downEmbedder{space}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	scope := memory.Scope{SessionID: "s1", RepoID: repo}
	if _, err := down.OpenCapsule(ctx, cairn.OpenCapsuleRequest{ID: "cap_down", ScopeIDs: scope}); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"the albatross migration script timed out on the replica",
		"albatross: retry with a longer statement timeout",
		"albatross migration finished in 41 minutes",
	}
	var ids []string
	for _, text := range texts {
		o, err := down.Log(ctx, cairn.LogRequest{Kind: memory.KindCommand, Content: text, ScopeIDs: scope})
		if err != nil {
			t.Fatalf("a write failed because the embedder is down: %v", err)
		}
		ids = append(ids, o.ID)
	}
	sum, err := down.SetSummary(ctx, cairn.SummaryRequest{CapsuleID: "cap_down", SummaryInput: cairn.SummaryInput{Content: "The albatross migration needed a longer timeout."}})
	if err != nil {
		t.Fatalf("a summary write failed because the embedder is down: %v", err)
	}
	const pending = 4
	for _, id := range ids {
		if o, err := down.Observation(ctx, id); err != nil || !strings.Contains(o.Content, "albatross") {
			t.Fatalf("observation %s not stored: %+v %v", id, o, err)
		}
	}
	if st, err := down.Stats(ctx); err != nil || st.Observations != 3 || st.Summaries != 1 {
		t.Fatalf("stats %+v %v; want 3 observations and 1 summary", st, err)
	}
	if vs := vectorStatus(t, down); vs.Space != space.Space() || vs.Pending != pending || vs.InSpace != 0 || vs.OtherSpaces != 0 {
		t.Fatalf("status while down: %+v; want %d pending, none in space", vs, pending)
	}
	// The failure is logged, without the records' text or the upstream's
	// address.
	if l := logs.String(); !strings.Contains(l, "records stored without vectors") || strings.Contains(l, "albatross") || strings.Contains(l, "10.9.8.7") {
		t.Fatalf("log while down:\n%s", l)
	}

	// Hybrid retrieval cannot embed the query: it degrades, answering
	// from words and recency and saying so, never silently. local-fts
	// finds the same records by their words.
	res := search(t, down, cairn.RetrieveRequest{Query: "albatross migration", ScopeIDs: scope})
	got := candidateIDs(res)
	slices.Sort(got)
	if !slices.Equal(got, ids) || res.Provenance.Degraded != memory.CodeEmbedderUnavailable || down.DegradedRetrievals() != 1 {
		t.Fatalf("hybrid with the embedder down found %v (degraded %q, counted %d); want the three observations %v, degraded, counted once",
			got, res.Provenance.Degraded, down.DegradedRetrievals(), ids)
	}
	for _, c := range res.Candidates {
		if c.Explanation.Degraded != memory.CodeEmbedderUnavailable || component(t, c, "semantic") != 0 {
			t.Fatalf("candidate %s: explanation %+v; want degraded and no semantic signal", c.Entity.ID(), c.Explanation)
		}
	}
	res = search(t, down, cairn.RetrieveRequest{Query: "albatross migration", ScopeIDs: scope, Provider: retrieve.LocalFTSName})
	got = candidateIDs(res)
	slices.Sort(got)
	if !slices.Equal(got, ids) || res.CurrentSummary == nil || res.CurrentSummary.ID != sum.ID || res.Provenance.Degraded != "" {
		t.Fatalf("local-fts found %v with current summary %+v; want the three observations %v and the summary %s", got, res.CurrentSummary, ids, sum.ID)
	}

	// Reembed while down: nothing embedded, all still pending, typed.
	called := false
	rep, err := down.Reembed(ctx, cairn.ReembedRequest{}, func(int, int) { called = true })
	if memory.CodeOf(err) != memory.CodeEmbedderUnavailable || rep.Embedded != 0 || rep.Pending != pending || called {
		t.Fatalf("reembed while down: %+v %v (progress called %v); want embedder_unavailable, %d pending", rep, err, called, pending)
	}
	if strings.Contains(memory.Public(err).Message, "10.9.8.7") {
		t.Fatalf("the error leaks the upstream's address: %s", memory.Public(err).Message)
	}
	down.Close()

	// Back up: Reembed embeds the four, and hybrid retrieval works.
	up := openAt(t, path, &cairn.Options{Embedder: space})
	if vs := vectorStatus(t, up); vs.Pending != pending {
		t.Fatalf("after reopening: %+v; want %d pending", vs, pending)
	}
	reembedAll(t, up, cairn.ReembedRequest{}, pending)
	res = search(t, up, cairn.RetrieveRequest{Query: "albatross migration", ScopeIDs: memory.Scope{RepoID: repo}})
	if len(res.Candidates) != pending || res.Provenance.Degraded != "" || up.DegradedRetrievals() != 0 {
		t.Fatalf("hybrid after reembed: %v (degraded %q); want the three observations and the summary, not degraded", candidateIDs(res), res.Provenance.Degraded)
	}
	for _, c := range res.Candidates {
		if component(t, c, "semantic") <= 0 || c.Explanation.Degraded != "" {
			t.Fatalf("candidate %s has no similarity after reembed: %+v", c.Entity.ID(), c.Explanation)
		}
	}
}

func TestBadVectorsAreNotKept(t *testing.T) {
	for _, tc := range []struct{ mode, msg string }{
		{"dim", "dimension 33; the space is 32"},
		{"nan", "NaN or Inf"},
		{"inf", "NaN or Inf"},
		{"count", "returned 0 vectors for 1 texts"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cairn.db")
			bad := skewedEmbedder{embed.Hash{Dim: 32}, tc.mode}
			eng := openAt(t, path, &cairn.Options{Embedder: bad})
			o, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindError, Content: "pelican queue overflowed at 10k messages", ScopeIDs: memory.Scope{RepoID: repo}})
			if err != nil {
				t.Fatalf("the write failed on a bad vector: %v", err)
			}
			if vs := vectorStatus(t, eng); vs.Pending != 1 || vs.InSpace != 0 || vs.OtherSpaces != 0 {
				t.Fatalf("a bad vector was kept: %+v; want the record pending and no vector in any space", vs)
			}
			// Surfaced by Reembed, typed, with what was wrong.
			rep, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil)
			if memory.CodeOf(err) != memory.CodeEmbedderUnavailable || !strings.Contains(memory.Public(err).Message, tc.msg) {
				t.Fatalf("reembed: %v; want embedder_unavailable saying %q", err, tc.msg)
			}
			if rep.Embedded != 0 || rep.Pending != 1 {
				t.Fatalf("reembed report %+v; want nothing embedded, 1 pending", rep)
			}
			// A query vector is checked the same way: hybrid answers
			// without it, degraded.
			res := search(t, eng, cairn.RetrieveRequest{Query: "pelican queue"})
			if len(res.Candidates) != 1 || res.Candidates[0].Entity.ID() != o.ID || res.Provenance.Degraded != memory.CodeEmbedderUnavailable {
				t.Fatalf("hybrid with a bad query vector: %v degraded %q; want %s, degraded", candidateIDs(res), res.Provenance.Degraded, o.ID)
			}
			res = search(t, eng, cairn.RetrieveRequest{Query: "pelican queue", Provider: retrieve.LocalFTSName})
			if len(res.Candidates) != 1 || res.Candidates[0].Entity.ID() != o.ID {
				t.Fatalf("local-fts: %v; want %s", candidateIDs(res), o.ID)
			}
			eng.Close()
			// Nothing bad on disk: a sound embedder of the space finds it
			// pending and embeds it.
			good := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 32}})
			reembedAll(t, good, cairn.ReembedRequest{}, 1)
		})
	}
}

func TestSpaceMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	old := openSampleAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 32}})
	settle(t, old, sampleRecords)

	eng := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 48}})
	if vs := vectorStatus(t, eng); vs.InSpace != 0 || vs.Pending != sampleRecords || vs.OtherSpaces != sampleRecords {
		t.Fatalf("in the new space: %+v; want all %d pending, their 32-d vectors in another space", vs, sampleRecords)
	}
	inRepo := memory.Scope{RepoID: repo}
	const q = "clock skew leeway"
	res := search(t, eng, cairn.RetrieveRequest{Query: q, ScopeIDs: inRepo})
	params := res.Provenance.Scoring.Params
	if len(res.Candidates) == 0 || params["candidatesWithoutVector"] != params["candidates"] {
		t.Fatalf("before reembed: %d candidates, params %v; want lexical candidates, all without a vector", len(res.Candidates), params)
	}
	for _, c := range res.Candidates {
		if component(t, c, "semantic") != 0 {
			t.Fatalf("candidate %s has a similarity across spaces: %+v", c.Entity.ID(), c.Explanation)
		}
	}
	if component(t, res.Candidates[0], "lexical") != 1 {
		t.Fatalf("the top candidate is not the best lexical match: %+v", res.Candidates[0].Explanation)
	}

	// The old engine keeps writing in its space: the new one indexes the
	// record through the change log, without its 32-d vector.
	o, err := old.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: "clock skew leeway is now per region", ScopeIDs: inRepo})
	if err != nil {
		t.Fatal(err)
	}
	res = search(t, eng, cairn.RetrieveRequest{Query: q, ScopeIDs: inRepo})
	c, ok := candidate(res, o.ID)
	if !ok || component(t, c, "semantic") != 0 {
		t.Fatalf("the old engine's record in the new engine: found %v, %+v", ok, c.Explanation)
	}
	old.Close()

	rep := reembedAll(t, eng, cairn.ReembedRequest{DropOtherSpaces: true}, sampleRecords+1)
	if rep.Dropped != sampleRecords+1 || rep.Space != (embed.Hash{Dim: 48}).Space() {
		t.Fatalf("report %+v; want %d 32-d vectors dropped, space hash/48", rep, sampleRecords+1)
	}
	if vs := vectorStatus(t, eng); vs.InSpace != sampleRecords+1 || vs.OtherSpaces != 0 {
		t.Fatalf("after the move: %+v; want all in space, none elsewhere", vs)
	}
	// The same engine sees the new vectors (through the change log).
	res = search(t, eng, cairn.RetrieveRequest{Query: q, ScopeIDs: inRepo})
	if _, ok := res.Provenance.Scoring.Params["candidatesWithoutVector"]; ok {
		t.Fatalf("after reembed, candidates still without a vector: %v", res.Provenance.Scoring.Params)
	}
	if c, ok := candidate(res, o.ID); !ok || component(t, c, "semantic") <= 0 {
		t.Fatalf("after reembed, %s has no similarity: %v", o.ID, candidateIDs(res))
	}

	// From the old space, the vectors are all elsewhere now.
	back := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 32}})
	if vs := vectorStatus(t, back); vs.InSpace != 0 || vs.Pending != sampleRecords+1 || vs.OtherSpaces != sampleRecords+1 {
		t.Fatalf("the 32-d space after the drop: %+v; want none in it", vs)
	}
}

func TestHybridExplanations(t *testing.T) {
	eng := openSample(t, &cairn.Options{Embedder: embed.Hash{Dim: 64}})
	settle(t, eng, sampleRecords)
	inRepo := memory.Scope{RepoID: repo}
	w := retrieve.DefaultHybridWeights
	res := search(t, eng, cairn.RetrieveRequest{Query: "clock skew leeway", ScopeIDs: inRepo})
	if res.Provenance.ProviderUsed != retrieve.HybridName || !strings.Contains(res.Provenance.Scoring.Formula, "semanticWeight") {
		t.Fatalf("provenance %+v", res.Provenance)
	}
	if p := res.Provenance.Scoring.Params; p["lexicalWeight"] != w.Lexical || p["semanticWeight"] != w.Semantic || p["recencyWeight"] != w.Recency {
		t.Fatalf("scoring params %v; want the default weights", p)
	}
	if len(res.Candidates) < 3 {
		t.Fatalf("%d candidates", len(res.Candidates))
	}
	var withSem, lexTop int
	for i, c := range res.Candidates {
		lex, sem, rec := component(t, c, "lexical"), component(t, c, "semantic"), component(t, c, "recency")
		for name, v := range map[string]float64{"lexical": lex, "semantic": sem, "recency": rec} {
			if v < 0 || v > 1 {
				t.Fatalf("candidate %s: %s %v is outside [0, 1]", c.Entity.ID(), name, v)
			}
		}
		stated := component(t, c, "stated")
		want := retrieve.Round10((w.Lexical*lex + w.Semantic*sem + w.Recency*rec + w.Statement*stated) / (w.Lexical + w.Semantic + w.Recency + w.Statement))
		if c.Score != want || c.Explanation.Value != c.Score {
			t.Fatalf("candidate %s: score %v, explanation %v; its components give %v", c.Entity.ID(), c.Score, c.Explanation.Value, want)
		}
		wantRec, _ := retrieve.Recency(c.Entity.Time(), sample.Now)
		if math.Abs(rec-min(1, wantRec)) > 1e-12 {
			t.Fatalf("candidate %s: recency %v; its age gives %v", c.Entity.ID(), rec, wantRec)
		}
		if i > 0 && c.Score > res.Candidates[i-1].Score {
			t.Fatalf("candidates out of order at %d: %v", i, candidateIDs(res))
		}
		if sem > 0 {
			withSem++
		}
		if lex == 1 {
			lexTop++
		}
	}
	if withSem == 0 || lexTop == 0 {
		t.Fatalf("%d candidates with a similarity, %d with the best lexical match; want some of each", withSem, lexTop)
	}

	// local-fts on request: FTS5's exact matches, nothing else.
	hy := search(t, eng, cairn.RetrieveRequest{Query: "leeway", ScopeIDs: inRepo})
	fts := search(t, eng, cairn.RetrieveRequest{Query: "leeway", ScopeIDs: inRepo, Provider: retrieve.LocalFTSName})
	if fts.Provenance.ProviderUsed != retrieve.LocalFTSName {
		t.Fatalf("provider used %q", fts.Provenance.ProviderUsed)
	}
	got := candidateIDs(fts)
	slices.Sort(got)
	if want := []string{"obs_s1_05", "obs_s1_08", "obs_s1_09", "sum_s1"}; !slices.Equal(got, want) {
		t.Fatalf("local-fts for leeway: %v; want exactly the records with the word (obs_s1_06 says clockSkewLeeway, one token), %v", got, want)
	}
	for _, c := range fts.Candidates {
		if _, ok := c.Explanation.Child("semantic"); ok {
			t.Fatalf("a local-fts explanation has a semantic component: %+v", c.Explanation)
		}
		if component(t, c, "bm25") >= 0 {
			t.Fatalf("candidate %s: FTS5 bm25 %v should be negative", c.Entity.ID(), component(t, c, "bm25"))
		}
		component(t, c, "recency")
	}
	// Hybrid adds neighbours of the matches (and semantic joins) to them.
	hyIDs := candidateIDs(hy)
	for _, id := range got {
		if !slices.Contains(hyIDs, id) {
			t.Fatalf("hybrid lacks %s, a lexical match: %v", id, hyIDs)
		}
	}
	if len(hyIDs) <= len(got) {
		t.Fatalf("hybrid for leeway: %v; want the matches and their neighbours", hyIDs)
	}
}
