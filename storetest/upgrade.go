package storetest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// The upgrades every store's schema went through, checked the same way:
// a store opened at an old schema version gets records (or rows) its
// migrations must keep, and the upgraded store is checked with these
// helpers. Opening a store at an old version is each store's own affair.

// WriteBeforeLedger writes, into a store whose schema predates the
// ledger, the records CheckUpgradedLedger then looks at: an observation,
// two thoughts (one marked for removal), and an entity with a fact,
// both deleted.
func WriteBeforeLedger(t testing.TB, s memory.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.AppendObservations(ctx, []memory.NewObservation{{Observation: memory.Observation{ID: "o1", Kind: memory.KindMessage,
		Content: "old", TS: 5}}}); err != nil {
		t.Fatal(err)
	}
	for _, th := range []memory.Thought{{ID: "t1", Content: "old thought", Origin: memory.OriginHuman, Status: memory.StatusActive, Significance: 0.5, CreatedAt: 111},
		{ID: "t2", Content: "another", Origin: memory.OriginHuman, Status: memory.StatusActive, Significance: 0.5, CreatedAt: 222}} {
		if _, err := s.AddThought(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetThoughtStatus(ctx, []string{"t1"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutEntity(ctx, memory.KGEntity{ID: "e1", Name: "Gone", Type: "service", CreatedAt: 333, UpdatedAt: 333}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddKGObservation(ctx, memory.KGObservation{ID: "f1", EntityID: "e1", Content: "fact", CreatedAt: 444}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteEntity(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
}

// UnmarkAfterUpgrade marks t1 active again: the first write of the
// upgraded store, which its clock dates (5000 in CheckUpgradedLedger).
func UnmarkAfterUpgrade(t testing.TB, s memory.Store) {
	t.Helper()
	if _, err := s.SetThoughtStatus(context.Background(), []string{"t1"}, memory.StatusActive); err != nil {
		t.Fatal(err)
	}
}

// CheckUpgradedLedger checks the histories of WriteBeforeLedger's records
// after the upgrade and UnmarkAfterUpgrade at 5000: what can be told of
// the old rows is (a thought's or a graph record's creation, dated by its
// created_at while it exists, and its deletion), the rest is unknown, and
// the write after the upgrade is logged once.
func CheckUpgradedLedger(t testing.TB, s memory.LedgerStore, when string) {
	t.Helper()
	want := map[string]string{
		"o1": "unknown@0 observation",
		"t1": "create@111 thought unknown@0 thought unmark[status]@5000 thought",
		"t2": "create@222 thought",
		// Deleted before the upgrade: no created_at is left to date them.
		"e1": "create@0 kg_entity delete@0 kg_entity",
		"f1": "create@0 kg_observation delete@0 kg_observation",
	}
	for id, w := range want {
		if got := HistoryText(t, s, id); got != w {
			t.Errorf("%s: history of %s:\n got %s\nwant %s", when, id, got, w)
		}
	}
}

// HistoryText renders a record's history as "op[fields]@at kind ...".
func HistoryText(t testing.TB, s memory.LedgerStore, id string) string {
	t.Helper()
	es, known, err := s.History(context.Background(), id, 0, 100)
	if err != nil || !known {
		t.Fatalf("History(%s): known %v, %v", id, known, err)
	}
	var parts []string
	for _, e := range es {
		op := e.Op
		if len(e.Fields) > 0 {
			op += "[" + strings.Join(e.Fields, ",") + "]"
		}
		parts = append(parts, op+"@"+strconv.FormatInt(e.At, 10)+" "+e.Kind)
	}
	return strings.Join(parts, " ")
}

// OldVoiceSessions is SQL (for either store) writing inner_voice sessions
// of a schema from before sessions had scopes: two looked active at once
// (first calls that raced), one is older. prefix qualifies the tables
// ("" or a schema and a dot).
func OldVoiceSessions(prefix string) string {
	return `
INSERT INTO ` + prefix + `inner_voice_sessions (id, version, provider, model, max_prompt_tokens, topic, created_at, last_interaction,
	total_exchanges, total_prompt_tokens, total_cost) VALUES
	('s1', 1, '', 'extractive', 8000, 'older', 50, 100, 1, 10, 0),
	('s2', 1, 'openai', 'gpt-4o-mini', 8000, 'raced a', 200, 300, 1, 20, 0.5),
	('s3', 1, 'openai', 'gpt-4o-mini', 8000, 'raced b', 250, 300, 1, 30, 0.25);
INSERT INTO ` + prefix + `inner_voice_exchanges (id, session_id, seq, ts, query, answer) VALUES
	('x1', 's1', 1, 100, 'q1', 'a1'), ('x2', 's2', 1, 300, 'q2', 'a2'), ('x3', 's3', 1, 300, 'q3', 'a3');
`
}

// CheckOneCurrentSession checks a store upgraded from OldVoiceSessions:
// every session and exchange kept, unscoped, and one current session,
// the one of the latest interaction (the later created on a tie).
func CheckOneCurrentSession(t testing.TB, s memory.InnerVoiceStore, when string) {
	t.Helper()
	ctx := context.Background()
	list, err := s.VoiceSessions(ctx, memory.Scope{}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range list {
		got = append(got, fmt.Sprintf("%s:%s:%d:%d:%v:%q", v.ID, v.Topic, v.TotalExchanges, v.TotalPromptTokens, v.Current, v.Scope.String()))
	}
	want := []string{`s3:raced b:1:30:true:""`, `s2:raced a:1:20:false:""`, `s1:older:1:10:false:""`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s: sessions\n got %v\nwant %v", when, got, want)
	}
	for _, id := range []string{"s1", "s2", "s3"} {
		if xs, err := s.VoiceExchanges(ctx, id, 0, 10); err != nil || len(xs) != 1 || xs[0].Answer != "a"+id[1:] {
			t.Fatalf("%s: exchanges of %s: %+v %v", when, id, xs, err)
		}
	}
}

// ContinueCurrentSession checks that a call after the upgrade goes on
// with the current session (s3) rather than starting one.
func ContinueCurrentSession(t testing.TB, s memory.InnerVoiceStore) {
	t.Helper()
	got, created, err := s.OpenVoiceSession(context.Background(),
		memory.InnerVoiceSession{ID: "s4", Version: 1, CreatedAt: 400, LastInteraction: 400}, 250)
	if err != nil || created || got.ID != "s3" {
		t.Fatalf("a call after the upgrade: %s created %v, %v; want s3 continued", got.ID, created, err)
	}
}
