package postgres_test

import (
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
	"github.com/cairnhq/cairn/storetest"
)

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
	storetest.WriteBeforeLedger(t, old)
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
	storetest.UnmarkAfterUpgrade(t, db)
	storetest.CheckUpgradedLedger(t, db, "after the upgrade")
	if err := postgres.ReapplyMigration(ctx, db, 3); err != nil {
		t.Fatalf("migration 3 run again: %v", err)
	}
	storetest.CheckUpgradedLedger(t, db, "after running the migration again")
	clock = time.UnixMilli(6000)
	if _, err := db.SetThoughtStatus(ctx, []string{"t2"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}
	if got := storetest.HistoryText(t, db, "t2"); got != "create@222 thought mark[status]@6000 thought" {
		t.Fatalf("a write after running the migration again: %s", got)
	}
}
