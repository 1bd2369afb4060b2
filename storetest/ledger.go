package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// This file checks the ledger (memory.LedgerStore): every write that
// creates, edits, marks, forgets or deletes a record leaves an entry with
// the op, the time by the store's clock and the fields an edit changed,
// and nothing else.

// ClockedOpener opens a fresh, empty store whose ledger reads the clock
// now; the suite closes it.
type ClockedOpener func(t *testing.T, now func() time.Time) memory.Store

// clock is a test's clock: each step sets the time its writes are dated
// by.
type clock struct{ ms int64 }

func (c *clock) now() time.Time { return time.UnixMilli(c.ms) }

// RunLedger runs the ledger's conformance tests.
func RunLedger(t *testing.T, open ClockedOpener) {
	tests := []struct {
		name string
		fn   func(*testing.T, memory.Store, *clock)
	}{
		{"ObservationsCapsulesSummariesPins", testLedgerRecords},
		{"Thoughts", testLedgerThoughts},
		{"KnowledgeGraph", testLedgerGraph},
		{"Candidates", testLedgerCandidates},
		{"ArtifactsAndSessions", testLedgerArtifactsSessions},
		{"Imports", testLedgerImports},
		{"Paging", testLedgerPaging},
		{"IndexSeesOnlyItsKinds", testLedgerIndexKinds},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{ms: 1}
			s := open(t, c.now)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s, c)
		})
	}
}

// historyOf reads a record's whole history, a page of two at a time (so
// paging is exercised everywhere), and checks it is ordered and names id.
func historyOf(t *testing.T, s memory.Store, id string) []memory.LedgerEntry {
	t.Helper()
	var all []memory.LedgerEntry
	var after int64
	for {
		page, known, err := s.History(ctx, id, after, 2)
		if err != nil {
			t.Fatalf("History(%s): %v", id, err)
		}
		if len(page) > 0 && !known {
			t.Fatalf("History(%s) gave entries but says the id is unknown", id)
		}
		if len(page) == 0 {
			return all
		}
		for _, e := range page {
			if e.ID != id || e.Seq <= after {
				t.Fatalf("History(%s) after %d gave %+v", id, after, e)
			}
			after = e.Seq
		}
		all = append(all, page...)
	}
}

// ledgerText renders entries as "op[fields]@at kind", one per entry.
func ledgerText(es []memory.LedgerEntry) string {
	var parts []string
	for _, e := range es {
		s := e.Op
		if len(e.Fields) > 0 {
			s += "[" + strings.Join(e.Fields, ",") + "]"
		}
		parts = append(parts, fmt.Sprintf("%s@%d %s", s, e.At, e.Kind))
	}
	return strings.Join(parts, " ")
}

// wantHistory checks each record's history against its rendering.
func wantHistory(t *testing.T, s memory.Store, want map[string]string) {
	t.Helper()
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if got := ledgerText(historyOf(t, s, id)); got != want[id] {
			t.Errorf("history of %s:\n got %s\nwant %s", id, got, want[id])
		}
	}
}

// noText fails when the ledger entries of ids hold any of texts.
func noText(t *testing.T, s memory.Store, ids []string, texts ...string) {
	t.Helper()
	for _, id := range ids {
		b, err := json.Marshal(historyOf(t, s, id))
		if err != nil {
			t.Fatal(err)
		}
		for _, txt := range texts {
			if strings.Contains(string(b), txt) {
				t.Fatalf("the history of %s holds %q: %s", id, txt, b)
			}
		}
	}
}

func testLedgerRecords(t *testing.T, s memory.Store, c *clock) {
	c.ms = 1000
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 1000, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	c.ms = 2000
	if _, err := s.AppendObservations(ctx, []memory.NewObservation{
		{Observation: obs("o1", "the secret is hunter2", 2000, s1)}, {Observation: obs("o2", "kept", 2000, s1)}}); err != nil {
		t.Fatal(err)
	}
	c.ms = 2500
	putVectors(t, s, emb(memory.VectorObservation, "o2", spA, 1)) // derived: not a ledger entry
	c.ms = 3000
	if _, err := s.PutSummary(ctx, memory.Summary{ID: "m1", CapsuleID: "c1", Content: "first summary", Confidence: 0.5, CreatedAt: 3000}); err != nil {
		t.Fatal(err)
	}
	c.ms = 4000
	if _, err := s.PutSummary(ctx, memory.Summary{ID: "m9", CapsuleID: "c1", Content: "second summary with hunter2", Confidence: 0.5, CreatedAt: 4000}); err != nil {
		t.Fatal(err)
	}
	c.ms = 5000
	if _, err := s.AddPin(ctx, memory.Pin{ID: "p1", TargetType: memory.TargetObservation, TargetID: "o1", CreatedAt: 5000, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	c.ms = 6000
	if _, err := s.Redact(ctx, "o1"); err != nil {
		t.Fatal(err)
	}
	c.ms = 6500
	if _, err := s.Redact(ctx, "o1"); err != nil { // changes nothing, logs nothing
		t.Fatal(err)
	}
	c.ms = 7000
	if err := s.RemovePin(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	c.ms = 8000
	if _, err := s.CloseCapsule(ctx, "c1", 8000, nil); err != nil {
		t.Fatal(err)
	}
	c.ms = 9000
	if _, err := s.RedactSummary(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	wantHistory(t, s, map[string]string{
		"c1": "create@1000 capsule close[status,closed_at]@8000 capsule",
		"o1": "create@2000 observation forget[content,redacted]@6000 observation",
		"o2": "create@2000 observation",
		"m1": "create@3000 summary update[content,created_at]@4000 summary forget[content,redacted]@9000 summary",
		"p1": "create@5000 pin delete@7000 pin",
	})
	noText(t, s, []string{"c1", "o1", "o2", "m1", "p1"}, "hunter2", "summary with")
	// A removed pin's history stays readable.
	if _, known, err := s.History(ctx, "p1", 0, 10); err != nil || !known {
		t.Fatalf("History of a removed pin: known %v, %v", known, err)
	}
}

func testLedgerThoughts(t *testing.T, s memory.Store, c *clock) {
	rs := removals(t, s)
	c.ms = 1000
	sum := thought("t3", "t2 says hunter2", 1000, s1)
	sum.IsSummary, sum.SummaryOf = true, []string{"t2"}
	withTags := thought("t2", "hunter2 is the password", 1000, s1)
	withTags.Tags = []string{"secret"}
	addThoughts(t, s, thought("t1", "to archive", 1000, s1), withTags, sum)
	c.ms = 2000
	if _, err := s.SetThoughtStatus(ctx, []string{"t1"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}
	c.ms = 3000
	if _, err := s.SetThoughtStatus(ctx, []string{"t1"}, memory.StatusActive); err != nil {
		t.Fatal(err)
	}
	c.ms = 3500
	if _, err := s.SetThoughtStatus(ctx, []string{"t1"}, memory.StatusActive); err != nil { // no change
		t.Fatal(err)
	}
	c.ms = 4000
	if _, err := rs.MarkRemoval(ctx, []string{"t1"}, 4000); err != nil {
		t.Fatal(err)
	}
	c.ms = 5000
	if _, err := rs.RecordExport(ctx, []string{"t1"}, "/archive/a.parquet", "abc", 5000); err != nil {
		t.Fatal(err)
	}
	c.ms = 6000
	if done, err := rs.FinalizeRemoval(ctx, []string{"t1"}, 10_000); err != nil || len(done) != 1 {
		t.Fatalf("FinalizeRemoval = %v, %v", done, err)
	}
	c.ms = 7000
	if _, err := s.RedactThought(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	wantHistory(t, s, map[string]string{
		"t1": "create@1000 thought mark[status]@2000 thought unmark[status]@3000 thought mark[status]@4000 thought " +
			"export[archive]@5000 thought delete@6000 thought",
		"t2": "create@1000 thought forget[content,tags,redacted]@7000 thought",
		// The summary made from t2 is forgotten with it.
		"t3": "create@1000 thought forget[content,redacted]@7000 thought",
	})
	noText(t, s, []string{"t1", "t2", "t3"}, "hunter2", "archive.parquet", "secret")
	if _, known, err := s.History(ctx, "t1", 0, 10); err != nil || !known {
		t.Fatalf("History of a finalized thought: known %v, %v", known, err)
	}
}

func testLedgerGraph(t *testing.T, s memory.Store, c *clock) {
	c.ms = 1000
	e1 := memory.KGEntity{ID: "e1", Name: "Alpha", Type: "service", CreatedAt: 1000, UpdatedAt: 1000, Scope: s1}
	putEntities(t, s, e1, memory.KGEntity{ID: "e2", Name: "Beta", Type: "service", CreatedAt: 1000, UpdatedAt: 1000, Scope: s1})
	c.ms = 2000
	for _, o := range []memory.KGObservation{{ID: "f1", EntityID: "e1", Content: "Alpha holds hunter2", CreatedAt: 2000},
		{ID: "f2", EntityID: "e1", Content: "Alpha is old", CreatedAt: 2000}} {
		if _, err := s.AddKGObservation(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddEdge(ctx, memory.KGEdge{ID: "g1", Source: "e1", Target: "e2", Relation: "calls_hunter2", CreatedAt: 2000}); err != nil {
		t.Fatal(err)
	}
	c.ms = 3000
	e1.Name, e1.UpdatedAt = "Alpha2", 3000
	putEntities(t, s, e1) // its facts and edges are re-indexed: not ledger entries of theirs
	c.ms = 3500
	e1.UpdatedAt = 3500
	putEntities(t, s, e1) // nothing changes
	c.ms = 4000
	e1.Data, e1.UpdatedAt = memory.RawObject(`{"tier":1}`), 4000
	putEntities(t, s, e1)
	c.ms = 5000
	if err := s.DeleteKGObservation(ctx, "f2"); err != nil {
		t.Fatal(err)
	}
	c.ms = 6000
	if err := s.DeleteEntity(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	wantHistory(t, s, map[string]string{
		"e1": "create@1000 kg_entity update[name]@3000 kg_entity update[data]@4000 kg_entity delete@6000 kg_entity",
		"e2": "create@1000 kg_entity",
		"f1": "create@2000 kg_observation delete@6000 kg_observation",
		"f2": "create@2000 kg_observation delete@5000 kg_observation",
		"g1": "create@2000 kg_edge delete@6000 kg_edge",
	})
	noText(t, s, []string{"e1", "f1", "f2", "g1"}, "hunter2", "Alpha")
}

func testLedgerCandidates(t *testing.T, s memory.Store, c *clock) {
	cs := candidates(t, s)
	c.ms = 1000
	addThoughts(t, s, thought("th", "Payments calls Ledger", 1000, s1))
	stage(t, cs, entCand("c1", "Payments", 0.9, "th"), edgeCand("c2", "Payments", "calls", "Ledger", 0.8, "th"),
		entCand("c3", "Ledger", 0.7, "th"))
	c.ms = 2000
	if _, err := cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c1", Status: memory.CandidateApproved, DecidedAt: 2000,
		Entities:   []memory.KGEntity{{ID: "ent1", Name: "Payments", Type: "service", CreatedAt: 2000, UpdatedAt: 2000, Scope: s1}},
		PromotedID: "ent1"}); err != nil {
		t.Fatal(err)
	}
	c.ms = 3000
	if _, err := cs.DecideCandidate(ctx, memory.CandidateDecision{ID: "c3", Status: memory.CandidateRejected, DecidedAt: 3000,
		Feedback: "not a service", Block: true}); err != nil {
		t.Fatal(err)
	}
	c.ms = 4000
	// Forgetting the source drops its pending candidates and the sentence
	// the others quote.
	if _, err := s.RedactThought(ctx, "th"); err != nil {
		t.Fatal(err)
	}
	wantHistory(t, s, map[string]string{
		"c1":   "stage@1000 kg_entity_candidate approve[status,promoted_id]@2000 kg_entity_candidate update[data]@4000 kg_entity_candidate",
		"c2":   "stage@1000 kg_edge_candidate delete@4000 kg_edge_candidate",
		"c3":   "stage@1000 kg_entity_candidate reject[status,feedback]@3000 kg_entity_candidate update[data]@4000 kg_entity_candidate",
		"ent1": "create@2000 kg_entity",
		"th":   "create@1000 thought forget[content,redacted]@4000 thought",
	})
}

func testLedgerArtifactsSessions(t *testing.T, s memory.Store, c *clock) {
	a := artifact(`func Key() string { return "hunter2" }`)
	c.ms = 1000
	applyCode(t, s, memory.CodeChange{Artifacts: []memory.Artifact{a}})
	c.ms = 1500
	applyCode(t, s, memory.CodeChange{Artifacts: []memory.Artifact{a}}) // content-addressed: kept as it is
	c.ms = 2000
	if _, err := s.RedactArtifact(ctx, a.Hash, 2000); err != nil {
		t.Fatal(err)
	}
	c.ms = 3000
	applyCode(t, s, memory.CodeChange{Artifacts: []memory.Artifact{a}}) // the same code again restores it
	want := map[string]string{
		a.Hash: "create@1000 code_artifact forget[content,redacted]@2000 code_artifact update[content,redacted]@3000 code_artifact",
	}
	if vs, ok := s.(memory.InnerVoiceStore); ok {
		c.ms = 4000
		if _, err := vs.CreateVoiceSession(ctx, memory.InnerVoiceSession{ID: "v1", Version: memory.InnerVoiceSessionVersion, CreatedAt: 4000, LastInteraction: 4000}); err != nil {
			t.Fatal(err)
		}
		c.ms = 5000
		if err := vs.DeleteVoiceSession(ctx, "v1"); err != nil {
			t.Fatal(err)
		}
		want["v1"] = "create@4000 inner_voice_session delete@5000 inner_voice_session"
	}
	wantHistory(t, s, want)
	noText(t, s, []string{a.Hash}, "hunter2")
}

func testLedgerImports(t *testing.T, s memory.Store, c *clock) {
	c.ms = 1000
	d := memory.Dump{
		Observations: []memory.Observation{obs("o1", "imported", 10, s1)},
		Thoughts:     []memory.Thought{thought("t1", "imported thought", 10, s1)},
		Entities:     []memory.KGEntity{{ID: "e1", Name: "Imported", Type: "service", CreatedAt: 10, UpdatedAt: 10}},
	}
	if err := s.Import(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	// The next transaction is no import.
	c.ms = 2000
	addThoughts(t, s, thought("t2", "written", 2000, s1))
	want := map[string]string{
		"o1": "import@1000 observation",
		"t1": "import@1000 thought",
		"e1": "import@1000 kg_entity",
		"t2": "create@2000 thought",
	}
	if l, ok := s.(memory.Loader); ok {
		c.ms = 3000
		parts := []memory.Dump{{Thoughts: []memory.Thought{thought("t3", "loaded", 10, s1)}}, {}}
		if err := l.Load(ctx, func() (memory.Dump, error) { d := parts[0]; parts = parts[1:]; return d, nil }, nil, nil); err != nil {
			t.Fatal(err)
		}
		want["t3"] = "import@3000 thought"
	}
	wantHistory(t, s, want)
}

func testLedgerPaging(t *testing.T, s memory.Store, c *clock) {
	c.ms = 1000
	addThoughts(t, s, thought("t1", "toggled", 1000, s1), thought("t2", "interleaved", 1000, s1))
	for i := range 6 {
		c.ms = int64(2000 + 1000*i)
		status := memory.StatusRemoval
		if i%2 == 1 {
			status = memory.StatusActive
		}
		if _, err := s.SetThoughtStatus(ctx, []string{"t1", "t2"}, status); err != nil {
			t.Fatal(err)
		}
	}
	all, known, err := s.History(ctx, "t1", 0, 100)
	if err != nil || !known || len(all) != 7 {
		t.Fatalf("History(t1) = %d entries, known %v, %v; want 7", len(all), known, err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq || all[i].At < all[i-1].At {
			t.Fatalf("entries out of order: %+v then %+v", all[i-1], all[i])
		}
	}
	// Pages of three, each after the last of the one before, give the
	// same entries.
	var paged []memory.LedgerEntry
	var after int64
	for range 4 {
		page, _, err := s.History(ctx, "t1", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 3 {
			t.Fatalf("a page of 3 held %d entries", len(page))
		}
		paged = append(paged, page...)
		if len(page) > 0 {
			after = page[len(page)-1].Seq
		}
	}
	sameJSON(t, "paged history", paged, all)
	// Past the end: no entries, and the id is still known.
	page, known, err := s.History(ctx, "t1", all[len(all)-1].Seq, 3)
	if err != nil || len(page) != 0 || !known {
		t.Fatalf("History past the end = %+v, known %v, %v", page, known, err)
	}
	// An id naming nothing is unknown.
	page, known, err = s.History(ctx, "nothing-here", 0, 10)
	if err != nil || len(page) != 0 || known {
		t.Fatalf("History of an unknown id = %+v, known %v, %v", page, known, err)
	}
}

func testLedgerIndexKinds(t *testing.T, s memory.Store, c *clock) {
	add(t, s, obs("o1", "indexed", 10, s1))
	seq0 := lastSeq(t, s)
	// Writes of records no index holds are ledger entries only.
	c.ms = 1000
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 1000, Scope: memory.Scope{SessionID: "other"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddPin(ctx, memory.Pin{ID: "p1", TargetType: memory.TargetObservation, TargetID: "o1", CreatedAt: 1000}); err != nil {
		t.Fatal(err)
	}
	applyCode(t, s, memory.CodeChange{Artifacts: []memory.Artifact{artifact("func A() {}")}})
	if _, keys, _ := changesSince(t, s, spA, seq0); len(keys) != 0 {
		t.Fatalf("ChangesSince after writing a capsule, a pin and an artifact = %v; want nothing", keys)
	}
	wantHistory(t, s, map[string]string{"c1": "create@1000 capsule", "p1": "create@1000 pin"})
	// A record that changed is read again once, whatever its entries.
	c.ms = 2000
	if _, err := s.Redact(ctx, "o1"); err != nil {
		t.Fatal(err)
	}
	recs, keys, _ := changesSince(t, s, spA, seq0)
	if !slices.Equal(keys, []string{"observation/o1"}) || !recs["observation/o1"].Gone {
		t.Fatalf("ChangesSince after forgetting o1 = %v", keys)
	}
}
