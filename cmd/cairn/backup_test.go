package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// cairn backup writes a copy that is a cairn database holding the same
// records; an existing file is a conflict (exit 4) unless --force; no
// argument is a usage error.
func TestBackupCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cairn.db")
	o := decode[memory.Observation](t, mustCLI(t, db, "--json", "log", "the backup keeps this"))
	dest := filepath.Join(dir, "copies", "copy.db")
	out := mustCLI(t, db, "backup", dest)
	if !strings.Contains(out, "backed up") || !strings.Contains(out, dest) {
		t.Fatalf("backup said %q", out)
	}
	if info, err := os.Stat(dest); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the copy: %v %v", info, err)
	}
	if got := decode[memory.Observation](t, mustCLI(t, dest, "--json", "show", o.ID)); got.Content != o.Content {
		t.Fatalf("the copy holds %+v", got)
	}
	if out := mustCLI(t, dest, "doctor"); strings.Contains(out, "FAIL") {
		t.Fatalf("doctor on the copy:\n%s", out)
	}
	mustCLI(t, db, "log", "written after the first copy")
	if _, errs, code := cli(t, db, "", "backup", dest); code != 4 || !strings.Contains(errs, "--force") {
		t.Fatalf("backup over an existing file: exit %d %s", code, errs)
	}
	rep := decode[cairn.BackupReport](t, mustCLI(t, db, "--json", "backup", "--force", dest))
	if rep.Bytes == 0 || rep.Dest != dest {
		t.Fatalf("backup --force --json: %+v", rep)
	}
	if st := decode[cairn.Status](t, mustCLI(t, dest, "--json", "status")); st.Database.Observations != 2 {
		t.Fatalf("the replaced copy holds %d observations; want 2", st.Database.Observations)
	}
	if _, _, code := cli(t, db, "", "backup"); code != 2 {
		t.Fatalf("backup without DEST: exit %d; want 2", code)
	}
	// A database that is not there (a mistyped --db) is not_found: no
	// empty database is made at that path, and no copy of one is written.
	typo := filepath.Join(dir, "cairn-typo.db")
	if _, errs, code := cli(t, typo, "", "backup", filepath.Join(dir, "typo-copy.db")); code != 3 || !strings.Contains(errs, "no database") {
		t.Fatalf("backup of a missing database: exit %d %s", code, errs)
	}
	for _, p := range []string{typo, filepath.Join(dir, "typo-copy.db")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

// On PostgreSQL, backup says what to use instead, before connecting.
func TestBackupOnPostgresNamesTheWaysThatWork(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "x.db")
	_, errs, code := cli(t, "postgres://cairn@127.0.0.1:1/cairn", "", "backup", dest)
	if code != 5 || !strings.Contains(errs, "feature_disabled") || !strings.Contains(errs, "pg_dump") || !strings.Contains(errs, "cairn migrate") {
		t.Fatalf("backup on postgres: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("backup on postgres wrote %s (stat: %v)", dest, err)
	}
}
