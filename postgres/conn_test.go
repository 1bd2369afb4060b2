package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/internal/pgtest"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
)

// Pooled connections that the server ended (as a restart does, with
// SQLSTATE 57P01) are replaced before use: the next ping, read and write
// all succeed, with nothing lost or written twice.
func TestDeadPooledConnectionsAreReplaced(t *testing.T) {
	url := storeURL(t, "array")
	db := open(t, url)
	defer db.Close()
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{note("o1", "before the restart", memory.Scope{})}); err != nil {
		t.Fatal(err)
	}
	srv := pgtest.Shared(t)
	for round := range 3 {
		// Fill the pool with idle connections, then end every one of them.
		errs := make(chan error, 4)
		for range 4 {
			go func() { errs <- db.Ping(ctx) }()
		}
		for range 4 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		out, err := srv.Exec(url, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'cairn' AND pid <> pg_backend_pid()`)
		if err != nil || out == "0" {
			t.Fatalf("ending the pool's backends: %q %v", out, err)
		}
		switch round {
		case 0:
			if err := db.Ping(ctx); err != nil {
				t.Fatalf("ping after the backends ended: %v", err)
			}
		case 1:
			if _, err := db.Observation(ctx, "o1"); err != nil {
				t.Fatalf("read after the backends ended: %v", err)
			}
		case 2:
			if _, err := db.AppendObservations(ctx, []memory.NewObservation{note("o2", "after the restart", memory.Scope{})}); err != nil {
				t.Fatalf("write after the backends ended: %v", err)
			}
		}
	}
	n, err := srv.Exec(url, fmt.Sprintf(`SELECT count(*) FROM %s.observations`, schemaOf(url)))
	if err != nil || n != "2" {
		t.Fatalf("observations after the rounds: %q %v, want 2", n, err)
	}
}

// A role that does not exist is named as the cause, not reported as a
// pg_hba.conf refusal.
func TestMissingRoleIsNamed(t *testing.T) {
	srv := pgtest.Shared(t)
	_, err := postgres.Open(ctx, srv.URLAs("nosuchrole", "postgres"), nil)
	if memory.CodeOf(err) != memory.CodeDBError || !strings.Contains(err.Error(), `no role "nosuchrole"`) || strings.Contains(err.Error(), "pg_hba") {
		t.Fatalf("opening as a missing role: %v", err)
	}
}

// While the server cannot be reached, a write says so, and nothing else.
func TestUnreachableServerIsSaid(t *testing.T) {
	if _, err := pgtest.FindBin(); err != nil {
		pgtest.Unavailable(t, err)
	}
	srv, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, srv.URL("postgres")+"&cairn_vectors=array", nil)
	if err != nil {
		srv.Stop()
		t.Fatal(err)
	}
	defer db.Close()
	srv.Stop()
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err = db.AppendObservations(c, []memory.NewObservation{note("o1", "nowhere to go", memory.Scope{})})
	pub := memory.Public(err)
	if pub.Code != memory.CodeDBError || !strings.Contains(pub.Message, "cannot be reached") {
		t.Fatalf("writing to a stopped server: %v (public: %+v)", err, pub)
	}
	if err := db.Ping(c); err == nil || !strings.Contains(memory.Public(err).Message, "cannot be reached") {
		t.Fatalf("pinging a stopped server: %v", err)
	}
}

// A role that may not create cairn's schema gets a migration error that
// says what permission is missing, without the server's SQL.
func TestMigrationWithoutPermissionSaysWhy(t *testing.T) {
	srv := pgtest.Shared(t)
	url := srv.NewDatabase(t)
	role := fmt.Sprintf("limited%d", schema.Add(1))
	if _, err := srv.Exec(url, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	name := url[strings.LastIndexByte(url, '/')+1:]
	name, _, _ = strings.Cut(name, "?")
	_, err := postgres.Open(ctx, srv.URLAs(role, name)+"&cairn_vectors=array", nil)
	pub := memory.Public(err)
	if pub.Code != memory.CodeDBError || !strings.Contains(pub.Message, "migration 1") || !strings.Contains(pub.Message, "CREATE on the database") {
		t.Fatalf("migrating as a role without CREATE: %v", err)
	}
}
