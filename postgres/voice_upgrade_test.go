package postgres_test

import (
	"testing"

	"github.com/cairnhq/cairn/postgres"
	"github.com/cairnhq/cairn/storetest"
)

// A schema of version 3 with several sessions that looked active (two
// first calls raced) is upgraded with every session and exchange kept,
// unscoped, and one current session: the one of the latest interaction
// (the later created on a tie), which a call goes on with. Running
// migration 4 again changes nothing; the database refuses a second
// current session of one scope.
func TestVersion3SchemaUpgradesToOneCurrentSession(t *testing.T) {
	url := storeURL(t, "array")
	old, err := postgres.OpenAtVersion(ctx, url, 3)
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	c := raw(t, url)
	schema := schemaOf(url)
	if _, err := c.Exec(ctx, storetest.OldVoiceSessions(schema+".")); err != nil {
		t.Fatal(err)
	}

	db := open(t, url)
	defer db.Close()
	if st, err := db.Stats(ctx); err != nil || st.SchemaVersion != postgres.SchemaVersion() {
		t.Fatalf("upgraded store: %+v %v", st, err)
	}
	storetest.CheckOneCurrentSession(t, db, "after the upgrade")
	if err := postgres.ReapplyMigration(ctx, db, 4); err != nil {
		t.Fatalf("migration 4 run again: %v", err)
	}
	storetest.CheckOneCurrentSession(t, db, "after running migration 4 again")
	storetest.ContinueCurrentSession(t, db)
	if _, err := c.Exec(ctx, "UPDATE "+schema+".inner_voice_sessions SET active = true WHERE id = 's2'"); err == nil {
		t.Fatal("a second current session of one scope was stored")
	}
}
