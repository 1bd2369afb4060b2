package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// Opener opens a fresh, empty store; the suite closes it.
type Opener func(t *testing.T) memory.Store

// Run runs the conformance suite.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, memory.Store)
	}{
		{"AppendAndRead", testAppendAndRead},
		{"AppendIsAllOrNothing", testAppendAllOrNothing},
		{"CapsuleLifecycle", testCapsuleLifecycle},
		{"CapsuleLister", testCapsuleLister},
		{"ObservationsJoinOpenCapsule", testJoinOpenCapsule},
		{"ExplicitCapsuleJoin", testExplicitCapsuleJoin},
		{"SummaryReplaceKeepsID", testSummaryReplace},
		{"CurrentSummary", testCurrentSummary},
		{"Pins", testPins},
		{"RedactRemovesText", testRedact},
		{"RedactSummary", testRedactSummary},
		{"RedactThought", testRedactThought},
		{"RedactArtifact", testRedactArtifact},
		{"DeletesAreFinal", testDeletesAreFinal},
		{"SearchScopeExcludeLimit", testSearch},
		{"SearchRanksByBM25", testSearchRanks},
		{"FTSSyntax", testFTSSyntax},
		{"ImportExportRoundTrip", testImportExport},
		{"ImportIsAllOrNothing", testImportAllOrNothing},
		{"ImportKnowledgeIsAllOrNothing", testImportKnowledgeAllOrNothing},
		{"ImportNamesTheFailingRecord", testImportNamesRecord},
		{"Stats", testStats},
		{"ThoughtRoundTrip", testThoughtRoundTrip},
		{"ThoughtListing", testThoughtListing},
		{"ThoughtStatus", testThoughtStatus},
		{"Entities", testEntities},
		{"EntityLookup", testEntityLookup},
		{"KGObservations", testKGObservations},
		{"Edges", testEdges},
		{"DeleteEntityCascades", testDeleteEntityCascades},
		{"VectorStats", testVectorStats},
		{"VectorBadInput", testVectorBadInput},
		{"PendingEmbeddings", testPendingEmbeddings},
		{"FillEmbeddings", testFillEmbeddings},
		{"RewriteMakesPending", testRewriteMakesPending},
		{"LoadIndex", testLoadIndex},
		{"ChangesSince", testChangesSince},
		{"Records", testRecords},
		{"SnapshotIsolation", testSnapshotIsolation},
		{"CodeRepos", testCodeRepos},
		{"CodeFiles", testCodeFiles},
		{"CodeGuards", testCodeGuards},
		{"CodeBadInput", testCodeBadInput},
		{"ArtifactIdempotent", testArtifactIdempotent},
		{"CodeEntityFilters", testCodeEntityFilters},
		{"CodeEntityNames", testCodeEntityNames},
		{"CodeLedger", testCodeLedger},
		{"EpisodeSeq", testEpisodeSeq},
		{"EpisodeOfAnotherSession", testEpisodeOtherSession},
		{"HydrationOrder", testHydrationOrder},
		{"GateResults", testGateResults},
		{"EpisodeCodeGuard", testEpisodeCodeGuard},
		{"BrowseCapsules", testBrowseCapsules},
		{"BrowseThoughts", testBrowseThoughts},
		{"BrowseEntities", testBrowseEntities},
		{"BrowseCodeEntities", testBrowseCodeEntities},
		{"ScopeValues", testScopeValues},
	}
	tests = append(tests, curationTests...)
	tests = append(tests, voiceTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
	// Tests that move records from one store to another.
	pairs := []struct {
		name string
		fn   func(t *testing.T, from, to memory.Store)
	}{
		{"ImportExportKnowledgeRoundTrip", testImportExportKnowledge},
		{"RedactedRoundTrip", testRedactedRoundTrip},
		{"LoadInParts", testLoadInParts},
	}
	for _, tc := range pairs {
		t.Run(tc.name, func(t *testing.T) {
			from, to := open(t), open(t)
			t.Cleanup(func() { from.Close(); to.Close() })
			tc.fn(t, from, to)
		})
	}
}

var ctx = context.Background()

func obs(id, content string, ts int64, scope memory.Scope) memory.Observation {
	return memory.Observation{ID: id, Kind: memory.KindMessage, Content: content,
		Provenance: json.RawMessage(`{"src":"test"}`), TS: ts, Scope: scope}
}

func add(t *testing.T, s memory.Store, o ...memory.Observation) []memory.Observation {
	t.Helper()
	batch := make([]memory.NewObservation, len(o))
	for i := range o {
		batch[i] = memory.NewObservation{Observation: o[i]}
	}
	out, err := s.AppendObservations(ctx, batch)
	if err != nil {
		t.Fatalf("AppendObservations: %v", err)
	}
	return out
}

func wantCode(t *testing.T, err error, code memory.Code) {
	t.Helper()
	if memory.CodeOf(err) != code {
		t.Fatalf("error = %v; want code %s", err, code)
	}
}

// snapshot is every record, for checking that a failed write changed nothing.
func snapshot(t *testing.T, s memory.Store) string {
	t.Helper()
	var recs []memory.Record
	if err := s.Export(ctx, func(r memory.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatalf("Export: %v", err)
	}
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.SizeBytes, st.Path = 0, ""
	return fmt.Sprintf("%s %+v", b, st)
}

var (
	s1 = memory.Scope{SessionID: "s1", RepoID: "r1"}
	s2 = memory.Scope{SessionID: "s2", RepoID: "r1"}
	s3 = memory.Scope{SessionID: "s3", RepoID: "r2"}
)

func testAppendAndRead(t *testing.T, s memory.Store) {
	in := obs("o1", "héllo wörld — unicode ✓", 1000, s1)
	in.Kind = memory.KindToolCall
	add(t, s, in)
	got, err := s.Observation(ctx, "o1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != in.ID || got.Kind != in.Kind || got.Content != in.Content || got.TS != in.TS || got.Scope != in.Scope ||
		string(got.Provenance) != string(in.Provenance) || got.Redacted {
		t.Fatalf("read back %+v; want %+v", got, in)
	}
	_, err = s.Observation(ctx, "missing")
	wantCode(t, err, memory.CodeNotFound)
}

func testAppendAllOrNothing(t *testing.T, s memory.Store) {
	add(t, s, obs("o1", "first", 1, s1))
	before := snapshot(t, s)
	_, err := s.AppendObservations(ctx, []memory.NewObservation{
		{Observation: obs("o2", "second", 2, s1)},
		{Observation: obs("o1", "duplicate id", 3, s1)},
	})
	wantCode(t, err, memory.CodeConflict)
	if after := snapshot(t, s); after != before {
		t.Fatalf("a failed batch changed the store:\nbefore %s\nafter  %s", before, after)
	}
	_, err = s.AppendObservations(ctx, []memory.NewObservation{{Observation: obs("o3", "x", 3, s1), CapsuleID: "no-such-capsule"}})
	wantCode(t, err, memory.CodeNotFound)
	if after := snapshot(t, s); after != before {
		t.Fatal("a batch naming a missing capsule changed the store")
	}
}

func testCapsuleLifecycle(t *testing.T, s memory.Store) {
	c, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", Intent: "fix", OpenedAt: 100, Scope: s1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != memory.CapsuleOpen || c.ClosedAt != nil {
		t.Fatalf("opened capsule %+v", c)
	}
	before := snapshot(t, s)
	_, err = s.OpenCapsule(ctx, memory.Capsule{ID: "c2", Type: "session", OpenedAt: 101, Scope: memory.Scope{SessionID: "s1"}})
	wantCode(t, err, memory.CodeConflict)
	_, err = s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 101, Scope: s2})
	wantCode(t, err, memory.CodeConflict)
	_, err = s.CloseCapsule(ctx, "c1", 50, nil)
	wantCode(t, err, memory.CodeInvalidParams)
	if snapshot(t, s) != before {
		t.Fatal("refused capsule writes changed the store")
	}
	sum := &memory.Summary{ID: "m1", Content: "closing summary", Confidence: 0.8, CreatedAt: 200, EvidenceRefs: []string{"o1"}}
	c, err = s.CloseCapsule(ctx, "c1", 200, sum)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != memory.CapsuleClosed || c.ClosedAt == nil || *c.ClosedAt != 200 || c.SummaryID != "m1" {
		t.Fatalf("closed capsule %+v", c)
	}
	before = snapshot(t, s)
	_, err = s.CloseCapsule(ctx, "c1", 300, nil)
	wantCode(t, err, memory.CodeConflict)
	_, err = s.CloseCapsule(ctx, "nope", 300, nil)
	wantCode(t, err, memory.CodeNotFound)
	if snapshot(t, s) != before {
		t.Fatal("refused close changed the store")
	}
	// The session may open a new capsule once the old one is closed.
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c3", Type: "session", OpenedAt: 300, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	// Capsules without a session do not conflict with each other.
	for _, id := range []string{"free1", "free2"} {
		if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: id, Type: "episode", OpenedAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
}

func testJoinOpenCapsule(t *testing.T, s memory.Store) {
	add(t, s, obs("before", "before the capsule", 1, s1))
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 2, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	add(t, s, obs("a", "one", 3, memory.Scope{SessionID: "s1"}), obs("b", "two", 4, s1), obs("other", "other session", 5, s2))
	c, err := s.Capsule(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.ObservationIDs, []string{"a", "b"}) {
		t.Fatalf("capsule members %v; want [a b]", c.ObservationIDs)
	}
	a, _ := s.Observation(ctx, "a")
	if a.Scope != s1 {
		t.Fatalf("joined observation scope %+v; want it filled from the capsule %+v", a.Scope, s1)
	}
	// An observation of the session in another repo does not join.
	add(t, s, obs("elsewhere", "same session, other repo", 6, memory.Scope{SessionID: "s1", RepoID: "r9"}))
	c, _ = s.Capsule(ctx, "c1")
	if len(c.ObservationIDs) != 2 {
		t.Fatalf("capsule members %v; an observation from another repo joined", c.ObservationIDs)
	}
}

func testExplicitCapsuleJoin(t *testing.T, s memory.Store) {
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "ep", Type: "episode", OpenedAt: 1, Scope: memory.Scope{RepoID: "r1", AgentID: "a1"}}); err != nil {
		t.Fatal(err)
	}
	out, err := s.AppendObservations(ctx, []memory.NewObservation{{Observation: obs("x", "in episode", 2, memory.Scope{}), CapsuleID: "ep"}})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Scope != (memory.Scope{RepoID: "r1", AgentID: "a1"}) {
		t.Fatalf("scope %+v not filled from the capsule", out[0].Scope)
	}
	before := snapshot(t, s)
	_, err = s.AppendObservations(ctx, []memory.NewObservation{{Observation: obs("y", "wrong repo", 3, memory.Scope{RepoID: "r2"}), CapsuleID: "ep"}})
	wantCode(t, err, memory.CodeInvalidParams)
	if _, err := s.CloseCapsule(ctx, "ep", 5, nil); err != nil {
		t.Fatal(err)
	}
	before = snapshot(t, s)
	_, err = s.AppendObservations(ctx, []memory.NewObservation{{Observation: obs("z", "late", 6, memory.Scope{}), CapsuleID: "ep"}})
	wantCode(t, err, memory.CodeConflict)
	if snapshot(t, s) != before {
		t.Fatal("a refused join changed the store")
	}
}

func testSummaryReplace(t *testing.T, s memory.Store) {
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 1, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	first, err := s.PutSummary(ctx, memory.Summary{ID: "m1", CapsuleID: "c1", Content: "running alpha", Confidence: 0.5, CreatedAt: 2})
	if err != nil {
		t.Fatal(err)
	}
	if first.Scope != s1 || first.EvidenceRefs == nil {
		t.Fatalf("summary %+v: want the capsule's scope and non-nil evidence", first)
	}
	second, err := s.PutSummary(ctx, memory.Summary{ID: "m2", CapsuleID: "c1", Content: "running beta", Confidence: 0.7, CreatedAt: 3, EvidenceRefs: []string{"o1"}})
	if err != nil {
		t.Fatal(err)
	}
	if second.ID != "m1" {
		t.Fatalf("replacement id %s; want the original m1", second.ID)
	}
	got, _ := s.Summary(ctx, "m1")
	if got.Content != "running beta" || got.Confidence != 0.7 || !slices.Equal(got.EvidenceRefs, []string{"o1"}) {
		t.Fatalf("summary after replace %+v", got)
	}
	// The index follows the replacement.
	for q, want := range map[string]int{"alpha": 0, "beta": 1} {
		res, err := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{q}}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Summaries) != want {
			t.Fatalf("search %q found %d summaries; want %d", q, len(res.Summaries), want)
		}
	}
	_, err = s.PutSummary(ctx, memory.Summary{ID: "m3", CapsuleID: "missing", Content: "x", CreatedAt: 1})
	wantCode(t, err, memory.CodeNotFound)
}

func testCurrentSummary(t *testing.T, s memory.Store) {
	for _, c := range []memory.Capsule{
		{ID: "closed", Type: "session", OpenedAt: 1, Scope: s1},
		{ID: "open", Type: "session", OpenedAt: 5, Scope: s2},
		{ID: "open-nosum", Type: "session", OpenedAt: 5, Scope: s3},
	} {
		if _, err := s.OpenCapsule(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CloseCapsule(ctx, "closed", 2, &memory.Summary{ID: "m-closed", Content: "done", Confidence: 1, CreatedAt: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSummary(ctx, memory.Summary{ID: "m-open", CapsuleID: "open", Content: "ongoing", Confidence: 0.6, CreatedAt: 6}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		scope memory.Scope
		want  string
	}{
		{memory.Scope{SessionID: "s2"}, "m-open"},
		{s2, "m-open"},
		{memory.Scope{SessionID: "s2", RepoID: "r2"}, ""}, // outside the requested repo
		{memory.Scope{SessionID: "s1"}, ""},               // closed
		{memory.Scope{SessionID: "s3"}, ""},               // open without a summary
		{memory.Scope{RepoID: "r1"}, ""},                  // no session named
	} {
		got, err := s.CurrentSummary(ctx, tc.scope)
		if err != nil {
			t.Fatal(err)
		}
		id := ""
		if got != nil {
			id = got.ID
		}
		if id != tc.want {
			t.Errorf("CurrentSummary(%+v) = %q; want %q", tc.scope, id, tc.want)
		}
	}
}

func ptr(v int64) *int64 { return &v }

func testPins(t *testing.T, s memory.Store) {
	add(t, s, obs("o1", "alpha", 1, s1), obs("o2", "beta", 2, s1), obs("o3", "gamma", 3, s2), obs("o4", "delta", 4, s1))
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 1, Scope: s2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSummary(ctx, memory.Summary{ID: "m1", CapsuleID: "c1", Content: "sum", Confidence: 1, CreatedAt: 2}); err != nil {
		t.Fatal(err)
	}
	pins := []memory.Pin{
		{ID: "p-old", TargetType: memory.TargetObservation, TargetID: "o1", CreatedAt: 10, Scope: s1},
		{ID: "p-new", TargetType: memory.TargetObservation, TargetID: "o2", CreatedAt: 30, Scope: s1, Reason: "key"},
		{ID: "p-expired", TargetType: memory.TargetObservation, TargetID: "o1", CreatedAt: 20, ExpiresAt: ptr(100), Scope: s1},
		{ID: "p-later", TargetType: memory.TargetObservation, TargetID: "o1", CreatedAt: 21, ExpiresAt: ptr(1000), Scope: s1},
		{ID: "p-repo", TargetType: memory.TargetObservation, TargetID: "o3", CreatedAt: 15, Scope: memory.Scope{RepoID: "r1"}},
		{ID: "p-sum", TargetType: memory.TargetSummary, TargetID: "m1", CreatedAt: 16, Scope: s2},
		{ID: "p-global", TargetType: memory.TargetObservation, TargetID: "o4", CreatedAt: 5},
		{ID: "p-redacted", TargetType: memory.TargetObservation, TargetID: "o4", CreatedAt: 40, Scope: s1},
	}
	for _, p := range pins {
		if _, err := s.AddPin(ctx, p); err != nil {
			t.Fatalf("AddPin %s: %v", p.ID, err)
		}
	}
	if _, err := s.Redact(ctx, "o4"); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	_, err := s.AddPin(ctx, memory.Pin{ID: "p-bad", TargetType: memory.TargetObservation, TargetID: "nope", CreatedAt: 1})
	wantCode(t, err, memory.CodeNotFound)
	_, err = s.AddPin(ctx, memory.Pin{ID: "p-bad2", TargetType: memory.TargetSummary, TargetID: "o1", CreatedAt: 1})
	wantCode(t, err, memory.CodeNotFound)
	_, err = s.AddPin(ctx, memory.Pin{ID: "p-old", TargetType: memory.TargetObservation, TargetID: "o1", CreatedAt: 1})
	wantCode(t, err, memory.CodeConflict)
	if snapshot(t, s) != before {
		t.Fatal("refused pins changed the store")
	}
	ids := func(q memory.PinQuery) []string {
		got, err := s.ActivePins(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range got {
			if p.Target.ID() != p.Pin.TargetID || p.TargetType != p.Pin.TargetType {
				t.Fatalf("pin %s has target %s", p.Pin.ID, p.Target.ID())
			}
			out = append(out, p.Pin.ID)
		}
		return out
	}
	for _, tc := range []struct {
		q    memory.PinQuery
		want []string
	}{
		{memory.PinQuery{Scope: s1, Now: 50}, []string{"p-new", "p-later", "p-expired", "p-old"}},
		{memory.PinQuery{Scope: s1, Now: 500}, []string{"p-new", "p-later", "p-old"}},
		{memory.PinQuery{Scope: s1, Now: 1000}, []string{"p-new", "p-old"}}, // expiry is exclusive
		{memory.PinQuery{Scope: s1, Now: 1000, IncludeRedacted: true}, []string{"p-redacted", "p-new", "p-old"}},
		{memory.PinQuery{Scope: memory.Scope{RepoID: "r1"}, Now: 1000}, []string{"p-new", "p-sum", "p-repo", "p-old"}},
		{memory.PinQuery{Scope: memory.Scope{}, Now: 1000}, []string{"p-new", "p-sum", "p-repo", "p-old"}},
		{memory.PinQuery{Scope: memory.Scope{}, Now: 1000, IncludeRedacted: true}, []string{"p-redacted", "p-new", "p-sum", "p-repo", "p-old", "p-global"}},
		{memory.PinQuery{Scope: s3, Now: 1}, nil},
	} {
		if got := ids(tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("ActivePins(%+v) = %v; want %v", tc.q, got, tc.want)
		}
	}
	// A pin reads back by id as it was added, expired or active, whatever
	// became of its target.
	for _, want := range pins {
		got, err := s.Pin(ctx, want.ID)
		if err != nil {
			t.Fatalf("Pin %s: %v", want.ID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Pin %s = %+v; want %+v", want.ID, got, want)
		}
	}
	_, err = s.Pin(ctx, "p-bad")
	wantCode(t, err, memory.CodeNotFound)
	if err := s.RemovePin(ctx, "p-new"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.RemovePin(ctx, "p-new"), memory.CodeNotFound)
	_, err = s.Pin(ctx, "p-new")
	wantCode(t, err, memory.CodeNotFound)
	if got := ids(memory.PinQuery{Scope: s1, Now: 1000}); !slices.Equal(got, []string{"p-old"}) {
		t.Fatalf("after unpin: %v", got)
	}
}

func testRedact(t *testing.T, s memory.Store) {
	add(t, s, obs("o1", "the secret password is hunter2", 1, s1), obs("o2", "password rotation policy", 2, s1))
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 0, Scope: s2}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Redact(ctx, "o1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Redacted || got.Content != memory.RedactedContent || got.ID != "o1" || got.TS != 1 || got.Scope != s1 || string(got.Provenance) != `{"src":"test"}` {
		t.Fatalf("redacted observation %+v", got)
	}
	res, err := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{"password"}}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Observations) != 1 || res.Observations[0].Entity.ID() != "o2" {
		t.Fatalf("search after forget found %v", res.Observations)
	}
	for _, q := range []string{"hunter2", "secret", "redacted"} {
		res, _ := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{q}}, Limit: 10})
		if len(res.Observations) != 0 {
			t.Fatalf("search %q found a forgotten observation", q)
		}
	}
	again, err := s.Redact(ctx, "o1")
	if err != nil || again.Content != memory.RedactedContent {
		t.Fatalf("second forget: %+v %v", again, err)
	}
	_, err = s.Redact(ctx, "missing")
	wantCode(t, err, memory.CodeNotFound)
}

func ids(hits []memory.TextHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Entity.ID())
	}
	return out
}

func testSearch(t *testing.T, s memory.Store) {
	add(t, s,
		obs("a1", "deploy failed on staging", 1, s1),
		obs("a2", "deploy succeeded", 2, s2),
		obs("a3", "deploy rollback", 3, s3),
		obs("a4", "unrelated note", 4, s1),
	)
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 0, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSummary(ctx, memory.Summary{ID: "m1", CapsuleID: "c1", Content: "deploy work", Confidence: 1, CreatedAt: 5}); err != nil {
		t.Fatal(err)
	}
	q := memory.TextQuery{Syntax: memory.SyntaxText, Terms: []string{"deploy"}}
	for _, tc := range []struct {
		search  memory.TextSearch
		obs     []string
		summary []string
	}{
		{memory.TextSearch{Query: q, Limit: 10}, []string{"a1", "a2", "a3"}, []string{"m1"}},
		{memory.TextSearch{Query: q, Scope: memory.Scope{RepoID: "r1"}, Limit: 10}, []string{"a1", "a2"}, []string{"m1"}},
		{memory.TextSearch{Query: q, Scope: s2, Limit: 10}, []string{"a2"}, nil},
		{memory.TextSearch{Query: q, Scope: memory.Scope{AgentID: "nobody"}, Limit: 10}, nil, nil},
		{memory.TextSearch{Query: q, Exclude: []string{"a1", "m1"}, Limit: 10}, []string{"a2", "a3"}, nil},
		{memory.TextSearch{Query: q, Limit: 1}, []string{"a2"}, []string{"m1"}},
		{memory.TextSearch{Query: q, Limit: 0}, nil, nil},
	} {
		res, err := s.SearchText(ctx, tc.search)
		if err != nil {
			t.Fatal(err)
		}
		got := ids(res.Observations)
		slices.Sort(got)
		want := slices.Clone(tc.obs)
		if tc.search.Limit != 1 {
			slices.Sort(want)
		}
		if tc.search.Limit == 1 {
			got = ids(res.Observations) // the shortest (best bm25) row
		}
		if !slices.Equal(got, want) || !slices.Equal(ids(res.Summaries), tc.summary) {
			t.Errorf("search %+v: observations %v summaries %v; want %v %v", tc.search, got, ids(res.Summaries), want, tc.summary)
		}
	}
}

func testSearchRanks(t *testing.T, s memory.Store) {
	add(t, s,
		obs("both", "authentication bug in the login flow", 1, s1),
		obs("auth", "authentication service restarted", 2, s1),
		obs("bug", "a bug in the parser", 3, s1),
		obs("none", "nothing relevant here", 4, s1),
		obs("z-tie", "authentication service restarted", 5, s1),
	)
	// Enough unrelated records that both words are rare, as in any real
	// memory (bm25 gives a word in over half the records no weight).
	for i := range 20 {
		add(t, s, obs(fmt.Sprintf("filler%02d", i), fmt.Sprintf("routine build step %d finished", i), int64(10+i), s1))
	}
	res, err := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{"authentication", "bug"}}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := ids(res.Observations)
	if len(got) != 4 || got[0] != "both" {
		t.Fatalf("ranked %v; want the record with both words first, then the three with one", got)
	}
	for i := 1; i < len(res.Observations); i++ {
		if res.Observations[i].Rank < res.Observations[i-1].Rank {
			t.Fatalf("ranks not ascending: %v", res.Observations)
		}
		if res.Observations[i].Rank == res.Observations[i-1].Rank && got[i] < got[i-1] {
			t.Fatalf("equal ranks not ordered by id: %v", got)
		}
	}
	if res.Observations[0].Rank >= 0 {
		t.Fatalf("bm25 rank %v; FTS5 ranks are negative", res.Observations[0].Rank)
	}
}

func testFTSSyntax(t *testing.T, s memory.Store) {
	add(t, s, obs("p", "the support group met on friday", 1, s1), obs("q", "group support is weekly", 2, s1), obs("r", "painting class", 3, s1))
	for expr, want := range map[string][]string{
		`"support group"`:      {"p"},
		`support group`:        {"p", "q"},
		`support NOT friday`:   {"q"},
		`paint*`:               {"r"},
		`painting OR friday`:   {"p", "r"},
		`NEAR(support met, 2)`: {"p"},
	} {
		res, err := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Syntax: memory.SyntaxFTS, Expr: expr}, Limit: 10})
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		got := ids(res.Observations)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("fts %s = %v; want %v", expr, got, want)
		}
	}
	for _, expr := range []string{`?`, `"unterminated`, `speaker:Caroline`, `Caroline:`, `C++`, `well-being`, `AND`, `(`, `NEAR(0,A)`, `NEAR(a b, x)`} {
		_, err := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Syntax: memory.SyntaxFTS, Expr: expr}, Limit: 10})
		if memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("fts %q: error %v; want invalid_params", expr, err)
		}
	}
	// The same strings as text are safe.
	for _, text := range []string{`?`, `"unterminated`, `speaker:Caroline`, `C++`, `well-being`, `AND`, `(`, `NEAR`} {
		if _, err := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{text}}, Limit: 10}); err != nil {
			t.Errorf("text term %q: %v", text, err)
		}
	}
}

func sampleDump() memory.Dump {
	return memory.Dump{
		Observations: []memory.Observation{
			obs("o1", "first", 1, s1), obs("o2", "second", 2, s1),
			{ID: "o3", Kind: memory.KindError, Content: memory.RedactedContent, Provenance: json.RawMessage(`{}`), TS: 3, Scope: s1, Redacted: true},
		},
		Capsules: []memory.Capsule{
			{ID: "c1", Type: "session", Intent: "work", Status: memory.CapsuleClosed, OpenedAt: 0, ClosedAt: ptr(5), Scope: s1, ObservationIDs: []string{"o1", "o2", "o3"}},
			{ID: "c2", Type: "session", Status: memory.CapsuleOpen, OpenedAt: 6, Scope: s2, ObservationIDs: []string{}},
		},
		Logged:    []memory.NewObservation{{Observation: obs("o4", "fourth joins c2", 7, memory.Scope{SessionID: "s2"})}},
		Summaries: []memory.Summary{{ID: "m1", CapsuleID: "c1", Content: "summary one", Confidence: 0.9, CreatedAt: 5, EvidenceRefs: []string{"o1"}}},
		Pins:      []memory.Pin{{ID: "p1", TargetType: memory.TargetSummary, TargetID: "m1", Reason: "r", CreatedAt: 6, ExpiresAt: ptr(99), Scope: s1}},
	}
}

func testImportExport(t *testing.T, s memory.Store) {
	var calls []int
	if err := s.Import(ctx, sampleDump(), func(done int) { calls = append(calls, done) }); err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || calls[len(calls)-1] != sampleDump().Len() {
		t.Fatalf("progress calls %v; want the last to be %d", calls, sampleDump().Len())
	}
	c2, _ := s.Capsule(ctx, "c2")
	if !slices.Equal(c2.ObservationIDs, []string{"o4"}) {
		t.Fatalf("logged observation did not join the open capsule: %v", c2.ObservationIDs)
	}
	res, _ := s.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{"first", "redacted"}}, Limit: 10})
	if !slices.Equal(ids(res.Observations), []string{"o1"}) {
		t.Fatalf("imported index holds %v; want only o1 (redacted rows are not indexed)", ids(res.Observations))
	}
	var recs []memory.Record
	if err := s.Export(ctx, func(r memory.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	var back memory.Dump
	for _, r := range recs {
		back.Add(r)
	}
	if back.Len() != sampleDump().Len() {
		t.Fatalf("exported %d records; want %d", back.Len(), sampleDump().Len())
	}
	// Re-importing the export into this store clashes on every id.
	wantCode(t, s.Import(ctx, back, nil), memory.CodeConflict)
}

func testImportAllOrNothing(t *testing.T, s memory.Store) {
	add(t, s, obs("existing", "already here", 1, s1))
	before := snapshot(t, s)
	for name, mutate := range map[string]func(*memory.Dump){
		"duplicate observation": func(d *memory.Dump) { d.Observations = append(d.Observations, obs("existing", "again", 1, s1)) },
		"unknown member":        func(d *memory.Dump) { d.Capsules[0].ObservationIDs = append(d.Capsules[0].ObservationIDs, "ghost") },
		"dangling pin":          func(d *memory.Dump) { d.Pins[0].TargetID = "ghost" },
		"second summary": func(d *memory.Dump) {
			d.Summaries = append(d.Summaries, memory.Summary{ID: "m2", CapsuleID: "c1", Content: "x", CreatedAt: 1})
		},
		"summary of nothing": func(d *memory.Dump) { d.Summaries[0].CapsuleID = "ghost" },
		"two open capsules": func(d *memory.Dump) {
			d.Capsules = append(d.Capsules, memory.Capsule{ID: "c9", Type: "session", Status: memory.CapsuleOpen, OpenedAt: 1, Scope: s2})
		},
	} {
		d := sampleDump()
		mutate(&d)
		if err := s.Import(ctx, d, nil); err == nil {
			t.Errorf("%s: import succeeded", name)
		}
		if snapshot(t, s) != before {
			t.Fatalf("%s: a failed import changed the store", name)
		}
	}
	d := sampleDump()
	d.Capsules[0].ObservationIDs = append(d.Capsules[0].ObservationIDs, "ghost")
	err := s.Import(ctx, d, nil)
	wantCode(t, err, memory.CodeNotFound)
	if !strings.Contains(err.Error(), `observation "ghost", which does not exist`) {
		t.Fatalf("unknown member: %v; want the missing observation named", err)
	}
}

// knowledgeDump is sampleDump with thoughts (private, tagged, a summary of
// others) and a knowledge graph: entities with data, observations (one
// leaving its scope to its entity) and edges. Its records come in an order
// Import must accept: an edge before the entities it names are listed.
func knowledgeDump() memory.Dump {
	d := sampleDump()
	d.Thoughts = []memory.Thought{
		{ID: "t1", Content: "retry the webhook with backoff", Origin: memory.OriginHuman, Tags: []string{"ops", "webhooks"}, SummaryOf: []string{},
			Status: memory.StatusActive, Significance: 0.9, CreatedAt: 10, Scope: s1},
		{ID: "t2", Content: "the signing key is in the vault", Origin: memory.OriginTool, Tags: []string{}, IsPrivate: true,
			Status: memory.StatusRemoval, Significance: 0.2, SummaryOf: []string{}, CreatedAt: 11, Scope: s1},
		{ID: "t3", Content: "webhooks need idempotency and backoff", Origin: memory.OriginModel, Tags: []string{"summary"},
			Status: memory.StatusActive, Significance: 0.5, IsSummary: true, SummaryOf: []string{"t1", "t2"}, Pipeline: "inner_voice", CreatedAt: 12},
	}
	d.Entities = []memory.KGEntity{
		{ID: "e1", Name: "Payments", Type: "service", Data: memory.RawObject(`{"team":"billing","tier":1}`), CreatedAt: 20, UpdatedAt: 25, Scope: s1},
		{ID: "e2", Name: "Stripe", Type: "vendor", CreatedAt: 21, UpdatedAt: 21, Scope: s1},
		{ID: "e3", Name: "ntp", Type: "daemon", CreatedAt: 22, UpdatedAt: 22},
	}
	d.KGObservations = []memory.KGObservation{
		{ID: "k1", EntityID: "e1", Content: "retries webhooks three times", CreatedAt: 30, Scope: s1},
		{ID: "k2", EntityID: "e1", Content: "owned by billing", CreatedAt: 31}, // takes e1's scope
		{ID: "k3", EntityID: "e3", Content: "keeps the clocks in step", CreatedAt: 32},
	}
	d.Edges = []memory.KGEdge{
		{ID: "g1", Source: "e1", Target: "e2", Relation: "depends_on", Data: memory.RawObject(`{"since":2021}`), CreatedAt: 40, Scope: s1},
		{ID: "g2", Source: "e1", Target: "e3", Relation: "uses", CreatedAt: 41}, // takes e1's scope
	}
	return d
}

// exportAll is every record a store exports, as JSON Lines.
func exportAll(t *testing.T, s memory.Store) (string, memory.Dump) {
	t.Helper()
	var b []byte
	var d memory.Dump
	err := s.Export(ctx, func(r memory.Record) error {
		line, err := json.Marshal(r)
		b = append(append(b, line...), '\n')
		d.Add(r)
		return err
	})
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	return string(b), d
}

func testImportExportKnowledge(t *testing.T, from, to memory.Store) {
	in := knowledgeDump()
	var calls []int
	if err := from.Import(ctx, in, func(done int) { calls = append(calls, done) }); err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || calls[len(calls)-1] != in.Len() {
		t.Fatalf("progress calls %v; want the last to be %d", calls, in.Len())
	}
	th, err := from.Thought(ctx, "t3")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "imported thought", th, in.Thoughts[2])
	priv, _ := from.Thought(ctx, "t2")
	if !priv.IsPrivate || priv.Status != memory.StatusRemoval {
		t.Fatalf("private thought in removal came back as %+v", priv)
	}
	ent, err := from.Entity(ctx, "e1")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "imported entity", ent, in.Entities[0])
	obs, _ := from.KGObservations(ctx, "e1")
	if len(obs) != 2 || obs[1].ID != "k2" || obs[1].Scope != s1 {
		t.Fatalf("entity observations %+v; want k1, k2 with e1's scope", obs)
	}
	edges, _ := from.Edges(ctx, "e1", 10)
	if !slices.Equal(edgeIDs(edges), []string{"g1", "g2"}) || edges[1].Scope != s1 || string(edges[0].Data) != `{"since":2021}` {
		t.Fatalf("edges %+v; want g1 (with data) and g2 with e1's scope", edges)
	}
	st, _ := from.Stats(ctx)
	if st.Thoughts != 3 || st.Entities != 3 || st.EntityObservations != 3 || st.Edges != 2 {
		t.Fatalf("stats %+v", st)
	}

	first, dump := exportAll(t, from)
	if dump.Len() != in.Len() || len(dump.Logged) != 0 {
		t.Fatalf("exported %d records; want %d", dump.Len(), in.Len())
	}
	// Thoughts, entities, observations and edges come back as imported
	// (scopes filled in), in insertion order.
	want := in
	want.KGObservations[1].Scope, want.KGObservations[2].Scope = s1, memory.Scope{}
	want.Edges[1].Scope = s1
	sameJSON(t, "exported thoughts", dump.Thoughts, want.Thoughts)
	sameJSON(t, "exported entities", dump.Entities, want.Entities)
	sameJSON(t, "exported entity observations", dump.KGObservations, want.KGObservations)
	sameJSON(t, "exported edges", dump.Edges, want.Edges)
	// Entities are exported before the records that name them.
	if i, j := strings.Index(first, `{"kg_entity"`), strings.Index(first, `{"kg_observation"`); i < 0 || j < i {
		t.Fatalf("entities are not exported before their observations:\n%s", first)
	}
	if i, j := strings.LastIndex(first, `{"kg_entity"`), strings.Index(first, `{"kg_edge"`); j < i {
		t.Fatalf("entities are not exported before the edges:\n%s", first)
	}

	// The export imports into an empty store, which exports it byte for byte.
	if err := to.Import(ctx, dump, nil); err != nil {
		t.Fatal(err)
	}
	if second, _ := exportAll(t, to); second != first {
		t.Fatalf("export → import → export differs:\n%s\n%s", first, second)
	}
	a, _ := from.Stats(ctx)
	b, _ := to.Stats(ctx)
	a.Path, b.Path, a.SizeBytes, b.SizeBytes = "", "", 0, 0
	if a != b {
		t.Fatalf("stats differ: %+v vs %+v", a, b)
	}
	// Every imported record waits for a vector: they are not exported.
	jobs, err := to.PendingEmbeddings(ctx, memory.Space{Provider: "p", Model: "m", Dim: 4}, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[memory.VectorKind]int{}
	for _, j := range jobs {
		kinds[j.Kind]++
	}
	if kinds[memory.VectorThought] != 3 || kinds[memory.VectorKGEntity] != 3 || kinds[memory.VectorKGObservation] != 3 || kinds[memory.VectorKGEdge] != 2 {
		t.Fatalf("pending after import: %v", kinds)
	}
	// Importing the export again clashes.
	wantCode(t, to.Import(ctx, dump, nil), memory.CodeConflict)
}

func testImportKnowledgeAllOrNothing(t *testing.T, s memory.Store) {
	addThoughts(t, s, thought("existing-thought", "already here", 1, s1))
	putEntities(t, s, entity("existing-entity", "Here", "thing", s1))
	before := snapshot(t, s)
	for name, tc := range map[string]struct {
		mutate func(*memory.Dump)
		code   memory.Code
	}{
		"thought already stored":                {func(d *memory.Dump) { d.Thoughts[1].ID = "existing-thought" }, memory.CodeConflict},
		"thought twice":                         {func(d *memory.Dump) { d.Thoughts[2].ID = "t1" }, memory.CodeConflict},
		"entity already stored":                 {func(d *memory.Dump) { d.Entities[2].ID = "existing-entity" }, memory.CodeConflict},
		"entity twice":                          {func(d *memory.Dump) { d.Entities[1].ID = "e1" }, memory.CodeConflict},
		"observation twice":                     {func(d *memory.Dump) { d.KGObservations[2].ID = "k1" }, memory.CodeConflict},
		"edge twice":                            {func(d *memory.Dump) { d.Edges[1].ID = "g1" }, memory.CodeConflict},
		"observation of nothing":                {func(d *memory.Dump) { d.KGObservations[2].EntityID = "ghost" }, memory.CodeNotFound},
		"edge from nothing":                     {func(d *memory.Dump) { d.Edges[1].Source = "ghost" }, memory.CodeNotFound},
		"edge to nothing":                       {func(d *memory.Dump) { d.Edges[1].Target = "ghost" }, memory.CodeNotFound},
		"observation out of its entity's scope": {func(d *memory.Dump) { d.KGObservations[1].Scope = s2 }, memory.CodeInvalidParams},
		"edge out of its source's scope":        {func(d *memory.Dump) { d.Edges[1].Scope = s3 }, memory.CodeInvalidParams},
	} {
		d := knowledgeDump()
		tc.mutate(&d)
		if err := s.Import(ctx, d, nil); memory.CodeOf(err) != tc.code {
			t.Errorf("%s: error %v; want %s", name, err, tc.code)
		}
		if snapshot(t, s) != before {
			t.Fatalf("%s: a failed import changed the store", name)
		}
	}
	// An entity already stored may be named by imported observations and
	// edges.
	d := memory.Dump{
		KGObservations: []memory.KGObservation{{ID: "k9", EntityID: "existing-entity", Content: "seen", CreatedAt: 2}},
		Edges:          []memory.KGEdge{{ID: "g9", Source: "existing-entity", Target: "existing-entity", Relation: "is", CreatedAt: 2}},
	}
	if err := s.Import(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	obs, _ := s.KGObservations(ctx, "existing-entity")
	if len(obs) != 1 || obs[0].Scope != s1 {
		t.Fatalf("observation of a stored entity: %+v", obs)
	}
}

func testImportNamesRecord(t *testing.T, s memory.Store) {
	addThoughts(t, s, thought("existing-thought", "already here", 1, s1))
	for name, tc := range map[string]struct {
		mutate  func(*memory.Dump)
		section memory.Section
		index   int
	}{
		"observation":        {func(d *memory.Dump) { d.Observations[2].ID = "o1" }, memory.SectionObservations, 2},
		"capsule":            {func(d *memory.Dump) { d.Capsules[1].ObservationIDs = []string{"ghost"} }, memory.SectionCapsules, 1},
		"pin":                {func(d *memory.Dump) { d.Pins[0].TargetID = "ghost" }, memory.SectionPins, 0},
		"thought":            {func(d *memory.Dump) { d.Thoughts[1].ID = "existing-thought" }, memory.SectionThoughts, 1},
		"entity":             {func(d *memory.Dump) { d.Entities[2].ID = "e2" }, memory.SectionEntities, 2},
		"entity observation": {func(d *memory.Dump) { d.KGObservations[1].EntityID = "ghost" }, memory.SectionKGObservations, 1},
		"edge":               {func(d *memory.Dump) { d.Edges[1].Target = "ghost" }, memory.SectionEdges, 1},
	} {
		d := knowledgeDump()
		tc.mutate(&d)
		err := s.Import(ctx, d, nil)
		var re *memory.RecordError
		if !errors.As(err, &re) || re.Section != tc.section || re.Index != tc.index || memory.CodeOf(err) == memory.CodeInternal {
			t.Errorf("%s: error %#v; want a typed *memory.RecordError naming %s[%d]", name, err, tc.section, tc.index)
		}
	}
}

func testStats(t *testing.T, s memory.Store) {
	if err := s.Import(ctx, sampleDump(), nil); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Observations != 4 || st.Redacted != 1 || st.IndexedObservations != 3 || st.Capsules != 2 || st.OpenCapsules != 1 ||
		st.Summaries != 1 || st.IndexedSummaries != 1 || st.Pins != 1 || st.SchemaVersion < 1 {
		t.Fatalf("stats %+v", st)
	}
}
