package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The command line on PostgreSQL: migrate a file into it, then record,
// retrieve, check and configure against it; a password in the connection
// string never shows in any output.
func TestCLIOnPostgres(t *testing.T) {
	srv := pgtest.Shared(t)
	url := srv.NewDatabase(t)
	// The test server trusts local connections, so any password works:
	// this one must never be printed.
	pg := strings.Replace(url, "postgres@", "postgres:hunter2secret@", 1) + "&cairn_schema=cli"
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	lite := filepath.Join(t.TempDir(), "cairn.db")
	mustCLI(t, lite, "log", "--scope", "repo=/shop", "the checkout test fails with session expired")
	mustCLI(t, lite, "think", "clock skew breaks sessions")

	var all strings.Builder
	out, errs, code := cli(t, lite, "", "migrate", "--from", lite, "--to", pg, "--json")
	all.WriteString(out + errs)
	if code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, errs)
	}
	rep := decode[cairn.MigrateReport](t, out)
	if rep.Records != 2 || rep.SourceDigest != rep.TargetDigest || rep.Vectors != 2 {
		t.Fatalf("migrate report %+v", rep)
	}
	out, errs, code = cli(t, lite, "", "migrate", "--from", lite, "--to", pg)
	all.WriteString(out + errs)
	if code != 4 || !strings.Contains(errs, "already holds") {
		t.Fatalf("migrating again into the filled target: exit %d: %s", code, errs)
	}

	all.WriteString(mustCLI(t, pg, "log", "--scope", "repo=/shop", "the fix: accept 5s of clock skew"))
	res := mustCLI(t, pg, "retrieve", "--scope", "repo=/shop", "session", "expired", "clock", "skew")
	all.WriteString(res)
	if !strings.Contains(res, "accept 5s of clock skew") || !strings.Contains(res, "session expired") {
		t.Fatalf("retrieve on PostgreSQL:\n%s", res)
	}
	st := decode[cairn.Status](t, mustCLI(t, pg, "status", "--json"))
	if st.Database.Observations != 2 || !strings.HasPrefix(st.Database.Path, "postgres://postgres:xxxxx@") {
		t.Fatalf("status %+v", st.Database)
	}
	doc := mustCLI(t, pg, "doctor")
	all.WriteString(doc)
	for _, want := range []string{"PostgreSQL 1", "schema cli", "bm25 counts"} {
		if !strings.Contains(doc, want) {
			t.Errorf("doctor does not say %q:\n%s", want, doc)
		}
	}
	all.WriteString(mustCLI(t, pg, "config"))
	all.WriteString(mustCLI(t, pg, "status"))
	if strings.Contains(all.String(), "hunter2secret") {
		t.Fatalf("the password shows in the output:\n%s", all.String())
	}
}
