package postgres_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
)

func historyText(t *testing.T, db *postgres.DB, id string) string {
	t.Helper()
	es, known, err := db.History(ctx, id, 0, 100)
	if err != nil || !known {
		t.Fatalf("History(%s): known %v, %v", id, known, err)
	}
	var parts []string
	for _, e := range es {
		s := e.Op
		if len(e.Fields) > 0 {
			s += "[" + strings.Join(e.Fields, ",") + "]"
		}
		parts = append(parts, s+"@"+strconv.FormatInt(e.At, 10)+" "+e.Kind)
	}
	return strings.Join(parts, " ")
}

// A schema of version 2 is upgraded with its change log kept as the
// ledger: what can be told of the old rows is (a thought's or a graph
// record's creation, dated by its created_at while it exists, and its
// deletion), the rest is unknown; every write from then on is dated by
// the clock, once. Running the migration again changes nothing.
func TestVersion2SchemaUpgradesToTheLedger(t *testing.T) {
	url := storeURL(t, "array")
	old, err := postgres.OpenAtVersion(ctx, url, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.AppendObservations(ctx, []memory.NewObservation{{Observation: memory.Observation{ID: "o1", Kind: memory.KindMessage,
		Content: "old", TS: 5}}}); err != nil {
		t.Fatal(err)
	}
	for _, th := range []memory.Thought{{ID: "t1", Content: "old thought", Origin: memory.OriginHuman, Status: memory.StatusActive, Significance: 0.5, CreatedAt: 111},
		{ID: "t2", Content: "another", Origin: memory.OriginHuman, Status: memory.StatusActive, Significance: 0.5, CreatedAt: 222}} {
		if _, err := old.AddThought(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.SetThoughtStatus(ctx, []string{"t1"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}
	if _, err := old.PutEntity(ctx, memory.KGEntity{ID: "e1", Name: "Gone", Type: "service", CreatedAt: 333, UpdatedAt: 333}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.AddKGObservation(ctx, memory.KGObservation{ID: "f1", EntityID: "e1", Content: "fact", CreatedAt: 444}); err != nil {
		t.Fatal(err)
	}
	if err := old.DeleteEntity(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	old.Close()

	clock := time.UnixMilli(5000)
	db, err := postgres.Open(ctx, url, &postgres.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if st, err := db.Stats(ctx); err != nil || st.SchemaVersion != postgres.SchemaVersion() {
		t.Fatalf("upgraded store: %+v %v", st, err)
	}
	if _, err := db.SetThoughtStatus(ctx, []string{"t1"}, memory.StatusActive); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"o1": "unknown@0 observation",
		"t1": "create@111 thought unknown@0 thought unmark[status]@5000 thought",
		"t2": "create@222 thought",
		"e1": "create@0 kg_entity delete@0 kg_entity",
		"f1": "create@0 kg_observation delete@0 kg_observation",
	}
	check := func(when string) {
		t.Helper()
		for id, w := range want {
			if got := historyText(t, db, id); got != w {
				t.Errorf("%s: history of %s:\n got %s\nwant %s", when, id, got, w)
			}
		}
	}
	check("after the upgrade")
	if err := postgres.ReapplyMigration(ctx, db, 3); err != nil {
		t.Fatalf("migration 3 run again: %v", err)
	}
	check("after running the migration again")
	clock = time.UnixMilli(6000)
	if _, err := db.SetThoughtStatus(ctx, []string{"t2"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}
	if got := historyText(t, db, "t2"); got != "create@222 thought mark[status]@6000 thought" {
		t.Fatalf("a write after running the migration again: %s", got)
	}
}
