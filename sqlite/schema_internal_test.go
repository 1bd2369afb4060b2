package sqlite

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/storetest"
)

// schemaDump lists the database's tables, indexes and triggers with their
// SQL, and its user_version.
func schemaDump(t *testing.T, db *DB) string {
	t.Helper()
	var b strings.Builder
	rows, err := db.w.Query("SELECT type, name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ, name, sql string
		if err := rows.Scan(&typ, &name, &sql); err != nil {
			t.Fatal(err)
		}
		b.WriteString(typ + " " + name + " " + sql + "\n")
	}
	var v int
	if err := db.w.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	b.WriteString("user_version " + strconv.Itoa(v))
	return b.String()
}

// Every migration is idempotent: running each one again on a database
// that has it changes neither the schema nor the data.
func TestMigrationsAreIdempotent(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.AddThought(ctx, memory.Thought{ID: "t1", Content: "kept", Origin: memory.OriginHuman, Status: memory.StatusRemoval,
		Significance: 0.5, IsSummary: true, SummaryOf: []string{"t0"}, Pipeline: "inner_voice", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkRemoval(ctx, []string{"t1"}, 7); err != nil {
		t.Fatal(err)
	}
	before := schemaDump(t, db)
	for _, m := range migrations {
		conn, err := db.w.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range m.columns {
			var n int
			if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_xinfo(?) WHERE name = ?", c.table, c.name).Scan(&n); err != nil || n != 1 {
				t.Fatalf("migration %d: column %s.%s: %d %v", m.version, c.table, c.name, n, err)
			}
		}
		if _, err := conn.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("migration %d (%s) run again: %v", m.version, m.name, err)
		}
		conn.Close()
	}
	if after := schemaDump(t, db); after != before {
		t.Fatalf("running the migrations again changed the schema:\nbefore %s\nafter  %s", before, after)
	}
	th, err := db.Thought(ctx, "t1")
	if err != nil || th.Content != "kept" || th.Status != memory.StatusRemoval || !th.IsSummary || th.Pipeline != "inner_voice" || th.SummaryOf[0] != "t0" {
		t.Fatalf("the thought after running the migrations again: %+v %v", th, err)
	}
	rs, err := db.Removals(ctx, 0, 10)
	if err != nil || len(rs) != 1 || rs[0].MarkedAt != 7 {
		t.Fatalf("the removal record after running the migrations again: %+v %v", rs, err)
	}
	// Thoughts are indexed by status.
	var idx string
	if err := db.w.QueryRow("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'thoughts' AND sql LIKE '%(status)%'").Scan(&idx); err != nil {
		t.Fatalf("no index of thoughts by status: %v", err)
	}
}

// A database of the previous schema opens with every field of its thoughts
// kept, and thoughts it had marked for removal list with an unknown mark
// time.
func TestUpgradeFromSchema6KeepsThoughts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	all := migrations
	migrations = all[:6]
	db, err := Open(path, nil)
	migrations = all
	if err != nil {
		t.Fatal(err)
	}
	in := memory.Thought{ID: "t1", Content: "old thought", Origin: memory.OriginTool, Tags: []string{"a"}, IsPrivate: true,
		Status: memory.StatusRemoval, Significance: 0.25, IsSummary: true, SummaryOf: []string{"t0"}, Pipeline: "inner_voice",
		CreatedAt: 9, Scope: memory.Scope{RepoID: "r"}}
	if _, err := db.AddThought(ctx, in); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db.w.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 6 {
		t.Fatalf("the old database is at version %d (%v)", v, err)
	}
	db.Close()

	db, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Thought(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != in.Content || got.Origin != in.Origin || got.Tags[0] != "a" || !got.IsPrivate || got.Status != in.Status ||
		got.Significance != in.Significance || !got.IsSummary || got.SummaryOf[0] != "t0" || got.Pipeline != in.Pipeline ||
		got.CreatedAt != 9 || got.Scope != in.Scope {
		t.Fatalf("after the upgrade: %+v", got)
	}
	if st, _ := db.Stats(ctx); st.SchemaVersion != SchemaVersion() {
		t.Fatalf("schema version %d; want %d", st.SchemaVersion, SchemaVersion())
	}
	rs, err := db.Removals(ctx, 0, 10)
	if err != nil || len(rs) != 1 || rs[0].MarkedAt != 0 {
		t.Fatalf("removals after the upgrade: %+v %v", rs, err)
	}
}

// A database of schema 7 opens at the current schema with its thoughts,
// and keeps inner_voice sessions from then on.
func TestUpgradeFromSchema7AddsSessions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	all := migrations
	migrations = all[:7]
	db, err := Open(path, nil)
	migrations = all
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddThought(ctx, memory.Thought{ID: "t1", Content: "old thought", Origin: memory.OriginHuman, Status: memory.StatusActive,
		Significance: 0.5, CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateVoiceSession(ctx, memory.InnerVoiceSession{ID: "s1", Version: 1, CreatedAt: 1}); err == nil {
		t.Fatal("a schema-7 database kept a session")
	}
	db.Close()
	db, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if th, err := db.Thought(ctx, "t1"); err != nil || th.Content != "old thought" {
		t.Fatalf("after the upgrade: %+v %v", th, err)
	}
	if _, err := db.CreateVoiceSession(ctx, memory.InnerVoiceSession{ID: "s1", Version: 1, CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.AddVoiceExchange(ctx, memory.InnerVoiceExchange{ID: "x1", SessionID: "s1", Timestamp: 2, Query: "q",
		MemoriesReferenced: []string{"t1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RedactThought(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if xs, err := db.VoiceExchanges(ctx, "s1", 0, 10); err != nil || len(xs) != 1 || !xs[0].Redacted {
		t.Fatalf("exchanges after forgetting their source: %+v %v", xs, err)
	}
}

// A database of schema 9 opens at the current schema with its change log
// kept as the ledger: what can be told of the old rows is (a thought's or
// a graph record's creation, dated by its created_at while it exists,
// and its deletion),
// the rest is unknown; every write from then on is dated by the clock,
// once (no trigger of the old schema is left to log it twice).
func TestUpgradeFromSchema9KeepsTheChangeLogAsTheLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	all := migrations
	if all[7].version != 9 {
		t.Fatalf("migrations[7] is version %d; want 9", all[7].version)
	}
	migrations = all[:8]
	db, err := Open(path, nil)
	migrations = all
	if err != nil {
		t.Fatal(err)
	}
	storetest.WriteBeforeLedger(t, db)
	db.Close()

	clock := time.UnixMilli(5000)
	db, err = Open(path, &Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.UnmarkAfterUpgrade(t, db)
	storetest.CheckUpgradedLedger(t, db, "after the upgrade")
}

// A database of schema 10 with several sessions that looked active (two
// first calls raced) opens at the current schema with every session and
// exchange kept, unscoped, and one current session: the one of the
// latest interaction (the later created on a tie), which a call goes on
// with; running migration 11 again changes nothing.
func TestUpgradeFromSchema10KeepsOneCurrentSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	all := migrations
	if all[8].version != 10 {
		t.Fatalf("migrations[8] is version %d; want 10", all[8].version)
	}
	migrations = all[:9]
	db, err := Open(path, nil)
	migrations = all
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(storetest.OldVoiceSessions("")); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckOneCurrentSession(t, db, "after the upgrade")
	again := false
	for _, m := range migrations {
		if m.version == 11 {
			if _, err := db.w.Exec(m.sql); err != nil {
				t.Fatalf("migration 11 run again: %v", err)
			}
			again = true
		}
	}
	if !again {
		t.Fatal("no migration 11")
	}
	storetest.CheckOneCurrentSession(t, db, "after running migration 11 again")
	storetest.ContinueCurrentSession(t, db)
	if _, err := db.w.Exec("UPDATE inner_voice_sessions SET active = 1 WHERE id = 's2'"); err == nil {
		t.Fatal("a second current session of one scope was stored")
	}
}
