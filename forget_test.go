package cairn_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
	"github.com/cairnhq/cairn/synth"
)

// segmentsHolding lists the index's segment files that hold needle (the
// manifest names the last change's record id, not its text, so ids are
// looked for in segments).
func segmentsHolding(t *testing.T, dir, needle string) []string {
	t.Helper()
	var out []string
	for _, f := range filesHolding(t, dir, needle) {
		if strings.HasSuffix(f, ".cseg") {
			out = append(out, f)
		}
	}
	return out
}

// wantErr fails unless err carries code.
func wantErr(t *testing.T, what string, err error, code memory.Code) {
	t.Helper()
	if memory.CodeOf(err) != code {
		t.Fatalf("%s: error %v; want %s", what, err, code)
	}
}

// snippetIDs are the ids an inner-voice retrieval returned.
func snippetIDs(res retrieve.InnerVoiceResult) []string {
	var out []string
	for _, s := range res.Snippets {
		out = append(out, s.ID)
	}
	return out
}

// TestForgetSummary: a forgotten summary leaves retrieval (every
// provider's candidates, the current summary, pins) and the index's
// files; forgetting it twice changes nothing; a new summary of the
// capsule takes its place.
func TestForgetSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	eng := openSampleAt(t, path, nil)
	const secret = "zqsummarysecret7"
	cap1, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{ScopeIDs: memory.Scope{SessionID: "s9", RepoID: repo}})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := eng.SetSummary(ctx, cairn.SummaryRequest{CapsuleID: cap1.ID, SummaryInput: cairn.SummaryInput{Content: "rotated the webhook secret " + secret}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Pin(ctx, cairn.PinRequest{TargetID: cur.ID}); err != nil {
		t.Fatal(err)
	}
	// The summary of a closed capsule: a candidate, not a current one.
	const secret2 = "zqclosedsecret7"
	cap2, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{ScopeIDs: memory.Scope{SessionID: "s8", RepoID: repo}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: cap2.ID, Summary: &cairn.SummaryInput{Content: "the webhook key " + secret2 + " leaked"}})
	if err != nil {
		t.Fatal(err)
	}
	closed := cl.Summary.ID
	if _, err := eng.OptimizeIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{secret, secret2} {
		if len(filesHolding(t, path+"-index", w)) == 0 {
			t.Fatalf("%q is in no index file before it is forgotten: the test would prove nothing", w)
		}
	}
	found := func() []string {
		var where []string
		for _, p := range []string{retrieve.HybridName, retrieve.LocalFTSName} {
			res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: secret + " " + secret2 + " webhook", Provider: p, ScopeIDs: memory.Scope{RepoID: repo}})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Candidates {
				if id := c.Entity.ID(); id == cur.ID || id == closed {
					where = append(where, p+" candidate "+id)
				}
			}
			for _, pin := range res.Pins {
				if pin.Target.ID() == cur.ID {
					where = append(where, p+" pin")
				}
			}
			res, err = eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "webhook", Provider: p, ScopeIDs: memory.Scope{SessionID: "s9"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.CurrentSummary != nil && res.CurrentSummary.ID == cur.ID {
				where = append(where, p+" current summary")
			}
		}
		return where
	}
	if got := found(); len(got) != 6 {
		t.Fatalf("before forgetting the summaries are found as %v; want a candidate, the pin and the current summary in both providers", got)
	}
	got, err := eng.ForgetSummary(ctx, cur.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Redacted || got.Content != memory.RedactedContent || got.ID != cur.ID || got.CapsuleID != cap1.ID {
		t.Fatalf("forgotten summary %+v", got)
	}
	if _, err := eng.ForgetSummary(ctx, closed); err != nil {
		t.Fatal(err)
	}
	if where := found(); len(where) > 0 {
		t.Fatalf("the forgotten summaries are still found as %v", where)
	}
	for _, w := range []string{secret, secret2} {
		if files := filesHolding(t, path+"-index", w); len(files) > 0 {
			t.Fatalf("forgotten %q is still in %v", w, files)
		}
	}
	before := export(t, eng)
	if strings.Contains(before, secret) || strings.Contains(before, secret2) {
		t.Fatal("the export holds a forgotten summary")
	}
	again, err := eng.ForgetSummary(ctx, cur.ID)
	if err != nil || again.Content != got.Content || !again.Redacted || again.ID != got.ID || !slices.Equal(again.EvidenceRefs, got.EvidenceRefs) {
		t.Fatalf("forgetting twice: %+v, %v", again, err)
	}
	_, err = eng.ForgetSummary(ctx, "sum_missing")
	wantErr(t, "unknown summary", err, memory.CodeNotFound)
	_, err = eng.ForgetSummary(ctx, " sum_1")
	wantErr(t, "bad id", err, memory.CodeInvalidParams)
	if after := export(t, eng); after != before {
		t.Fatal("forgetting twice, or an unknown or bad id, changed the database")
	}
	next, err := eng.SetSummary(ctx, cairn.SummaryRequest{CapsuleID: cap1.ID, SummaryInput: cairn.SummaryInput{Content: "the webhook secret was rotated"}})
	if err != nil || next.ID != cur.ID || next.Redacted {
		t.Fatalf("a new summary after forgetting: %+v, %v", next, err)
	}
	res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "webhook", ScopeIDs: memory.Scope{SessionID: "s9"}})
	if err != nil || res.CurrentSummary == nil || res.CurrentSummary.Content != next.Content {
		t.Fatalf("current summary after a new one: %+v, %v", res.CurrentSummary, err)
	}
}

// TestForgetThought: a forgotten thought leaves inner_voice_retrieve and
// the index's files (text and vector: its id is in no segment); marking
// one for removal hides it without erasing it.
func TestForgetThought(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	eng := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 256}, InnerVoice: voiceOn()})
	const secret = "zqthoughtsecret7"
	keep := think(t, eng, cairn.ThinkRequest{Content: "the staging database rotates monthly", Origin: memory.OriginHuman})
	th := think(t, eng, cairn.ThinkRequest{Content: "the staging database password is " + secret, Origin: memory.OriginHuman, Tags: []string{"ops"}})
	if _, err := eng.OptimizeIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
	if len(segmentsHolding(t, path+"-index", th.ID)) == 0 {
		t.Fatal("the thought is in no index file before it is forgotten: the test would prove nothing")
	}
	ids := func() []string {
		return snippetIDs(voice(t, eng, retrieve.InnerVoiceRequest{Query: "staging database password " + secret}))
	}
	if got := ids(); !slices.Contains(got, th.ID) || !slices.Contains(got, keep.ID) {
		t.Fatalf("before: %v", got)
	}

	// Marked for removal: not retrieved, still readable, and back when
	// marked active.
	marked, err := eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: th.ID, Status: memory.StatusRemoval})
	if err != nil || marked.Status != memory.StatusRemoval || marked.Content != th.Content {
		t.Fatalf("marked: %+v, %v", marked, err)
	}
	if got := ids(); slices.Contains(got, th.ID) {
		t.Fatalf("a thought marked for removal is retrieved: %v", got)
	}
	if _, err := eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: th.ID, Status: memory.StatusActive}); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Contains(got, th.ID) {
		t.Fatalf("a thought marked active again is not retrieved: %v", got)
	}
	for _, bad := range []cairn.MarkThoughtRequest{{ThoughtID: th.ID, Status: "gone"}, {ThoughtID: "", Status: memory.StatusRemoval}, {ThoughtID: th.ID}} {
		_, err := eng.MarkThought(ctx, bad)
		wantErr(t, "bad mark", err, memory.CodeInvalidParams)
	}
	_, err = eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: "th_missing", Status: memory.StatusRemoval})
	wantErr(t, "unknown thought", err, memory.CodeNotFound)

	got, err := eng.ForgetThought(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Redacted || got.Content != memory.RedactedContent || len(got.Tags) != 0 || got.Origin != memory.OriginHuman {
		t.Fatalf("forgotten thought %+v", got)
	}
	if got := ids(); slices.Contains(got, th.ID) || !slices.Contains(got, keep.ID) {
		t.Fatalf("after forgetting: %v; want only the kept thought", got)
	}
	if res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "redacted"}); slices.Contains(snippetIDs(res), th.ID) {
		t.Fatal("the forgotten thought is retrieved by its placeholder")
	}
	if files := segmentsHolding(t, path+"-index", th.ID); len(files) > 0 {
		t.Fatalf("the forgotten thought (its vector) is still in %v", files)
	}
	list, err := eng.Thoughts(ctx, cairn.ThoughtsRequest{})
	if err != nil || len(list.Thoughts) != 2 {
		t.Fatalf("thoughts_list after forgetting: %+v, %v", list, err)
	}
	st, err := eng.Status(ctx)
	if err != nil || st.Embedder.Pending != 0 {
		t.Fatalf("a forgotten thought is pending an embedding: %+v, %v", st.Embedder, err)
	}
	before := export(t, eng)
	if strings.Contains(before, secret) {
		t.Fatal("the export holds the forgotten thought")
	}
	if _, err := eng.ForgetThought(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	_, err = eng.ForgetThought(ctx, "th_missing")
	wantErr(t, "unknown thought", err, memory.CodeNotFound)
	_, err = eng.ForgetThought(ctx, "")
	wantErr(t, "empty id", err, memory.CodeInvalidParams)
	if after := export(t, eng); after != before {
		t.Fatal("forgetting twice, or an unknown or bad id, changed the database")
	}
}

// TestForgetThoughtTakesItsSummaries: an inner_voice answer saved as a
// summary thought quotes its sources word for word, so forgetting a
// source forgets the summaries made from it (and summaries of those):
// the forgotten text is found by no retrieval, in no export and in no
// file, while the other sources stay.
func TestForgetThoughtTakesItsSummaries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	eng := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 256}, InnerVoice: voiceOn(), Verifier: &synth.Verifier{MinSources: 1}})
	const secret = "zqderivedsecret7"
	src := think(t, eng, cairn.ThinkRequest{Content: "Clock drift breaks session token expiry because the vault key is " + secret + ".", Origin: memory.OriginHuman})
	other := think(t, eng, cairn.ThinkRequest{Content: "Clock drift breaks session token expiry when NTP is down.", Origin: memory.OriginHuman})
	res := ask(t, eng, cairn.AskRequest{Content: "why does clock drift break session token expiry?", TopK: ptr(3), Save: ptr(true)})
	if res.SavedThoughtID == "" || !strings.Contains(res.SynthesizedAnswer, secret) || !slices.Contains(sourceIDs(res), src.ID) {
		t.Fatalf("the saved answer does not quote the source, the test would prove nothing: %+v", res)
	}
	// A summary of that summary, written by an agent.
	meta := think(t, eng, cairn.ThinkRequest{Content: "Summary of summaries: " + res.SynthesizedAnswer, Origin: memory.OriginModel,
		IsSummary: true, SummaryOf: []string{res.SavedThoughtID}})
	// A summary that does not draw on the forgotten thought stays.
	unrelated := think(t, eng, cairn.ThinkRequest{Content: "NTP outages break token expiry.", Origin: memory.OriginModel,
		IsSummary: true, SummaryOf: []string{other.ID}})

	if _, err := eng.ForgetThought(ctx, src.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{src.ID, res.SavedThoughtID, meta.ID} {
		th, err := eng.Thought(ctx, id)
		if err != nil || !th.Redacted || th.Content != memory.RedactedContent {
			t.Fatalf("thought %s after forgetting its source: %+v, %v", id, th, err)
		}
	}
	for _, id := range []string{other.ID, unrelated.ID} {
		if th, err := eng.Thought(ctx, id); err != nil || th.Redacted {
			t.Fatalf("thought %s, which does not quote the forgotten one, was forgotten: %+v, %v", id, th, err)
		}
	}
	found := voice(t, eng, retrieve.InnerVoiceRequest{Query: "vault key " + secret, TopK: ptr(10)})
	for _, s := range found.Snippets {
		if strings.Contains(s.Text, secret) {
			t.Fatalf("inner_voice_retrieve still finds the forgotten text in %s", s.ID)
		}
	}
	if strings.Contains(export(t, eng), secret) {
		t.Fatal("the export holds the forgotten text")
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if files := filesHolding(t, filepath.Dir(path), secret); len(files) > 0 {
		t.Fatalf("the forgotten text is still in %v", files)
	}
}

// TestDeleteKnowledgeErases: deleting an entity (with its facts and
// edges), a fact or an edge takes them out of every knowledge-graph query
// and inner_voice_retrieve, and out of the index's files; deleting again
// is not_found and changes nothing.
func TestDeleteKnowledgeErases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	eng := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 256}, InnerVoice: voiceOn()})
	gw := entity(t, eng, "gateway", "service")
	vault := entity(t, eng, "vault", "service")
	fact := observe(t, eng, gw.ID, "the gateway admin password is zqfactsecret7")
	kept := observe(t, eng, gw.ID, "the gateway drops idle links")
	cascaded := observe(t, eng, vault.ID, "vault unseal key zqcascadesecret7")
	edge, err := eng.CreateEdge(ctx, cairn.EdgeRequest{Source: gw.ID, Target: vault.ID, Relation: "reads_from"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.OptimizeIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{fact.ID, cascaded.ID, vault.ID, edge.ID} {
		if len(segmentsHolding(t, path+"-index", id)) == 0 {
			t.Fatalf("%s is in no index file before it is deleted: the test would prove nothing", id)
		}
	}
	if _, err := eng.DeleteKGObservation(ctx, fact.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.DeleteEdge(ctx, edge.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.DeleteEntity(ctx, vault.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{fact.ID, cascaded.ID, vault.ID, edge.ID} {
		if files := segmentsHolding(t, path+"-index", id); len(files) > 0 {
			t.Errorf("deleted %s is still in %v", id, files)
		}
	}
	got := snippetIDs(voice(t, eng, retrieve.InnerVoiceRequest{Query: "gateway admin password zqfactsecret7 vault unseal key zqcascadesecret7 idle links", Mix: ptr(1.0)}))
	if !slices.Contains(got, kept.ID) || slices.Contains(got, fact.ID) || slices.Contains(got, cascaded.ID) || slices.Contains(got, vault.ID) {
		t.Fatalf("inner voice after the deletes: %v", got)
	}
	view, err := eng.Entity(ctx, gw.ID)
	if err != nil || len(view.Observations) != 1 || len(view.Edges) != 0 {
		t.Fatalf("entity after the deletes: %+v, %v", view, err)
	}
	before := export(t, eng)
	for _, s := range []string{"zqfactsecret7", "zqcascadesecret7", "reads_from"} {
		if strings.Contains(before, s) {
			t.Fatalf("the export holds %q", s)
		}
	}
	_, err = eng.DeleteKGObservation(ctx, fact.ID)
	wantErr(t, "deleting a fact again", err, memory.CodeNotFound)
	_, err = eng.DeleteEdge(ctx, edge.ID)
	wantErr(t, "deleting an edge again", err, memory.CodeNotFound)
	_, err = eng.DeleteEntity(ctx, vault.ID)
	wantErr(t, "deleting an entity again", err, memory.CodeNotFound)
	_, err = eng.DeleteEdge(ctx, "edge\n1")
	wantErr(t, "bad id", err, memory.CodeInvalidParams)
	if after := export(t, eng); after != before {
		t.Fatal("deleting again changed the database")
	}
}

// TestForgetArtifactThroughEngine: a forgotten code artifact is hydrated
// no more and leaves the export.
func TestForgetArtifactThroughEngine(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "k.go"), []byte("package k\n\n// Key returns the key.\nfunc Key() string {\n\treturn \"zqartifactsecret7\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Embedder: embed.Hash{Dim: 64}})
	if _, err := eng.IndexCode(ctx, cairn.CodeIndexRequest{Root: root, RepoID: "k"}, nil); err != nil {
		t.Fatal(err)
	}
	ents, err := eng.CodeEntities(ctx, cairn.CodeEntitiesRequest{RepoID: "k"})
	if err != nil || len(ents.Entities) != 1 {
		t.Fatalf("entities: %+v, %v", ents, err)
	}
	hash := ents.Entities[0].ArtifactHash
	hydrate := func(ep string) code.HydrateResult {
		// By file name: an episode records its query, which must not hold
		// the secret.
		res, err := eng.Hydrate(ctx, cairn.CodeHydrateRequest{Query: "look at k.go", EpisodeID: ep, SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := hydrate("e1"); len(res.Blocks) != 1 {
		t.Fatalf("before: %+v", res.Blocks)
	}
	a, err := eng.ForgetArtifact(ctx, cairn.ArtifactRef{Hash: hash})
	if err != nil || !a.Redacted {
		t.Fatalf("forgotten artifact: %+v, %v", a, err)
	}
	if res := hydrate("e2"); len(res.Blocks) != 0 {
		t.Fatalf("after: %+v", res.Blocks)
	}
	if strings.Contains(export(t, eng), "zqartifactsecret7") {
		t.Fatal("the export holds the forgotten artifact")
	}
	_, err = eng.ForgetArtifact(ctx, cairn.ArtifactRef{Hash: "nothex"})
	wantErr(t, "bad hash", err, memory.CodeInvalidParams)
}
