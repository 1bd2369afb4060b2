package storetest

import (
	"slices"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// This file checks the optional seams of the inner voice's curation:
// knowledge-graph candidates (memory.CandidateStore) and the removal
// lifecycle of thoughts (memory.RemovalStore).

// curationTests run on stores that implement the optional seams.
var curationTests = []struct {
	name string
	fn   func(*testing.T, memory.Store)
}{
	{"CandidatesStageAndList", testCandidatesStageAndList},
	{"CandidatesSkip", testCandidatesSkip},
	{"CandidateApprove", testCandidateApprove},
	{"CandidateDecisionIsAllOrNothing", testCandidateDecisionAllOrNothing},
	{"CandidateRejectAndBlock", testCandidateRejectAndBlock},
	{"CandidatesFollowTheirThought", testCandidatesFollowTheirThought},
	{"RemovalMarks", testRemovalMarks},
	{"RemovalExportAndFinalize", testRemovalExportAndFinalize},
}

func candidates(t *testing.T, s memory.Store) memory.CandidateStore {
	t.Helper()
	cs, ok := s.(memory.CandidateStore)
	if !ok {
		t.Skipf("%T does not implement memory.CandidateStore: inner_voice cannot stage candidates on it", s)
	}
	return cs
}

func removals(t *testing.T, s memory.Store) memory.RemovalStore {
	t.Helper()
	rs, ok := s.(memory.RemovalStore)
	if !ok {
		t.Skipf("%T does not implement memory.RemovalStore: maintenance_ops cannot run on it", s)
	}
	return rs
}

func entCand(id, name string, conf float64, src string) memory.KGCandidate {
	return memory.KGCandidate{ID: id, Kind: memory.CandidateEntity, Name: name, EntityType: "service",
		Data: memory.RawObject(`{"sentence":"x"}`), Confidence: conf, SourceThoughtID: src,
		Status: memory.CandidatePending, CreatedAt: 10, Scope: s1}
}

func edgeCand(id, src, rel, dst string, conf float64, thought string) memory.KGCandidate {
	return memory.KGCandidate{ID: id, Kind: memory.CandidateEdge, SourceName: src, Relation: rel, TargetName: dst,
		Confidence: conf, SourceThoughtID: thought, Status: memory.CandidatePending, CreatedAt: 10, Scope: s1}
}

func candIDs(cs []memory.KGCandidate) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func stage(t *testing.T, cs memory.CandidateStore, in ...memory.KGCandidate) memory.StageResult {
	t.Helper()
	res, err := cs.StageCandidates(ctx, in)
	if err != nil {
		t.Fatalf("StageCandidates: %v", err)
	}
	return res
}

func listCands(t *testing.T, cs memory.CandidateStore, f memory.CandidateFilter) []string {
	t.Helper()
	got, err := cs.Candidates(ctx, f)
	if err != nil {
		t.Fatalf("Candidates(%+v): %v", f, err)
	}
	return candIDs(got)
}

func testCandidatesStageAndList(t *testing.T, s memory.Store) {
	cs := candidates(t, s)
	res := stage(t, cs,
		entCand("c1", "auth-service", 0.9, "t1"),
		entCand("c2", "PostgreSQL", 0.7, "t2"),
		edgeCand("c3", "auth-service", "depends_on", "PostgreSQL", 0.8, "t1"),
		entCand("c4", "Redis", 0.7, "t1"))
	if len(res.Staged) != 4 || len(res.Skipped) != 0 {
		t.Fatalf("staged %v, skipped %v; want all four staged", candIDs(res.Staged), candIDs(res.Skipped))
	}
	got, err := cs.Candidates(ctx, memory.CandidateFilter{IDs: []string{"c3"}})
	if err != nil || len(got) != 1 {
		t.Fatalf("Candidates by id: %v %v", got, err)
	}
	sameJSON(t, "edge candidate read back", got[0], edgeCand("c3", "auth-service", "depends_on", "PostgreSQL", 0.8, "t1"))
	got, _ = cs.Candidates(ctx, memory.CandidateFilter{IDs: []string{"c1"}})
	sameJSON(t, "entity candidate read back", got[0], entCand("c1", "auth-service", 0.9, "t1"))

	// Highest confidence first, then oldest, then by id, across both kinds.
	for _, tc := range []struct {
		f    memory.CandidateFilter
		want []string
	}{
		{memory.CandidateFilter{}, []string{"c1", "c3", "c2", "c4"}},
		{memory.CandidateFilter{Kind: memory.CandidateEntity}, []string{"c1", "c2", "c4"}},
		{memory.CandidateFilter{Kind: memory.CandidateEdge}, []string{"c3"}},
		{memory.CandidateFilter{MinConfidence: 0.75}, []string{"c1", "c3"}},
		{memory.CandidateFilter{SourceThoughtID: "t1"}, []string{"c1", "c3", "c4"}},
		{memory.CandidateFilter{Status: memory.CandidatePending, Limit: 2}, []string{"c1", "c3"}},
		{memory.CandidateFilter{Offset: 2, Limit: 1}, []string{"c2"}},
		{memory.CandidateFilter{Offset: 9}, []string{}},
		{memory.CandidateFilter{Status: memory.CandidateApproved}, []string{}},
		{memory.CandidateFilter{IDs: []string{"c4", "missing"}}, []string{"c4"}},
	} {
		if got := listCands(t, cs, tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("Candidates(%+v) = %v; want %v", tc.f, got, tc.want)
		}
	}
	_, err = cs.StageCandidates(ctx, []memory.KGCandidate{entCand("c1", "another", 0.9, "t1")})
	wantCode(t, err, memory.CodeConflict)
}

func testCandidatesSkip(t *testing.T, s memory.Store) {
	cs := candidates(t, s)
	putEntities(t, s, entity("e1", "Kafka", "service", s1), entity("e2", "billing", "service", s1))
	if _, err := s.AddEdge(ctx, memory.KGEdge{ID: "g1", Source: "e2", Target: "e1", Relation: "publishes_to", CreatedAt: 1, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	stage(t, cs, entCand("p1", "Redis", 0.8, "t1"), edgeCand("p2", "billing", "uses", "Redis", 0.8, "t1"))
	res := stage(t, cs,
		entCand("x1", "redis", 0.9, "t2"),                             // pending, any case
		entCand("x2", "KAFKA", 0.9, "t2"),                             // the graph has it
		entCand("x3", "Vault", 0.9, "t2"),                             // new
		entCand("x4", "vault", 0.9, "t2"),                             // an earlier one of the batch has it
		edgeCand("x5", "Billing", "USES", "redis", 0.9, "t2"),         // pending
		edgeCand("x6", "billing", "publishes_to", "kafka", 0.9, "t2"), // the graph has it
		edgeCand("x7", "billing", "uses", "Vault", 0.9, "t2"))         // new
	if !slices.Equal(candIDs(res.Staged), []string{"x3", "x7"}) {
		t.Fatalf("staged %v; want [x3 x7]", candIDs(res.Staged))
	}
	why := map[string]string{}
	for _, c := range res.Skipped {
		why[c.ID] = c.Feedback
	}
	want := map[string]string{"x1": "pending", "x2": "exists", "x4": "pending", "x5": "pending", "x6": "exists"}
	for id, w := range want {
		if why[id] != w {
			t.Errorf("candidate %s skipped as %q; want %q", id, why[id], w)
		}
	}
	if got := listCands(t, cs, memory.CandidateFilter{}); len(got) != 4 {
		t.Fatalf("stored candidates %v; want the two first staged and the two new", got)
	}
}

func testCandidateApprove(t *testing.T, s memory.Store) {
	cs := candidates(t, s)
	stage(t, cs, entCand("c1", "auth-service", 0.9, "t1"), edgeCand("c2", "auth-service", "depends_on", "ntp", 0.8, "t1"))
	ent := memory.KGEntity{ID: "e1", Name: "auth-service", Type: "service", Data: memory.RawObject(`{"source_thought_ids":["t1"]}`),
		CreatedAt: 20, UpdatedAt: 20, Scope: s1}
	got, err := cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c1", Status: memory.CandidateApproved, DecidedAt: 20,
		Entities: []memory.KGEntity{ent}, PromotedID: "e1", Feedback: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != memory.CandidateApproved || got.PromotedID != "e1" || got.DecidedAt != 20 || got.Feedback != "ok" {
		t.Fatalf("approved candidate %+v", got)
	}
	if e, err := s.Entity(ctx, "e1"); err != nil || e.Name != "auth-service" {
		t.Fatalf("the approval did not create the entity: %+v %v", e, err)
	}
	// An edge approval creates its missing entity and the edge, and may
	// update an existing entity (a merge).
	merged := ent
	merged.Data, merged.UpdatedAt = memory.RawObject(`{"source_thought_ids":["t1","t9"]}`), 30
	edge := memory.KGEdge{ID: "g1", Source: "e1", Target: "e2", Relation: "depends_on", CreatedAt: 30, Scope: s1}
	_, err = cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c2", Status: memory.CandidateApproved, DecidedAt: 30,
		Entities: []memory.KGEntity{merged, {ID: "e2", Name: "ntp", Type: "concept", CreatedAt: 30, UpdatedAt: 30, Scope: s1}},
		Edge:     &edge, PromotedID: "g1"})
	if err != nil {
		t.Fatal(err)
	}
	edges, err := s.Edges(ctx, "e1", 10)
	if err != nil || len(edges) != 1 || edges[0].Target != "e2" {
		t.Fatalf("edges after approval: %+v %v", edges, err)
	}
	if e, _ := s.Entity(ctx, "e1"); string(e.Data) != `{"source_thought_ids":["t1","t9"]}` {
		t.Fatalf("merged entity data %s", e.Data)
	}
	// Deciding again is a conflict and writes nothing.
	before := snapshot(t, s)
	_, err = cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c1", Status: memory.CandidateRejected, DecidedAt: 40})
	wantCode(t, err, memory.CodeConflict)
	_, err = cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "missing", Status: memory.CandidateRejected, DecidedAt: 40})
	wantCode(t, err, memory.CodeNotFound)
	if snapshot(t, s) != before {
		t.Fatal("a refused decision changed the store")
	}
	if got := listCands(t, cs, memory.CandidateFilter{Status: memory.CandidateApproved}); len(got) != 2 {
		t.Fatalf("approved candidates %v", got)
	}
}

func testCandidateDecisionAllOrNothing(t *testing.T, s memory.Store) {
	cs := candidates(t, s)
	stage(t, cs, edgeCand("c1", "a", "uses", "b", 0.8, "t1"))
	before := snapshot(t, s)
	edge := memory.KGEdge{ID: "g1", Source: "ea", Target: "missing", Relation: "uses", CreatedAt: 30, Scope: s1}
	_, err := cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c1", Status: memory.CandidateApproved, DecidedAt: 30,
		Entities: []memory.KGEntity{{ID: "ea", Name: "a", Type: "concept", CreatedAt: 30, UpdatedAt: 30}}, Edge: &edge, PromotedID: "g1"})
	wantCode(t, err, memory.CodeNotFound)
	if snapshot(t, s) != before {
		t.Fatal("a failed approval left an entity behind")
	}
	if got := listCands(t, cs, memory.CandidateFilter{Status: memory.CandidatePending}); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("after a failed approval the candidate is not pending: %v", got)
	}
	_, err = cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c1", Status: "maybe"})
	wantCode(t, err, memory.CodeInvalidParams)
}

func testCandidateRejectAndBlock(t *testing.T, s memory.Store) {
	cs := candidates(t, s)
	stage(t, cs, entCand("c1", "The", 0.7, "t1"), entCand("c2", "Sources", 0.7, "t1"), edgeCand("c3", "x", "uses", "y", 0.7, "t1"))
	if _, err := cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c1", Status: memory.CandidateRejected, DecidedAt: 5, Block: true, Feedback: "junk"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c2", Status: memory.CandidateRejected, DecidedAt: 6}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c3", Status: memory.CandidateRejected, DecidedAt: 7, Block: true}); err != nil {
		t.Fatal(err)
	}
	bl, err := cs.Blocklist(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "blocklist", bl, []memory.BlockedKey{
		{Kind: memory.CandidateEntity, Key: "the", CandidateID: "c1", CreatedAt: 5},
		{Kind: memory.CandidateEdge, Key: "x -> uses -> y", CandidateID: "c3", CreatedAt: 7},
	})
	res := stage(t, cs,
		entCand("d1", "THE", 0.9, "t2"),                     // blocked
		entCand("d2", "Sources", 0.9, "t2"),                 // rejected without a block: staged again
		edgeCand("d3", "X", "uses", "Y", 0.9, "t2"),         // blocked
		edgeCand("d4", "the", "owns", "gateway", 0.9, "t2")) // names a blocked entity
	if !slices.Equal(candIDs(res.Staged), []string{"d2"}) {
		t.Fatalf("staged %v; want [d2]", candIDs(res.Staged))
	}
	for _, c := range res.Skipped {
		if c.Feedback != "blocked" {
			t.Errorf("%s skipped as %q; want blocked", c.ID, c.Feedback)
		}
	}
	if err := cs.Unblock(ctx, memory.CandidateEntity, "the"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, cs.Unblock(ctx, memory.CandidateEntity, "the"), memory.CodeNotFound)
	if res := stage(t, cs, entCand("d5", "The", 0.9, "t3")); len(res.Staged) != 1 {
		t.Fatalf("after unblocking, staging skipped %+v", res.Skipped)
	}
}

func removalIDs(rs []memory.Removal) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Thought.ID)
	}
	return out
}

func listRemovals(t *testing.T, rs memory.RemovalStore) []memory.Removal {
	t.Helper()
	got, err := rs.Removals(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func testRemovalMarks(t *testing.T, s memory.Store) {
	rs := removals(t, s)
	addThoughts(t, s, thought("t1", "one", 1, s1), thought("t2", "two", 2, s1), thought("t3", "three", 3, s1))
	n, err := rs.MarkRemoval(ctx, []string{"t2", "t1", "missing"}, 100)
	if err != nil || n != 2 {
		t.Fatalf("MarkRemoval = %d, %v; want 2", n, err)
	}
	// Marking again keeps the first time and changes no status.
	if n, err = rs.MarkRemoval(ctx, []string{"t1"}, 200); err != nil || n != 0 {
		t.Fatalf("second MarkRemoval = %d, %v; want 0", n, err)
	}
	// A thought marked without a time lists first, with time 0.
	if _, err := s.SetThoughtStatus(ctx, []string{"t3"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}
	got := listRemovals(t, rs)
	if !slices.Equal(removalIDs(got), []string{"t3", "t1", "t2"}) || got[0].MarkedAt != 0 || got[1].MarkedAt != 100 || got[2].MarkedAt != 100 {
		t.Fatalf("removals %+v", got)
	}
	if got[1].Thought.Content != "one" || got[1].Thought.Status != memory.StatusRemoval {
		t.Fatalf("the removal carries the thought: %+v", got[1].Thought)
	}
	if page, _ := rs.Removals(ctx, 1, 1); !slices.Equal(removalIDs(page), []string{"t1"}) {
		t.Fatalf("page after 1, limit 1: %v", removalIDs(page))
	}
	// MarkRemoval gives a time to a mark that had none.
	if _, err := rs.MarkRemoval(ctx, []string{"t3"}, 300); err != nil {
		t.Fatal(err)
	}
	// Marking a thought active clears its record: marked again, it takes
	// the new time.
	if _, err := s.SetThoughtStatus(ctx, []string{"t1"}, memory.StatusActive); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.MarkRemoval(ctx, []string{"t1"}, 400); err != nil {
		t.Fatal(err)
	}
	got = listRemovals(t, rs)
	times := map[string]int64{}
	for _, r := range got {
		times[r.Thought.ID] = r.MarkedAt
	}
	sameJSON(t, "mark times", times, map[string]int64{"t1": 400, "t2": 100, "t3": 300})
}

func testRemovalExportAndFinalize(t *testing.T, s memory.Store) {
	rs := removals(t, s)
	addThoughts(t, s, thought("old", "exported long ago", 1, s1), thought("recent", "exported, marked recently", 2, s1),
		thought("unexported", "never exported", 3, s1), thought("kept", "active", 4, s1), thought("unknown", "mark time unknown", 5, s1))
	putVectors(t, s, emb(memory.VectorThought, "old", spA, 1))
	if _, err := rs.MarkRemoval(ctx, []string{"old", "unexported"}, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.MarkRemoval(ctx, []string{"recent"}, 900); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetThoughtStatus(ctx, []string{"unknown"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}
	n, err := rs.RecordExport(ctx, []string{"old", "recent", "kept", "unknown", "missing"}, "/a/x.parquet", "abc", 500)
	if err != nil || n != 3 {
		t.Fatalf("RecordExport = %d, %v; want 3 (only marked thoughts)", n, err)
	}
	for _, r := range listRemovals(t, rs) {
		exported := r.Thought.ID != "unexported"
		if exported != (r.ExportedAt == 500 && r.Archive == "/a/x.parquet" && r.ArchiveSHA256 == "abc") {
			t.Errorf("removal %+v", r)
		}
	}
	// Cutoff 600: old (marked 100) and unknown (exported 500) qualify;
	// recent (marked 900), unexported and kept do not.
	done, err := rs.FinalizeRemoval(ctx, []string{"old", "recent", "unexported", "kept", "unknown", "missing"}, 600)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(done, []string{"old", "unknown"}) {
		t.Fatalf("finalized %v; want [old unknown]", done)
	}
	for _, id := range []string{"old", "unknown"} {
		_, err := s.Thought(ctx, id)
		wantCode(t, err, memory.CodeNotFound)
	}
	for _, id := range []string{"recent", "unexported", "kept"} {
		if _, err := s.Thought(ctx, id); err != nil {
			t.Fatalf("thought %s was deleted: %v", id, err)
		}
	}
	if st, err := s.VectorStats(ctx, spA); err != nil || st.InSpace != 0 {
		t.Fatalf("the finalized thought's vector remains: %+v %v", st, err)
	}
	if !slices.Equal(removalIDs(listRemovals(t, rs)), []string{"unexported", "recent"}) {
		t.Fatalf("removals after finalize %v", removalIDs(listRemovals(t, rs)))
	}
	if done, err := rs.FinalizeRemoval(ctx, []string{"old"}, 600); err != nil || len(done) != 0 {
		t.Fatalf("finalizing again: %v %v", done, err)
	}
}

func testCandidatesFollowTheirThought(t *testing.T, s memory.Store) {
	cs := candidates(t, s)
	rs := removals(t, s)
	addThoughts(t, s, thought("t1", "the secret is hunter2", 1, s1), thought("t2", "archived text", 2, s1))
	withSentence := func(c memory.KGCandidate, sentence string) memory.KGCandidate {
		c.Data = memory.RawObject(`{"rule":"cap","sentence":"` + sentence + `"}`)
		return c
	}
	stage(t, cs,
		withSentence(entCand("p1", "hunter2", 0.9, "t1"), "the secret is hunter2"),
		withSentence(entCand("d1", "Secret", 0.9, "t1"), "the secret is hunter2"),
		withSentence(entCand("a1", "Archived", 0.9, "t2"), "archived text"))
	if _, err := cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "d1", Status: memory.CandidateRejected, DecidedAt: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RedactThought(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	got, err := cs.Candidates(ctx, memory.CandidateFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(candIDs(got), "p1") || !slices.Contains(candIDs(got), "d1") {
		t.Fatalf("after forgetting t1: %v; want its pending candidate gone, its decided one kept", candIDs(got))
	}
	for _, c := range got {
		if c.ID == "d1" && string(c.Data) != `{"rule":"cap"}` {
			t.Fatalf("the decided candidate still quotes the forgotten thought: %s", c.Data)
		}
	}
	if _, err := rs.MarkRemoval(ctx, []string{"t2"}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.RecordExport(ctx, []string{"t2"}, "/a", "x", 1); err != nil {
		t.Fatal(err)
	}
	if done, err := rs.FinalizeRemoval(ctx, []string{"t2"}, 10); err != nil || len(done) != 1 {
		t.Fatalf("finalize %v %v", done, err)
	}
	got, _ = cs.Candidates(ctx, memory.CandidateFilter{IDs: []string{"a1"}})
	if len(got) != 1 || string(got[0].Data) != `{"rule":"cap"}` || got[0].Status != memory.CandidatePending {
		t.Fatalf("the candidate of a finalized thought: %+v", got)
	}
}
