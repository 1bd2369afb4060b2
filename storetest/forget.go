package storetest

import (
	"slices"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// This file checks forgetting and deleting every kind of record:
// summaries, thoughts and code artifacts are redacted (their skeleton
// stays), knowledge-graph records are deleted. Observations are checked
// by testRedact.

// recordState reads one record as an index sees it.
func recordState(t *testing.T, s memory.Store, kind memory.VectorKind, id string) memory.IndexRecord {
	t.Helper()
	var got []memory.IndexRecord
	err := s.Snapshot(ctx, func(r memory.Reader) error {
		var err error
		got, err = r.Records(ctx, kind, []string{id})
		return err
	})
	if err != nil || len(got) != 1 {
		t.Fatalf("Records(%s, %s) = %v, %v", kind, id, got, err)
	}
	return got[0]
}

// changedSince lists the records changed after seq, as "kind/id" (gone
// ones marked "!").
func changedSince(t *testing.T, s memory.Store, seq int64) []string {
	t.Helper()
	var out []string
	err := s.Snapshot(ctx, func(r memory.Reader) error {
		recs, _, err := r.ChangesSince(ctx, spA, seq, 0)
		for _, rec := range recs {
			k := string(rec.Kind) + "/" + rec.ID
			if rec.Gone {
				k += "!"
			}
			out = append(out, k)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testRedactSummary(t *testing.T, s memory.Store) {
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 1, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	in := memory.Summary{ID: "m1", CapsuleID: "c1", Content: "the deploy key is hunter2", Confidence: 0.7, CreatedAt: 20, EvidenceRefs: []string{"o1"}}
	if _, err := s.PutSummary(ctx, in); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c2", Type: "session", OpenedAt: 2, Scope: s2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSummary(ctx, memory.Summary{ID: "m2", CapsuleID: "c2", Content: "the deploy went fine", Confidence: 1, CreatedAt: 21}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddPin(ctx, memory.Pin{ID: "p1", TargetType: memory.TargetSummary, TargetID: "m1", CreatedAt: 5, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	putVectors(t, s, emb(memory.VectorSummary, "m1", spA, 1))
	seq := lastSeq(t, s)

	got, err := s.RedactSummary(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.Content, want.Redacted, want.Scope = memory.RedactedContent, true, s1
	sameJSON(t, "redacted summary", got, want)
	if read, err := s.Summary(ctx, "m1"); err != nil || !read.Redacted || read.Content != memory.RedactedContent {
		t.Fatalf("Summary after forget: %+v, %v", read, err)
	}
	for _, q := range []string{"hunter2", "deploy", "redacted"} {
		res, err := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{q}}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Summaries {
			if h.Entity.ID() == "m1" {
				t.Fatalf("search %q found the forgotten summary", q)
			}
		}
	}
	if cur, err := s.CurrentSummary(ctx, s1); err != nil || cur != nil {
		t.Fatalf("current summary after forget: %+v, %v", cur, err)
	}
	pins, err := s.ActivePins(ctx, memory.PinQuery{Scope: s1, Now: 10})
	if err != nil || len(pins) != 0 {
		t.Fatalf("pins after forget: %+v, %v", pins, err)
	}
	pins, err = s.ActivePins(ctx, memory.PinQuery{Scope: s1, Now: 10, IncludeRedacted: true})
	if err != nil || len(pins) != 1 || !pins[0].Target.Redacted() {
		t.Fatalf("pins with redacted after forget: %+v, %v", pins, err)
	}
	if rec := recordState(t, s, memory.VectorSummary, "m1"); !rec.Gone {
		t.Fatalf("Records after forget: %+v; want gone", rec)
	}
	if got := changedSince(t, s, seq); !slices.Contains(got, "summary/m1!") {
		t.Fatalf("changes after forget: %v; want summary/m1 gone", got)
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 0, Pending: 1}) // m2 only
	st, err := s.Stats(ctx)
	if err != nil || st.Summaries != 2 || st.RedactedSummaries != 1 || st.IndexedSummaries != 1 {
		t.Fatalf("stats after forget: %+v, %v", st, err)
	}
	jobs := pending(t, s, spA, "", 10)
	if keys := jobKeys(jobs); !slices.Equal(keys, []string{"summary/m2"}) {
		t.Fatalf("pending after forget: %v", keys)
	}
	if err := s.PutEmbeddings(ctx, []memory.Embedding{emb(memory.VectorSummary, "m1", spA, 2)}); err != nil {
		t.Fatal(err)
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 0, Pending: 1})

	// Idempotent; unknown ids are not_found.
	before := snapshot(t, s)
	again, err := s.RedactSummary(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "summary forgotten twice", again, want)
	if after := snapshot(t, s); after != before {
		t.Fatalf("forgetting twice changed the store:\n%s\n%s", before, after)
	}
	_, err = s.RedactSummary(ctx, "missing")
	wantCode(t, err, memory.CodeNotFound)
	if after := snapshot(t, s); after != before {
		t.Fatal("forgetting an unknown summary changed the store")
	}

	// Writing the capsule's summary again replaces the forgotten one.
	next, err := s.PutSummary(ctx, memory.Summary{ID: "m-new", CapsuleID: "c1", Content: "rotated the key", Confidence: 1, CreatedAt: 30})
	if err != nil {
		t.Fatal(err)
	}
	if next.ID != "m1" || next.Redacted || next.Content != "rotated the key" {
		t.Fatalf("summary written after forget: %+v", next)
	}
	res, err := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{"rotated"}}, Limit: 10})
	if err != nil || len(res.Summaries) != 1 || res.Summaries[0].Entity.ID() != "m1" {
		t.Fatalf("search for the new summary: %+v, %v", res.Summaries, err)
	}
	if cur, err := s.CurrentSummary(ctx, s1); err != nil || cur == nil || cur.ID != "m1" {
		t.Fatalf("current summary after rewrite: %+v, %v", cur, err)
	}
}

func testRedactThought(t *testing.T, s memory.Store) {
	in := memory.Thought{ID: "t1", Content: "the staging password is hunter2", Origin: memory.OriginHuman,
		Tags: []string{"ops", "hunter2"}, IsPrivate: true, Status: memory.StatusActive, Significance: 0.9,
		IsSummary: true, SummaryOf: []string{"t0"}, Pipeline: "inner_voice", CreatedAt: 1234, Scope: s1}
	addThoughts(t, s, in, thought("t2", "a thought to keep", 1300, s1))
	putVectors(t, s, emb(memory.VectorThought, "t1", spA, 1), emb(memory.VectorThought, "t2", spA, 2))
	seq := lastSeq(t, s)

	got, err := s.RedactThought(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.Content, want.Tags, want.Redacted = memory.RedactedContent, []string{}, true
	sameJSON(t, "redacted thought", got, want)
	if read, err := s.Thought(ctx, "t1"); err != nil {
		t.Fatal(err)
	} else {
		sameJSON(t, "thought read after forget", read, want)
	}
	if rec := recordState(t, s, memory.VectorThought, "t1"); !rec.Gone {
		t.Fatalf("Records after forget: %+v; want gone", rec)
	}
	if got := changedSince(t, s, seq); !slices.Contains(got, "thought/t1!") {
		t.Fatalf("changes after forget: %v; want thought/t1 gone", got)
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 1})
	if err := s.PutEmbeddings(ctx, []memory.Embedding{emb(memory.VectorThought, "t1", spA, 3)}); err != nil {
		t.Fatal(err)
	}
	wantStats(t, s, spA, memory.VectorStats{InSpace: 1})
	if keys := jobKeys(pending(t, s, spA, "", 10)); len(keys) != 0 {
		t.Fatalf("pending after forget: %v", keys)
	}
	st, err := s.Stats(ctx)
	if err != nil || st.Thoughts != 2 || st.RedactedThoughts != 1 {
		t.Fatalf("stats after forget: %+v, %v", st, err)
	}
	// The skeleton can still be marked for removal.
	if n, err := s.SetThoughtStatus(ctx, []string{"t1"}, memory.StatusRemoval); err != nil || n != 1 {
		t.Fatalf("marking a forgotten thought: %d, %v", n, err)
	}
	if rec := recordState(t, s, memory.VectorThought, "t1"); !rec.Gone {
		t.Fatalf("Records after marking: %+v; want still gone", rec)
	}

	// The summaries made from a forgotten thought quote it: they go with
	// it, and so do summaries of those; a summary of other thoughts stays.
	sum1 := thought("t3", "t2 says: a thought to keep", 1400, s1)
	sum1.IsSummary, sum1.SummaryOf = true, []string{"t2"}
	sum2 := thought("t4", "summary of t3", 1500, s1)
	sum2.IsSummary, sum2.SummaryOf = true, []string{"t9", "t3"}
	other := thought("t5", "summary of t9 alone", 1600, s1)
	other.IsSummary, other.SummaryOf = true, []string{"t9"}
	addThoughts(t, s, sum1, sum2, other)
	if _, err := s.RedactThought(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	for id, gone := range map[string]bool{"t2": true, "t3": true, "t4": true, "t5": false} {
		th, err := s.Thought(ctx, id)
		if err != nil || th.Redacted != gone || (th.Content == memory.RedactedContent) != gone {
			t.Fatalf("thought %s after forgetting t2: %+v, %v; want redacted %v", id, th, err, gone)
		}
	}

	before := snapshot(t, s)
	again, err := s.RedactThought(ctx, "t1")
	if err != nil || !again.Redacted || again.Content != memory.RedactedContent {
		t.Fatalf("second forget: %+v, %v", again, err)
	}
	if after := snapshot(t, s); after != before {
		t.Fatalf("forgetting twice changed the store:\n%s\n%s", before, after)
	}
	_, err = s.RedactThought(ctx, "missing")
	wantCode(t, err, memory.CodeNotFound)
	if after := snapshot(t, s); after != before {
		t.Fatal("forgetting an unknown thought changed the store")
	}
}

func testRedactArtifact(t *testing.T, s memory.Store) {
	secret, other := artifact("func Key() string { return \"hunter2\" }"), artifact("func Other() {}")
	for _, r := range []memory.CodeRepo{{ID: "r1", Root: "/src/a", IndexedAt: 100}, {ID: "r2", Root: "/src/b", IndexedAt: 100}} {
		if err := s.PutCodeRepo(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	applyCode(t, s, memory.CodeChange{
		Artifacts: []memory.Artifact{secret, other},
		Entities: []memory.CodeEntity{codeEntity("r1", "a.go", "Key", memory.StateProposed, secret.Hash),
			codeEntity("r2", "b.go", "Other", memory.StateAuthoritative, other.Hash)},
		Transitions: []memory.CodeTransition{{RepoID: "r1", Key: "a.go::Key", To: memory.StateProposed, ArtifactHash: secret.Hash, Reason: "proposed", At: 5}},
	})
	got, err := s.RedactArtifact(ctx, secret.Hash, 500)
	if err != nil {
		t.Fatal(err)
	}
	want := secret
	want.Content, want.Redacted = memory.RedactedContent, true
	if got != want {
		t.Fatalf("redacted artifact %+v; want %+v", got, want)
	}
	if read, err := s.Artifact(ctx, secret.Hash); err != nil || read != want {
		t.Fatalf("Artifact after forget: %+v, %v", read, err)
	}
	// The entity, its ledger and the other repository are untouched; the
	// repository holding the entity is marked for a new search index.
	if ents, err := s.CodeEntitiesByKey(ctx, "a.go::Key"); err != nil || len(ents) != 1 || ents[0].ArtifactHash != secret.Hash {
		t.Fatalf("entity after forget: %+v, %v", ents, err)
	}
	if led, err := s.CodeLedger(ctx, "r1", "a.go::Key"); err != nil || len(led) != 1 {
		t.Fatalf("ledger after forget: %+v, %v", led, err)
	}
	for id, at := range map[string]int64{"r1": 500, "r2": 100} {
		if r, err := s.CodeRepo(ctx, id); err != nil || r.IndexedAt != at {
			t.Fatalf("repository %s after forget: %+v, %v; want indexed_at %d", id, r, err, at)
		}
	}

	before := snapshot(t, s)
	again, err := s.RedactArtifact(ctx, secret.Hash, 900)
	if err != nil || again != want {
		t.Fatalf("second forget: %+v, %v", again, err)
	}
	if after := snapshot(t, s); after != before {
		t.Fatalf("forgetting twice changed the store:\n%s\n%s", before, after)
	}
	_, err = s.RedactArtifact(ctx, artifact("never stored").Hash, 900)
	wantCode(t, err, memory.CodeNotFound)
	if after := snapshot(t, s); after != before {
		t.Fatal("forgetting an unknown artifact changed the store")
	}
	// A forgotten artifact cannot be stored anew as such, but its text,
	// given again, restores it.
	wantCode(t, s.ApplyCode(ctx, memory.CodeChange{Artifacts: []memory.Artifact{want}}), memory.CodeInvalidParams)
	applyCode(t, s, memory.CodeChange{Artifacts: []memory.Artifact{secret}})
	if read, err := s.Artifact(ctx, secret.Hash); err != nil || read != secret {
		t.Fatalf("Artifact stored again: %+v, %v", read, err)
	}
}

// testDeletesAreFinal: knowledge-graph records are deleted, not redacted:
// each leaves the change log as gone, and deleting it again is not_found
// and changes nothing.
func testDeletesAreFinal(t *testing.T, s memory.Store) {
	seedKinds(t, s)
	putVectors(t, s, emb(memory.VectorKGEdge, "g1", spA, 1), emb(memory.VectorKGObservation, "k1", spA, 1), emb(memory.VectorKGEntity, "e1", spA, 1))
	seq := lastSeq(t, s)
	if err := s.DeleteEdge(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteKGObservation(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteEntity(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	got := changedSince(t, s, seq)
	for _, k := range []string{"kg_edge/g1!", "kg_observation/k1!", "kg_entity/e1!"} {
		if !slices.Contains(got, k) {
			t.Fatalf("changes after the deletes: %v; want %s", got, k)
		}
	}
	for _, k := range []kindID{{memory.VectorKGEdge, "g1"}, {memory.VectorKGObservation, "k1"}, {memory.VectorKGEntity, "e1"}} {
		if rec := recordState(t, s, k.kind, k.id); !rec.Gone {
			t.Fatalf("Records(%s) after delete: %+v; want gone", k, rec)
		}
	}
	wantStats(t, s, spA, memory.VectorStats{Pending: 7}) // o1 o2 o3 m1 t1 t2 e2: the vectors went with their records
	before := snapshot(t, s)
	wantCode(t, s.DeleteEdge(ctx, "g1"), memory.CodeNotFound)
	wantCode(t, s.DeleteKGObservation(ctx, "k1"), memory.CodeNotFound)
	wantCode(t, s.DeleteEntity(ctx, "e1"), memory.CodeNotFound)
	if after := snapshot(t, s); after != before {
		t.Fatal("deleting again changed the store")
	}
}

// testRedactedRoundTrip: forgotten summaries, thoughts and artifacts
// export as forgotten and import as forgotten (out of every index).
func testRedactedRoundTrip(t *testing.T, from, to memory.Store) {
	if _, err := from.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 1, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	if _, err := from.PutSummary(ctx, memory.Summary{ID: "m1", CapsuleID: "c1", Content: "hunter2 summary", Confidence: 1, CreatedAt: 2}); err != nil {
		t.Fatal(err)
	}
	addThoughts(t, from, memory.Thought{ID: "t1", Content: "hunter2 thought", Origin: memory.OriginModel, Tags: []string{"x"},
		Status: memory.StatusActive, Significance: 0.5, CreatedAt: 3, Scope: s1})
	a := artifact("func Hunter2() {}")
	applyCode(t, from, memory.CodeChange{Artifacts: []memory.Artifact{a}})
	for _, err := range []error{
		func() error { _, err := from.RedactSummary(ctx, "m1"); return err }(),
		func() error { _, err := from.RedactThought(ctx, "t1"); return err }(),
		func() error { _, err := from.RedactArtifact(ctx, a.Hash, 9); return err }(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	exported, d := exportAll(t, from)
	if err := to.Import(ctx, d, nil); err != nil {
		t.Fatalf("Import: %v", err)
	}
	if again, _ := exportAll(t, to); again != exported {
		t.Fatalf("round trip differs:\n%s\n%s", exported, again)
	}
	st, err := to.Stats(ctx)
	if err != nil || st.RedactedSummaries != 1 || st.RedactedThoughts != 1 || st.IndexedSummaries != 0 {
		t.Fatalf("stats after import: %+v, %v", st, err)
	}
	if rec := recordState(t, to, memory.VectorThought, "t1"); !rec.Gone {
		t.Fatalf("imported forgotten thought is searchable: %+v", rec)
	}
	if rec := recordState(t, to, memory.VectorSummary, "m1"); !rec.Gone {
		t.Fatalf("imported forgotten summary is searchable: %+v", rec)
	}
	// A dump that claims a record is forgotten but carries its text is
	// stored forgotten: the text is not kept.
	var d2 memory.Dump
	d2.Thoughts = []memory.Thought{{ID: "t9", Content: "hunter2 again", Origin: memory.OriginModel, Tags: []string{"y"},
		Status: memory.StatusActive, Significance: 0.5, CreatedAt: 4, Redacted: true}}
	b := artifact("func Hunter3() {}")
	b.Redacted = true
	d2.Artifacts = []memory.Artifact{b}
	if err := to.Import(ctx, d2, nil); err != nil {
		t.Fatalf("Import: %v", err)
	}
	if th, err := to.Thought(ctx, "t9"); err != nil || th.Content != memory.RedactedContent || len(th.Tags) != 0 {
		t.Fatalf("imported forgotten thought: %+v, %v", th, err)
	}
	if got, err := to.Artifact(ctx, b.Hash); err != nil || got.Content != memory.RedactedContent || !got.Redacted {
		t.Fatalf("imported forgotten artifact: %+v, %v", got, err)
	}
}
