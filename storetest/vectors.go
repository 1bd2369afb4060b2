package storetest

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// This file checks embeddings and the snapshot reader's index methods.

// Vector spaces: the active one and three that differ from it in one part
// each.
var (
	spA     = memory.Space{Provider: "hash", Model: "m", Dim: 3}
	spProv  = memory.Space{Provider: "other", Model: "m", Dim: 3}
	spModel = memory.Space{Provider: "hash", Model: "m2", Dim: 3}
	spDim   = memory.Space{Provider: "hash", Model: "m", Dim: 4}
)

type kindID struct {
	kind memory.VectorKind
	id   string
}

func (k kindID) String() string { return string(k.kind) + "/" + k.id }

// seedKinds writes records of every embedded kind and returns each one's
// embedding text:
//
//	observations o1, o2, o3 (members 0, 1, 2 of the open capsule c1, scope s1)
//	summary m1 of c1; thoughts t1 (private, tagged) and t2 (marked for removal)
//	entities e1 Alice and e2 Cairn; entity observation k1; edge g1 (e1 → e2)
func seedKinds(t *testing.T, s memory.Store) map[kindID]string {
	t.Helper()
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 1, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	add(t, s, obs("o1", "first observation", 10, s1), obs("o2", "second observation", 11, s1), obs("o3", "the secret is hunter2", 12, s1))
	if _, err := s.PutSummary(ctx, memory.Summary{ID: "m1", CapsuleID: "c1", Content: "capsule summary", Confidence: 0.5, CreatedAt: 20}); err != nil {
		t.Fatal(err)
	}
	t1 := memory.Thought{ID: "t1", Content: "thought one", Origin: memory.OriginHuman, Tags: []string{"alpha", "beta"}, IsPrivate: true,
		Status: memory.StatusActive, Significance: 0.7, CreatedAt: 30, Scope: s2}
	t2 := memory.Thought{ID: "t2", Content: "thought two", Origin: memory.OriginTool, Status: memory.StatusRemoval,
		Significance: 0.1, CreatedAt: 31, Scope: s3}
	addThoughts(t, s, t1, t2)
	e1 := memory.KGEntity{ID: "e1", Name: "Alice", Type: "person", Data: memory.RawObject(`{"role":"dev"}`), CreatedAt: 35, UpdatedAt: 36, Scope: s1}
	putEntities(t, s, e1, entity("e2", "Cairn", "project", s2))
	if _, err := s.AddKGObservation(ctx, memory.KGObservation{ID: "k1", EntityID: "e1", Content: "writes Go", CreatedAt: 40, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddEdge(ctx, memory.KGEdge{ID: "g1", Source: "e1", Target: "e2", Relation: "works_on", CreatedAt: 50, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	return map[kindID]string{
		{memory.VectorObservation, "o1"}:   "first observation",
		{memory.VectorObservation, "o2"}:   "second observation",
		{memory.VectorObservation, "o3"}:   "the secret is hunter2",
		{memory.VectorSummary, "m1"}:       "capsule summary",
		{memory.VectorThought, "t1"}:       "thought one",
		{memory.VectorThought, "t2"}:       "thought two",
		{memory.VectorKGEntity, "e1"}:      `Alice (person): {"role":"dev"}`,
		{memory.VectorKGEntity, "e2"}:      "Cairn (project)",
		{memory.VectorKGObservation, "k1"}: "Alice: writes Go",
		{memory.VectorKGEdge, "g1"}:        "Alice works_on Cairn",
	}
}

func vec(sp memory.Space, seed float32) []float32 {
	v := make([]float32, sp.Dim)
	for i := range v {
		v[i] = seed + float32(i)/10
	}
	return v
}

func emb(kind memory.VectorKind, id string, sp memory.Space, seed float32) memory.Embedding {
	return memory.Embedding{Kind: kind, ID: id, Space: sp, Vector: vec(sp, seed)}
}

func putVectors(t *testing.T, s memory.Store, es ...memory.Embedding) {
	t.Helper()
	if err := s.PutEmbeddings(ctx, es); err != nil {
		t.Fatalf("PutEmbeddings: %v", err)
	}
}

func wantStats(t *testing.T, s memory.Store, sp memory.Space, want memory.VectorStats) {
	t.Helper()
	got, err := s.VectorStats(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("VectorStats(%s) = %+v; want %+v", sp, got, want)
	}
}

// afterKey is the PendingEmbeddings cursor after job j.
func afterKey(j memory.EmbedJob) string { return string(j.Kind) + "\x00" + j.ID }

func pending(t *testing.T, s memory.Store, sp memory.Space, after string, limit int) []memory.EmbedJob {
	t.Helper()
	jobs, err := s.PendingEmbeddings(ctx, sp, after, limit)
	if err != nil {
		t.Fatalf("PendingEmbeddings: %v", err)
	}
	return jobs
}

func jobKeys(jobs []memory.EmbedJob) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, kindID{j.Kind, j.ID}.String())
	}
	return out
}

func sortedKeys(m map[kindID]string, skip ...string) []string {
	var out []string
	for k := range m {
		if !slices.Contains(skip, k.String()) {
			out = append(out, k.String())
		}
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func testVectorStats(t *testing.T, s memory.Store) {
	texts := seedKinds(t, s)
	n := len(texts)
	wantStats(t, s, spA, memory.VectorStats{Pending: n})
	putVectors(t, s,
		emb(memory.VectorObservation, "o1", spA, 1), emb(memory.VectorThought, "t1", spA, 2), emb(memory.VectorKGEntity, "e1", spA, 3),
		emb(memory.VectorObservation, "o2", spProv, 4), emb(memory.VectorSummary, "m1", spModel, 5),
		emb(memory.VectorKGObservation, "k1", spDim, 6), emb(memory.VectorThought, "t1", spDim, 7),
	)
	wantStats(t, s, spA, memory.VectorStats{InSpace: 3, Pending: n - 3, OtherSpaces: 4})
	wantStats(t, s, spDim, memory.VectorStats{InSpace: 2, Pending: n - 2, OtherSpaces: 5})
	wantStats(t, s, spProv, memory.VectorStats{InSpace: 1, Pending: n - 1, OtherSpaces: 6})

	// Replacing a vector in its space counts once.
	putVectors(t, s, emb(memory.VectorThought, "t1", spA, 9), emb(memory.VectorThought, "t1", spA, 8))
	wantStats(t, s, spA, memory.VectorStats{InSpace: 3, Pending: n - 3, OtherSpaces: 4})

	// Vectors for records that do not exist are dropped, not stored: an
	// unknown id, and an id of another kind.
	putVectors(t, s, emb(memory.VectorThought, "ghost", spA, 1), emb(memory.VectorKGEdge, "t2", spA, 1),
		emb(memory.VectorSummary, "o2", spA, 1))
	wantStats(t, s, spA, memory.VectorStats{InSpace: 3, Pending: n - 3, OtherSpaces: 4})

	// Forgetting an observation drops its vectors; it is no longer pending
	// either, and a late vector for it is dropped.
	if _, err := s.Redact(ctx, "o1"); err != nil {
		t.Fatal(err)
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 2, Pending: n - 1 - 2, OtherSpaces: 4})
	putVectors(t, s, emb(memory.VectorObservation, "o1", spA, 1), emb(memory.VectorObservation, "o1", spDim, 1))
	wantStats(t, s, spA, memory.VectorStats{InSpace: 2, Pending: n - 1 - 2, OtherSpaces: 4})

	// Dropping keeps the named space only.
	dropped, err := s.DropEmbeddings(ctx, spA)
	if err != nil {
		t.Fatal(err)
	}
	if dropped != 4 {
		t.Fatalf("DropEmbeddings dropped %d vectors; want the 4 of other spaces", dropped)
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 2, Pending: n - 1 - 2})
	wantStats(t, s, spDim, memory.VectorStats{Pending: n - 1, OtherSpaces: 2})
	if dropped, err = s.DropEmbeddings(ctx, spA); err != nil || dropped != 0 {
		t.Fatalf("second drop: %d %v; want 0", dropped, err)
	}
	var got []float32
	err = s.Snapshot(ctx, func(r memory.Reader) error {
		_, err := r.LoadIndex(ctx, spA, func(rec memory.IndexRecord) error {
			if rec.Kind == memory.VectorThought && rec.ID == "t1" {
				got = rec.Vector
			}
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, vec(spA, 8)) {
		t.Fatalf("t1's vector after replacing and dropping others: %v; want the last written %v", got, vec(spA, 8))
	}
}

func testVectorBadInput(t *testing.T, s memory.Store) {
	texts := seedKinds(t, s)
	putVectors(t, s, emb(memory.VectorThought, "t1", spA, 1))
	wantStats(t, s, spA, memory.VectorStats{InSpace: 1, Pending: len(texts) - 1})
	before := lastSeq(t, s)
	good := emb(memory.VectorThought, "t2", spA, 2)
	nan, inf, negInf := vec(spA, 1), vec(spA, 1), vec(spA, 1)
	nan[1] = float32(math.NaN())
	inf[0] = float32(math.Inf(1))
	negInf[2] = float32(math.Inf(-1))
	for _, tc := range []struct {
		name string
		bad  memory.Embedding
	}{
		{"too few dimensions", memory.Embedding{Kind: memory.VectorThought, ID: "t1", Space: spA, Vector: []float32{1, 2}}},
		{"too many dimensions", memory.Embedding{Kind: memory.VectorThought, ID: "t1", Space: spA, Vector: vec(spDim, 1)}},
		{"no vector", memory.Embedding{Kind: memory.VectorThought, ID: "t1", Space: spA}},
		{"zero-dimension space", memory.Embedding{Kind: memory.VectorThought, ID: "t1", Space: memory.Space{Provider: "hash", Model: "m"}, Vector: []float32{}}},
		{"negative dimension", memory.Embedding{Kind: memory.VectorThought, ID: "t1", Space: memory.Space{Provider: "hash", Model: "m", Dim: -1}}},
		{"unknown kind", memory.Embedding{Kind: "widget", ID: "t1", Space: spA, Vector: vec(spA, 1)}},
		{"NaN", memory.Embedding{Kind: memory.VectorThought, ID: "t1", Space: spA, Vector: nan}},
		{"+Inf", memory.Embedding{Kind: memory.VectorThought, ID: "t1", Space: spA, Vector: inf}},
		{"-Inf", memory.Embedding{Kind: memory.VectorThought, ID: "t1", Space: spA, Vector: negInf}},
	} {
		// The bad vector comes after a good one: the batch is all or nothing.
		err := s.PutEmbeddings(ctx, []memory.Embedding{good, tc.bad})
		if memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: PutEmbeddings error %v; want invalid_params", tc.name, err)
		}
		if n, err := s.FillEmbeddings(ctx, []memory.Embedding{good, tc.bad}); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: FillEmbeddings stored %d, error %v; want invalid_params", tc.name, n, err)
		}
		// Alone, on a record that does not exist, it is still refused.
		tc.bad.ID = "ghost"
		if err := s.PutEmbeddings(ctx, []memory.Embedding{tc.bad}); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s for a missing record: PutEmbeddings error %v; want invalid_params", tc.name, err)
		}
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 1, Pending: len(texts) - 1})
	if after := lastSeq(t, s); after != before {
		t.Fatalf("refused vectors logged changes: seq %d → %d", before, after)
	}
	var t1 []float32
	err := s.Snapshot(ctx, func(r memory.Reader) error {
		_, err := r.LoadIndex(ctx, spA, func(rec memory.IndexRecord) error {
			if rec.ID == "t1" && rec.Kind == memory.VectorThought {
				t1 = rec.Vector
			}
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(t1, vec(spA, 1)) {
		t.Fatalf("t1's vector after refused writes: %v", t1)
	}
	// The caller's slice is copied, not kept.
	v := vec(spA, 5)
	putVectors(t, s, memory.Embedding{Kind: memory.VectorThought, ID: "t2", Space: spA, Vector: v})
	v[0] = 42
	err = s.Snapshot(ctx, func(r memory.Reader) error {
		_, err := r.LoadIndex(ctx, spA, func(rec memory.IndexRecord) error {
			if rec.ID == "t2" && rec.Kind == memory.VectorThought && !slices.Equal(rec.Vector, vec(spA, 5)) {
				t.Errorf("t2's vector %v; want %v", rec.Vector, vec(spA, 5))
				return nil
			}
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testPendingEmbeddings(t *testing.T, s memory.Store) {
	texts := seedKinds(t, s)
	all := pending(t, s, spA, "", 1000)
	if got, want := sorted(jobKeys(all)), sortedKeys(texts); !slices.Equal(got, want) {
		t.Fatalf("pending records %v; want every record %v", got, want)
	}
	for _, j := range all {
		if want := texts[kindID{j.Kind, j.ID}]; j.Content != want {
			t.Errorf("pending %s has text %q; want %q", kindID{j.Kind, j.ID}, j.Content, want)
		}
	}
	if again := pending(t, s, spA, "", 1000); !slices.Equal(jobKeys(again), jobKeys(all)) {
		t.Fatalf("pending order is not stable: %v then %v", jobKeys(all), jobKeys(again))
	}
	// Paging with the cursor visits every record once, in the same order.
	for _, limit := range []int{1, 2, 3, 7} {
		var paged []memory.EmbedJob
		after := ""
		for range 100 {
			page := pending(t, s, spA, after, limit)
			if len(page) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page))
			}
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			after = afterKey(page[len(page)-1])
		}
		if !slices.Equal(jobKeys(paged), jobKeys(all)) {
			t.Fatalf("limit %d: paged %v; want %v", limit, jobKeys(paged), jobKeys(all))
		}
	}
	if got := pending(t, s, spA, afterKey(all[len(all)-1]), 10); len(got) != 0 {
		t.Fatalf("pending after the last record: %v", jobKeys(got))
	}

	// A record with vectors only in other spaces (another provider, model
	// or dimension) is pending in the active space; one with a vector there
	// is not.
	putVectors(t, s,
		emb(memory.VectorObservation, "o1", spProv, 1), emb(memory.VectorObservation, "o1", spModel, 1), emb(memory.VectorObservation, "o1", spDim, 1),
		emb(memory.VectorObservation, "o2", spA, 1), emb(memory.VectorThought, "t1", spA, 1), emb(memory.VectorKGEdge, "g1", spA, 1),
	)
	want := sortedKeys(texts, "observation/o2", "thought/t1", "kg_edge/g1")
	if got := sorted(jobKeys(pending(t, s, spA, "", 1000))); !slices.Equal(got, want) {
		t.Fatalf("pending in the active space %v; want %v", got, want)
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 3, Pending: len(texts) - 3, OtherSpaces: 3})
	if got := sorted(jobKeys(pending(t, s, spDim, "", 1000))); !slices.Equal(got, sortedKeys(texts, "observation/o1")) {
		t.Fatalf("pending in %s: %v", spDim, got)
	}

	// Forgotten and deleted records are not pending.
	if _, err := s.Redact(ctx, "o3"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteEntity(ctx, "e2"); err != nil { // and its edge g1
		t.Fatal(err)
	}
	want = sortedKeys(texts, "observation/o2", "thought/t1", "kg_edge/g1", "observation/o3", "kg_entity/e2")
	rest := pending(t, s, spA, "", 1000)
	if got := sorted(jobKeys(rest)); !slices.Equal(got, want) {
		t.Fatalf("pending after forget and delete %v; want %v", got, want)
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 2, Pending: len(want), OtherSpaces: 3})

	// Embedding every pending record empties the queue.
	var es []memory.Embedding
	for i, j := range rest {
		es = append(es, emb(j.Kind, j.ID, spA, float32(i)))
	}
	putVectors(t, s, es...)
	if got := pending(t, s, spA, "", 1000); len(got) != 0 {
		t.Fatalf("pending after embedding everything: %v", jobKeys(got))
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 2 + len(rest), OtherSpaces: 3})
}

// A record's vector is of its text: rewriting the text leaves the record
// pending, and records whose text quotes an entity's name change with it.
// FillEmbeddings stores a vector once, for a record that still waits for
// it with the text it was computed from; it never replaces one.
func testFillEmbeddings(t *testing.T, s memory.Store) {
	texts := seedKinds(t, s)
	putVectors(t, s, emb(memory.VectorThought, "t1", spA, 1))
	fill := func(es ...memory.Embedding) int {
		t.Helper()
		n, err := s.FillEmbeddings(ctx, es)
		if err != nil {
			t.Fatalf("FillEmbeddings: %v", err)
		}
		return n
	}
	withText := func(e memory.Embedding, text string) memory.Embedding { e.Text = text; return e }
	seq := lastSeq(t, s)
	n := fill(
		emb(memory.VectorThought, "t1", spA, 9),                                        // has one: kept
		withText(emb(memory.VectorThought, "t2", spA, 2), "thought two"),               // pending, same text: stored
		withText(emb(memory.VectorObservation, "o1", spA, 3), "an older text"),         // rewritten meanwhile: skipped
		emb(memory.VectorObservation, "ghost", spA, 4),                                 // no such record: skipped
		withText(emb(memory.VectorKGObservation, "k1", spA, 5), "Alice: writes Go"),    // stored
		withText(emb(memory.VectorKGObservation, "k1", spA, 6), "Alice: writes Go"),    // twice in one call: once
		withText(emb(memory.VectorKGObservation, "k1", spProv, 7), "Alice: writes Go"), // another space: stored
	)
	if n != 3 {
		t.Fatalf("FillEmbeddings stored %d vectors; want 3", n)
	}
	recs, _, _ := loadIndex(t, s, spA)
	for k, want := range map[string]float32{"thought/t1": 1, "thought/t2": 2, "kg_observation/k1": 5} {
		if got := recs[k].Vector; len(got) == 0 || got[0] != want {
			t.Errorf("%s has vector %v; want the one of seed %v", k, got, want)
		}
	}
	if v := recs["observation/o1"].Vector; v != nil {
		t.Errorf("a vector of another text was stored for o1: %v", v)
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 3, Pending: len(texts) - 3, OtherSpaces: 1})
	if got := lastSeq(t, s) - seq; got != 3 {
		t.Errorf("filling 3 vectors logged %d changes", got)
	}
	// Filling again (a second process with the same work) writes nothing.
	seq = lastSeq(t, s)
	if n := fill(withText(emb(memory.VectorThought, "t2", spA, 8), "thought two"), emb(memory.VectorKGObservation, "k1", spA, 8)); n != 0 {
		t.Fatalf("filling filled records stored %d", n)
	}
	if after := lastSeq(t, s); after != seq {
		t.Errorf("filling filled records logged changes: seq %d → %d", seq, after)
	}
	if n := fill(); n != 0 {
		t.Fatalf("filling nothing stored %d", n)
	}
}

func testRewriteMakesPending(t *testing.T, s memory.Store) {
	texts := seedKinds(t, s)
	var es []memory.Embedding
	for k := range texts {
		es = append(es, emb(k.kind, k.id, spA, 1))
	}
	putVectors(t, s, es...)
	wantStats(t, s, spA, memory.VectorStats{InSpace: len(texts)})
	seq := lastSeq(t, s)

	// Updating an entity with the same name, type and data keeps vectors.
	e2, err := s.Entity(ctx, "e2")
	if err != nil {
		t.Fatal(err)
	}
	e2.UpdatedAt = 99
	putEntities(t, s, e2)
	if got := pending(t, s, spA, "", 100); len(got) != 0 {
		t.Fatalf("an update that changes no text left %v pending", jobKeys(got))
	}
	// Status changes do not touch a thought's text either.
	if _, err := s.SetThoughtStatus(ctx, []string{"t1"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}
	if got := pending(t, s, spA, "", 100); len(got) != 0 {
		t.Fatalf("a status change left %v pending", jobKeys(got))
	}

	// Renaming Alice rewrites her text, her observation's and her edge's.
	e1, err := s.Entity(ctx, "e1")
	if err != nil {
		t.Fatal(err)
	}
	e1.Name, e1.UpdatedAt = "Alicia", 100
	putEntities(t, s, e1)
	want := map[string]string{
		"kg_entity/e1":      `Alicia (person): {"role":"dev"}`,
		"kg_observation/k1": "Alicia: writes Go",
		"kg_edge/g1":        "Alicia works_on Cairn",
	}
	got := map[string]string{}
	for _, j := range pending(t, s, spA, "", 100) {
		got[kindID{j.Kind, j.ID}.String()] = j.Content
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pending after a rename: %v; want %v", got, want)
	}
	// Changing only the type or the data rewrites the entity alone.
	putVectors(t, s, emb(memory.VectorKGEntity, "e1", spA, 1), emb(memory.VectorKGObservation, "k1", spA, 1), emb(memory.VectorKGEdge, "g1", spA, 1))
	e1.Data = memory.RawObject(`{"role":"lead"}`)
	putEntities(t, s, e1)
	if got := jobKeys(pending(t, s, spA, "", 100)); !slices.Equal(got, []string{"kg_entity/e1"}) {
		t.Fatalf("pending after a data change: %v; want [kg_entity/e1]", got)
	}

	// In-memory indexes hear of every record whose text changed.
	var changed []string
	err = s.Snapshot(ctx, func(r memory.Reader) error {
		recs, _, err := r.ChangesSince(ctx, spA, seq, 0)
		for _, rec := range recs {
			changed = append(changed, kindID{rec.Kind, rec.ID}.String()+"="+rec.Content)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`kg_entity/e1=Alicia (person): {"role":"lead"}`, "kg_observation/k1=Alicia: writes Go", "kg_edge/g1=Alicia works_on Cairn"} {
		if !slices.Contains(changed, w) {
			t.Errorf("changes since the rename %v; want %s among them", changed, w)
		}
	}
}

func loadIndex(t *testing.T, s memory.Store, sp memory.Space) (map[string]memory.IndexRecord, []string, int64) {
	t.Helper()
	recs := map[string]memory.IndexRecord{}
	var order []string
	var last int64
	err := s.Snapshot(ctx, func(r memory.Reader) error {
		var err error
		last, err = r.LoadIndex(ctx, sp, func(rec memory.IndexRecord) error {
			k := kindID{rec.Kind, rec.ID}.String()
			if _, dup := recs[k]; dup {
				t.Errorf("LoadIndex gave %s twice", k)
				return nil
			}
			recs[k] = rec
			order = append(order, k)
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, order, last
}

func testLoadIndex(t *testing.T, s memory.Store) {
	texts := seedKinds(t, s)
	putVectors(t, s,
		emb(memory.VectorObservation, "o1", spA, 1), emb(memory.VectorThought, "t1", spA, 2), emb(memory.VectorKGObservation, "k1", spA, 3),
		emb(memory.VectorThought, "t1", spDim, 4), emb(memory.VectorKGEntity, "e1", spProv, 5), emb(memory.VectorSummary, "m1", spModel, 6),
		emb(memory.VectorObservation, "o3", spA, 7),
	)
	if _, err := s.Redact(ctx, "o3"); err != nil {
		t.Fatal(err)
	}
	recs, order, last := loadIndex(t, s, spA)
	if last <= 0 {
		t.Fatalf("LoadIndex reflects change %d after writes", last)
	}
	if got, want := sorted(order), sortedKeys(texts, "observation/o3"); !slices.Equal(got, want) {
		t.Fatalf("LoadIndex gave %v; want every searchable record %v (not the forgotten o3)", got, want)
	}
	withVector := map[string][]float32{"observation/o1": vec(spA, 1), "thought/t1": vec(spA, 2), "kg_observation/k1": vec(spA, 3)}
	ts := map[string]int64{"observation/o1": 10, "observation/o2": 11, "summary/m1": 20, "thought/t1": 30, "thought/t2": 31,
		"kg_entity/e1": 36, "kg_entity/e2": 1, "kg_observation/k1": 40, "kg_edge/g1": 50}
	for k, rec := range recs {
		kind := memory.VectorKind(strings.Split(k, "/")[0])
		if rec.Content != texts[kindID{kind, rec.ID}] {
			t.Errorf("%s content %q; want %q", k, rec.Content, texts[kindID{kind, rec.ID}])
		}
		if rec.Type != memory.TargetType(kind) || rec.Gone {
			t.Errorf("%s: type %q gone %v", k, rec.Type, rec.Gone)
		}
		if !slices.Equal(rec.Vector, withVector[k]) || (rec.Vector == nil) != (withVector[k] == nil) {
			t.Errorf("%s vector %v; want %v (only vectors of %s)", k, rec.Vector, withVector[k], spA)
		}
		if rec.TS != ts[k] {
			t.Errorf("%s ts %d; want %d", k, rec.TS, ts[k])
		}
		if kind != memory.VectorObservation && (rec.CapsuleID != "" || rec.Position != -1) {
			t.Errorf("%s placed in capsule %q at %d; only observations have a place", k, rec.CapsuleID, rec.Position)
		}
	}
	for id, pos := range map[string]int{"o1": 0, "o2": 1} {
		if rec := recs["observation/"+id]; rec.CapsuleID != "c1" || rec.Position != pos || rec.Scope != s1 {
			t.Errorf("%s: capsule %q position %d scope %+v; want c1, %d, %+v", id, rec.CapsuleID, rec.Position, rec.Scope, pos, s1)
		}
	}
	t1, t2 := recs["thought/t1"], recs["thought/t2"]
	if t1.Origin != memory.OriginHuman || !slices.Equal(t1.Tags, []string{"alpha", "beta"}) || !t1.Private || t1.Status != memory.StatusActive || t1.Scope != s2 {
		t.Errorf("thought t1 indexed as %+v", t1)
	}
	if t2.Origin != memory.OriginTool || len(t2.Tags) != 0 || t2.Private || t2.Status != memory.StatusRemoval || t2.Scope != s3 {
		t.Errorf("thought t2 indexed as %+v", t2)
	}
	if recs["summary/m1"].Scope != s1 || recs["kg_entity/e2"].Scope != s2 || recs["kg_edge/g1"].Scope != s1 {
		t.Errorf("scopes: summary %+v entity %+v edge %+v", recs["summary/m1"].Scope, recs["kg_entity/e2"].Scope, recs["kg_edge/g1"].Scope)
	}

	// Each space sees its own vectors only.
	for sp, want := range map[memory.Space]map[string][]float32{
		spDim:   {"thought/t1": vec(spDim, 4)},
		spProv:  {"kg_entity/e1": vec(spProv, 5)},
		spModel: {"summary/m1": vec(spModel, 6)},
		{}:      {},
	} {
		recs, _, _ := loadIndex(t, s, sp)
		for k, rec := range recs {
			if !slices.Equal(rec.Vector, want[k]) || (rec.Vector == nil) != (want[k] == nil) {
				t.Errorf("LoadIndex(%s): %s vector %v; want %v", sp, k, rec.Vector, want[k])
			}
		}
	}

	// The load's sequence number is where changes start: nothing since.
	err := s.Snapshot(ctx, func(r memory.Reader) error {
		recs, seq, err := r.ChangesSince(ctx, spA, last, 0)
		if err != nil {
			return err
		}
		if len(recs) != 0 || seq != last {
			t.Errorf("ChangesSince(load's %d) = %d records, seq %d; want none, %d", last, len(recs), seq, last)
			return nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func changesSince(t *testing.T, s memory.Store, sp memory.Space, since int64) (map[string]memory.IndexRecord, []string, int64) {
	t.Helper()
	out := map[string]memory.IndexRecord{}
	var keys []string
	var last int64
	err := s.Snapshot(ctx, func(r memory.Reader) error {
		recs, seq, err := r.ChangesSince(ctx, sp, since, 0)
		for _, rec := range recs {
			k := kindID{rec.Kind, rec.ID}.String()
			if _, dup := out[k]; dup {
				t.Errorf("ChangesSince gave %s twice", k)
				return nil
			}
			out[k] = rec
			keys = append(keys, k)
		}
		last = seq
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, sorted(keys), last
}

func testChangesSince(t *testing.T, s memory.Store) {
	seedKinds(t, s)
	seq0 := lastSeq(t, s)

	addThoughts(t, s, thought("t3", "a new thought", 60, s1))
	putVectors(t, s, emb(memory.VectorThought, "t1", spA, 1), emb(memory.VectorSummary, "m1", spDim, 2))
	if _, err := s.SetThoughtStatus(ctx, []string{"t2"}, memory.StatusActive); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Redact(ctx, "o1"); err != nil {
		t.Fatal(err)
	}
	e2, _ := s.Entity(ctx, "e2")
	e2.Type, e2.UpdatedAt = "library", 70
	putEntities(t, s, e2)
	if err := s.DeleteEntity(ctx, "e1"); err != nil { // with k1 and g1
		t.Fatal(err)
	}
	add(t, s, obs("o4", "a fourth observation", 80, s1))
	// The same record changed twice is reported once.
	addThoughts(t, s, thought("t4", "short-lived", 81, s1))
	if _, err := s.SetThoughtStatus(ctx, []string{"t4"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}

	recs, keys, seq1 := changesSince(t, s, spA, seq0)
	want := []string{"kg_edge/g1", "kg_entity/e1", "kg_entity/e2", "kg_observation/k1", "observation/o1", "observation/o4",
		"summary/m1", "thought/t1", "thought/t2", "thought/t3", "thought/t4"}
	if !slices.Equal(keys, want) {
		t.Fatalf("ChangesSince = %v; want %v", keys, want)
	}
	if seq1 <= seq0 || seq1 != lastSeq(t, s) {
		t.Fatalf("ChangesSince's seq %d; want the newest change (%d), after %d", seq1, lastSeq(t, s), seq0)
	}
	for _, k := range []string{"kg_edge/g1", "kg_entity/e1", "kg_observation/k1", "observation/o1"} {
		if rec := recs[k]; !rec.Gone || rec.Content != "" || rec.Vector != nil || rec.ID != strings.Split(k, "/")[1] {
			t.Errorf("%s: %+v; want it gone, without text", k, rec)
		}
	}
	for k, content := range map[string]string{
		"thought/t3": "a new thought", "thought/t1": "thought one", "kg_entity/e2": "Cairn (library)",
		"observation/o4": "a fourth observation", "summary/m1": "capsule summary",
	} {
		if rec := recs[k]; rec.Gone || rec.Content != content {
			t.Errorf("%s: gone %v content %q; want %q", k, rec.Gone, rec.Content, content)
		}
	}
	if rec := recs["thought/t1"]; !slices.Equal(rec.Vector, vec(spA, 1)) || !rec.Private || rec.Origin != memory.OriginHuman {
		t.Errorf("t1 changed to %+v; want its new vector in %s", rec, spA)
	}
	if rec := recs["summary/m1"]; rec.Vector != nil {
		t.Errorf("m1 has a vector %v in %s; it has one only in %s", rec.Vector, spA, spDim)
	}
	if rec := recs["thought/t2"]; rec.Status != memory.StatusActive {
		t.Errorf("t2 status %q; want active", rec.Status)
	}
	if rec := recs["thought/t4"]; rec.Status != memory.StatusRemoval {
		t.Errorf("t4 status %q; want its current status, removal", rec.Status)
	}
	if rec := recs["observation/o4"]; rec.CapsuleID != "c1" || rec.Position != 3 {
		t.Errorf("o4 placed in %q at %d; want c1 at 3", rec.CapsuleID, rec.Position)
	}
	// Read a page of two changes at a time, the same records come, in
	// pages that end at the change they say, the last at the newest.
	paged := map[string]bool{}
	for since := seq0; since != seq1; {
		err := s.Snapshot(ctx, func(r memory.Reader) error {
			page, upto, err := r.ChangesSince(ctx, spA, since, 2)
			if err != nil {
				return err
			}
			if upto <= since || upto > seq1 || len(page) > 2 {
				t.Fatalf("ChangesSince(%d, limit 2) = %d records up to change %d; want at most 2, after %d and at most %d", since, len(page), upto, since, seq1)
			}
			for _, rec := range page {
				paged[kindID{rec.Kind, rec.ID}.String()] = true
			}
			since = upto
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := sorted(slices.Collect(maps.Keys(paged))); !slices.Equal(got, want) {
		t.Fatalf("ChangesSince a page at a time = %v; want %v", got, want)
	}
	// Vectors come in the space asked for.
	recs, _, _ = changesSince(t, s, spDim, seq0)
	if rec := recs["summary/m1"]; !slices.Equal(rec.Vector, vec(spDim, 2)) {
		t.Errorf("m1 in %s: vector %v", spDim, rec.Vector)
	}
	if rec := recs["thought/t1"]; rec.Vector != nil {
		t.Errorf("t1 in %s: vector %v; it has none there", spDim, rec.Vector)
	}

	// Nothing since the newest change; then exactly what follows it.
	if recs, keys, seq := changesSince(t, s, spA, seq1); len(recs) != 0 || seq != seq1 {
		t.Fatalf("ChangesSince(newest) = %v, %d; want nothing, %d", keys, seq, seq1)
	}
	if _, err := s.Redact(ctx, "o2"); err != nil {
		t.Fatal(err)
	}
	recs, keys, seq2 := changesSince(t, s, spA, seq1)
	if !slices.Equal(keys, []string{"observation/o2"}) || !recs["observation/o2"].Gone || seq2 <= seq1 {
		t.Fatalf("after one more forget: %v (seq %d after %d)", keys, seq2, seq1)
	}
	// A refused write logs nothing.
	if _, err := s.AddThought(ctx, thought("t3", "taken id", 1, s1)); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("duplicate thought: %v", err)
	}
	if err := s.DeleteEntity(ctx, "e1"); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("deleting a deleted entity: %v", err)
	}
	if _, keys, seq := changesSince(t, s, spA, seq2); len(keys) != 0 || seq != seq2 {
		t.Fatalf("refused writes logged %v (seq %d)", keys, seq)
	}
}

func testRecords(t *testing.T, s memory.Store) {
	texts := seedKinds(t, s)
	putVectors(t, s, emb(memory.VectorThought, "t1", spA, 1), emb(memory.VectorObservation, "o1", spA, 1))
	if _, err := s.Redact(ctx, "o3"); err != nil {
		t.Fatal(err)
	}
	type ask struct {
		kind memory.VectorKind
		ids  []string
		gone []bool
	}
	for _, a := range []ask{
		{memory.VectorThought, []string{"t2", "ghost", "t1"}, []bool{false, true, false}},
		{memory.VectorObservation, []string{"o3", "o1", "o1"}, []bool{true, false, false}},
		{memory.VectorSummary, []string{"m1", "o1"}, []bool{false, true}}, // an observation's id is no summary
		{memory.VectorKGEntity, []string{"e2", "e1", "g1"}, []bool{false, false, true}},
		{memory.VectorKGObservation, []string{"k1"}, []bool{false}},
		{memory.VectorKGEdge, []string{"g1", "e1"}, []bool{false, true}},
		{memory.VectorThought, nil, nil},
	} {
		var got []memory.IndexRecord
		err := s.Snapshot(ctx, func(r memory.Reader) error {
			var err error
			got, err = r.Records(ctx, a.kind, a.ids)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(a.ids) {
			t.Fatalf("Records(%s, %v) gave %d records", a.kind, a.ids, len(got))
		}
		for i, rec := range got {
			k := kindID{a.kind, a.ids[i]}
			if rec.ID != a.ids[i] || rec.Kind != a.kind || rec.Gone != a.gone[i] || rec.Vector != nil {
				t.Errorf("Records(%s, %v)[%d] = %+v; want %s, gone %v, no vector", a.kind, a.ids, i, rec, k, a.gone[i])
				continue
			}
			want := texts[k]
			if rec.Gone {
				want = ""
			}
			if rec.Content != want {
				t.Errorf("%s content %q; want %q", k, rec.Content, want)
			}
		}
	}
	// Records carry the attributes retrieval filters by.
	err := s.Snapshot(ctx, func(r memory.Reader) error {
		recs, err := r.Records(ctx, memory.VectorThought, []string{"t1"})
		if err != nil {
			return err
		}
		if t1 := recs[0]; t1.Origin != memory.OriginHuman || !t1.Private || !slices.Equal(t1.Tags, []string{"alpha", "beta"}) ||
			t1.Status != memory.StatusActive || t1.Scope != s2 || t1.TS != 30 {
			t.Errorf("thought t1 read as %+v", t1)
			return nil
		}
		recs, err = r.Records(ctx, memory.VectorObservation, []string{"o1"})
		if err != nil {
			return err
		}
		if o1 := recs[0]; o1.CapsuleID != "c1" || o1.Position != 0 || o1.Scope != s1 || o1.TS != 10 || o1.Body != "" {
			t.Errorf("observation o1 read as %+v", o1)
			return nil
		}
		// A fact's searched text names its entity; its body is the
		// statement alone.
		recs, err = r.Records(ctx, memory.VectorKGObservation, []string{"k1"})
		if err != nil {
			return err
		}
		if k1 := recs[0]; k1.Content != "Alice: writes Go" || k1.Body != "writes Go" {
			t.Errorf("fact k1 read as %+v", k1)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A snapshot sees the store as it was when Snapshot began, whatever is
// written meanwhile, even before its first read.
func testSnapshotIsolation(t *testing.T, s memory.Store) {
	seedKinds(t, s)
	before := lastSeq(t, s)
	err := s.Snapshot(ctx, func(r memory.Reader) error {
		addThoughts(t, s, thought("during1", "written before the first read", 90, s1))
		recs := map[string]bool{}
		last, err := r.LoadIndex(ctx, spA, func(rec memory.IndexRecord) error {
			recs[kindID{rec.Kind, rec.ID}.String()] = true
			return nil
		})
		if err != nil {
			return err
		}
		if recs["thought/during1"] || last != before {
			t.Errorf("the snapshot saw a write made after it began but before its first read (seq %d; began at %d)", last, before)
		}
		addThoughts(t, s, thought("during2", "written after the first read", 91, s1))
		got, err := r.Records(ctx, memory.VectorThought, []string{"during2"})
		if err != nil {
			return err
		}
		if !got[0].Gone {
			t.Errorf("the snapshot's Records saw a later write: %+v", got[0])
		}
		changes, seq, err := r.ChangesSince(ctx, spA, last, 0)
		if err != nil {
			return err
		}
		if len(changes) != 0 || seq != last {
			t.Errorf("the snapshot's ChangesSince(%d) saw %d later changes (seq %d)", last, len(changes), seq)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	recs, _, _ := loadIndex(t, s, spA)
	for _, id := range []string{"during1", "during2"} {
		if _, ok := recs["thought/"+id]; !ok {
			t.Fatalf("a new snapshot does not see %s", id)
		}
	}
}
