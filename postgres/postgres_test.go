package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/internal/pgtest"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
	"github.com/jackc/pgx/v5"
)

// raw connects to the database of a store URL, for changing it behind the
// store's back.
func raw(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	u := url[:strings.Index(url, "&cairn_")]
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c
}

func schemaOf(url string) string {
	i := strings.Index(url, "cairn_schema=") + len("cairn_schema=")
	return url[i : i+strings.IndexByte(url[i:], '&')]
}

func note(id, content string, scope memory.Scope) memory.NewObservation {
	return memory.NewObservation{Observation: memory.Observation{ID: id, Kind: memory.KindMessage, Content: content,
		Provenance: json.RawMessage(`{}`), TS: 1, Scope: scope}}
}

// schemaState is everything a refused open must leave as it was: the
// schema's objects and its meta rows.
func schemaState(t *testing.T, c *pgx.Conn, schema string) string {
	t.Helper()
	var objs, meta string
	if err := c.QueryRow(ctx, `SELECT string_agg(relname || ':' || relkind::text, ',' ORDER BY relname) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1`, schema).Scan(&objs); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, `SELECT string_agg(key || '=' || value, ',' ORDER BY key) FROM `+schema+`.meta`).Scan(&meta); err != nil {
		t.Fatal(err)
	}
	return objs + "|" + meta
}

func TestNewerSchemaIsRefusedAndUntouched(t *testing.T) {
	url := storeURL(t, "array")
	db := open(t, url)
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{note("o1", "kept", memory.Scope{})}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c := raw(t, url)
	s := schemaOf(url)
	if _, err := c.Exec(ctx, "UPDATE "+s+".meta SET value = $1 WHERE key = 'schema_version'", fmt.Sprint(postgres.SchemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	before := schemaState(t, c, s)
	_, err := postgres.Open(ctx, url, nil)
	if memory.CodeOf(err) != memory.CodeDBError || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("opening a newer schema: %v; want a db_error saying it is newer", err)
	}
	if after := schemaState(t, c, s); after != before {
		t.Fatalf("a refused open changed the schema:\n%s\n%s", before, after)
	}
}

func TestForeignSchemaIsRefused(t *testing.T) {
	url := storeURL(t, "array")
	c := raw(t, url)
	s := schemaOf(url)
	if _, err := c.Exec(ctx, "CREATE SCHEMA "+s+"; CREATE TABLE "+s+".invoices (id int)"); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(ctx, url, nil)
	if memory.CodeOf(err) != memory.CodeDBError || !strings.Contains(err.Error(), "not a cairn schema") {
		t.Fatalf("opening a schema of another application: %v", err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = $1", s).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the foreign schema holds %d tables (%v); want its one table, untouched", n, err)
	}
}

// Servers starting together on a new database: the migration lock lets
// one create the schema while the others wait, then all of them use it.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	url := storeURL(t, "array")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(ctx, url, nil)
			if err == nil {
				_, err = db.AppendObservations(ctx, []memory.NewObservation{note(fmt.Sprintf("o%d", i), "hello", memory.Scope{})})
				db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	db := open(t, url)
	defer db.Close()
	st, err := db.Stats(ctx)
	if err != nil || st.Observations != 8 || st.SchemaVersion != postgres.SchemaVersion() {
		t.Fatalf("stats %+v %v", st, err)
	}
}

// The change log is numbered in commit order: a transaction that began
// first but commits last still gets a number above every change a reader
// has already seen, so a reader that follows the log misses nothing.
func TestChangeLogFollowsCommitOrder(t *testing.T) {
	url := storeURL(t, "array")
	db := open(t, url)
	defer db.Close()
	last := func() int64 {
		var n int64
		if err := db.Snapshot(ctx, func(r memory.Reader) error {
			var err error
			n, err = r.LastChange(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	changed := func(since int64) []string {
		var ids []string
		if err := db.Snapshot(ctx, func(r memory.Reader) error {
			recs, _, err := r.ChangesSince(ctx, memory.Space{}, since, 0)
			for _, rec := range recs {
				ids = append(ids, rec.ID)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	// A slow writer inserts first and holds its transaction open.
	c := raw(t, url)
	slow, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slow.Exec(ctx, "INSERT INTO "+schemaOf(url)+".observations (id, kind, content, ts, fts, fts_len) VALUES ('slow', 'message', 'slow', 1, '', 0)"); err != nil {
		t.Fatal(err)
	}
	// A fast writer commits meanwhile, and a reader catches up past it.
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{note("fast", "fast", memory.Scope{})}); err != nil {
		t.Fatal(err)
	}
	seen := last()
	if got := changed(0); !slices.Equal(got, []string{"fast"}) {
		t.Fatalf("changes before the slow commit: %v", got)
	}
	if err := slow.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := changed(seen); !slices.Equal(got, []string{"slow"}) {
		t.Fatalf("changes since %d after the slow writer committed: %v; want [slow]", seen, got)
	}
}

// Servers racing to open a capsule for one session: the database's unique
// index lets exactly one win; the others get conflict.
func TestOneOpenCapsulePerSessionAcrossServers(t *testing.T) {
	url := storeURL(t, "array")
	servers := make([]*postgres.DB, 6)
	for i := range servers {
		servers[i] = open(t, url)
		defer servers[i].Close()
	}
	for round := range 5 {
		session := fmt.Sprintf("sess-%d", round)
		var wg sync.WaitGroup
		errs := make([]error, len(servers))
		start := make(chan struct{})
		for i, s := range servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = s.OpenCapsule(ctx, memory.Capsule{ID: fmt.Sprintf("c%d-%d", round, i), Type: "session", OpenedAt: 1,
					Scope: memory.Scope{SessionID: session}})
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch memory.CodeOf(err) {
			case "":
				won++
			case memory.CodeConflict:
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d servers opened a capsule for one session; want 1", round, won)
		}
	}
}

// Appends to one capsule from many servers at once take positions one
// after another: none lost, none twice.
func TestConcurrentAppendsToOneCapsule(t *testing.T) {
	url := storeURL(t, "array")
	first := open(t, url)
	defer first.Close()
	scope := memory.Scope{SessionID: "s", RepoID: "r"}
	if _, err := first.OpenCapsule(ctx, memory.Capsule{ID: "c", Type: "session", OpenedAt: 1, Scope: scope}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for w := range 4 {
		s := open(t, url)
		defer s.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				_, err := s.AppendObservations(ctx, []memory.NewObservation{note(fmt.Sprintf("w%d-%d", w, i), "text", memory.Scope{SessionID: "s"})})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c, err := first.Capsule(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ObservationIDs) != 40 {
		t.Fatalf("the capsule holds %d observations; want 40", len(c.ObservationIDs))
	}
	seen := map[string]bool{}
	for _, id := range c.ObservationIDs {
		if seen[id] {
			t.Fatalf("%s joined twice", id)
		}
		seen[id] = true
	}
}

// A statement that waits past the connection's statement_timeout fails
// with a db_error saying so, and changes nothing.
func TestStatementTimeout(t *testing.T) {
	url := storeURL(t, "array")
	db := open(t, url)
	if _, err := db.OpenCapsule(ctx, memory.Capsule{ID: "c", Type: "session", OpenedAt: 1, Scope: memory.Scope{SessionID: "s"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Every statement of this connection gets the timeout: opening the
	// store and reading the capsule back must finish within it however
	// loaded the machine, so it is 2 s; only the statement waiting on the
	// lock, which waits until the test lets go, runs past it.
	short := open(t, url+"&statement_timeout=2000")
	defer short.Close()
	c := raw(t, url)
	hold, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(ctx)
	if _, err := hold.Exec(ctx, "SELECT 1 FROM "+schemaOf(url)+".capsules WHERE id = 'c' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	_, err = short.CloseCapsule(ctx, "c", 2, nil)
	if memory.CodeOf(err) != memory.CodeDBError || !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("closing a capsule another transaction holds: %v; want a db_error naming the statement timeout", err)
	}
	hold.Rollback(ctx)
	cp, err := short.Capsule(ctx, "c")
	if err != nil || cp.Status != memory.CapsuleOpen {
		t.Fatalf("after the timeout the capsule is %+v (%v); want it still open", cp, err)
	}
}

func TestPoolSettingsFromTheURL(t *testing.T) {
	db := open(t, storeURL(t, "array")+"&pool_max_conns=3")
	defer db.Close()
	if st := db.PoolStats(); st.MaxConns != 3 {
		t.Fatalf("pool of %d connections; want the URL's 3", st.MaxConns)
	}
}

func TestBadConnectionStrings(t *testing.T) {
	base := database(t)
	for _, tc := range []struct {
		url  string
		code memory.Code
		says string
	}{
		{"postgres://x:secret@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", memory.CodeDBError, "cannot connect"},
		{base + "&cairn_schema=Bad-Name", memory.CodeInvalidParams, "cairn_schema"},
		{base + "&cairn_vectors=float", memory.CodeInvalidParams, "cairn_vectors"},
		{base + "&pool_max_conns=many", memory.CodeInvalidParams, "does not parse"},
		{strings.Replace(base, "/pkg", "/nosuchdb", 1), memory.CodeDBError, "does not exist"},
	} {
		_, err := postgres.Open(ctx, tc.url, nil)
		if memory.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v; want %s saying %q", tc.url, err, tc.code, tc.says)
		}
		if err != nil && strings.Contains(memory.Public(err).Message, "secret") {
			t.Errorf("%s: the message shows the password: %v", tc.url, err)
		}
	}
}

// Forgetting rewrites the row: the text is in no live row and no index
// (PostgreSQL keeps the dead row version until VACUUM, which cairn's
// docs tell operators about).
func TestForgetLeavesNoTextInLiveRows(t *testing.T) {
	url := storeURL(t, "array")
	db := open(t, url)
	defer db.Close()
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{note("o1", "the launch code is zanzibar", memory.Scope{})}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Redact(ctx, "o1"); err != nil {
		t.Fatal(err)
	}
	c := raw(t, url)
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM `+schemaOf(url)+`.observations o
		WHERE o.content LIKE '%zanzibar%' OR o.fts @@ 'zanzibar'::tsquery OR o.fts IS NOT NULL`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d live rows still hold the forgotten text or terms (%v)", n, err)
	}
}

// The doctor notices full-text columns and statistics that drifted from
// the records (rows changed behind cairn's back), and its repair puts
// them right.
func TestDoctorRepairsDrift(t *testing.T) {
	url := storeURL(t, "array")
	db := open(t, url)
	defer db.Close()
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{note("o1", "alpha beta", memory.Scope{}), note("o2", "beta gamma", memory.Scope{})}); err != nil {
		t.Fatal(err)
	}
	healthy := func() bool {
		fs, err := db.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ok := true
		for _, f := range fs {
			if !f.OK {
				ok = false
				if f.Repair != memory.RepairRebuildIndex {
					t.Errorf("finding %s is not repairable: %+v", f.Check, f)
				}
			}
		}
		return ok
	}
	if !healthy() {
		t.Fatal("a new store is not healthy")
	}
	c := raw(t, url)
	s := schemaOf(url)
	if _, err := c.Exec(ctx, "UPDATE "+s+".observations SET fts = NULL WHERE id = 'o1'; UPDATE "+s+".fts_stats SET tokens = tokens + 7 WHERE tbl = 'summaries' AND shard = 3"); err != nil {
		t.Fatal(err)
	}
	if healthy() {
		t.Fatal("the doctor found nothing wrong with drifted full-text columns")
	}
	if err := db.RebuildIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if !healthy() {
		t.Fatal("still unhealthy after the repair")
	}
	res, err := db.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{"alpha"}}, Limit: 10})
	if err != nil || len(res.Observations) != 1 {
		t.Fatalf("search after the repair: %+v %v", res, err)
	}
}

// Ping answers while the server is up, and fails with a db_error within
// its deadline when the database cannot be reached.
func TestPing(t *testing.T) {
	db := open(t, storeURL(t, "array"))
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := db.Ping(c); memory.CodeOf(err) != memory.CodeDBError {
		t.Fatalf("ping on a closed pool: %v", err)
	}
}

// In auto mode, a role that may not create the vector extension (pgvector
// is not a trusted extension: CREATE EXTENSION vector needs a superuser)
// gets a schema that keeps vectors as arrays, and vectors work there:
// stored, loaded for the retrieval index, searched in the database. With
// cairn_vectors=pgvector the same role is refused.
func TestAutoVectorsFallBackToArraysWhenTheExtensionIsRefused(t *testing.T) {
	srv := pgtest.Shared(t)
	role := fmt.Sprintf("plain_%d", os.Getpid())
	admin, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, q := range []string{"CREATE ROLE " + role + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE", "CREATE DATABASE " + role + " OWNER " + role} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		srv.DropDatabase(role)
		admin, err := pgx.Connect(ctx, srv.URL("postgres"))
		if err == nil {
			admin.Exec(ctx, "DROP ROLE IF EXISTS "+role)
			admin.Close(ctx)
		}
	})
	if srv.HasExtension("vector") {
		// The extension is there: what the role meets is the refusal.
		c, err := pgx.Connect(ctx, srv.URLAs(role, role))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Exec(ctx, "CREATE EXTENSION vector")
		c.Close(ctx)
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("CREATE EXTENSION vector as a role that is not a superuser: %v; want permission denied", err)
		}
	} else {
		t.Logf("pgvector is not installed here, so the role cannot create the extension for that reason too (%s)", pgtest.PGVectorInstall)
	}
	base := srv.URLAs(role, role)
	db := open(t, base+"&cairn_schema=plain")
	defer db.Close()
	if db.Vectors() != "array" {
		t.Fatalf("a role refused the extension got vectors kept as %q; want array", db.Vectors())
	}
	var installed bool
	c := raw(t, base+"&cairn_schema=plain")
	if err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')").Scan(&installed); err != nil || installed {
		t.Fatalf("the vector extension was installed in the role's database: %v %v", installed, err)
	}
	var column string
	if err := c.QueryRow(ctx, `SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
		WHERE a.attrelid = 'plain.embeddings'::regclass AND a.attname = 'vec'`).Scan(&column); err != nil || column != "real[]" {
		t.Fatalf("the embeddings' column is %q (%v); want real[]", column, err)
	}

	space := memory.Space{Provider: "test", Model: "m", Dim: 3}
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{note("a", "north wind", memory.Scope{}), note("b", "south sea", memory.Scope{})}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutEmbeddings(ctx, []memory.Embedding{
		{Kind: memory.VectorObservation, ID: "a", Space: space, Vector: []float32{1, 0, 0}},
		{Kind: memory.VectorObservation, ID: "b", Space: space, Vector: []float32{0, 1, 0}},
	}); err != nil {
		t.Fatal(err)
	}
	if vs, err := db.VectorStats(ctx, space); err != nil || vs.InSpace != 2 {
		t.Fatalf("vector stats %+v %v; want 2 in the space", vs, err)
	}
	loaded := map[string][]float32{}
	if err := db.Snapshot(ctx, func(r memory.Reader) error {
		_, err := r.LoadIndex(ctx, space, func(rec memory.IndexRecord) error {
			loaded[rec.ID] = rec.Vector
			return nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(loaded["a"], []float32{1, 0, 0}) || !slices.Equal(loaded["b"], []float32{0, 1, 0}) {
		t.Fatalf("the index loads %v", loaded)
	}
	hits, err := db.NearestObservations(ctx, space, []float32{0.1, 0.9, 0}, 2, memory.Scope{})
	if err != nil || len(hits) != 2 || hits[0].ID != "b" {
		t.Fatalf("nearest: %+v %v; want b first", hits, err)
	}

	if _, err := postgres.Open(ctx, base+"&cairn_schema=wants_pgvector&cairn_vectors=pgvector", nil); memory.CodeOf(err) != memory.CodeDBError ||
		!strings.Contains(err.Error(), "installable by this role") {
		t.Fatalf("cairn_vectors=pgvector for a role refused the extension: %v; want db_error", err)
	}
}
