package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mistyped --db or $CAIRN_DB names a directory that does not exist: the
// command fails with not_found and creates nothing, instead of answering
// from a new, empty database.
func TestMistypedDatabasePathCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexistent", "deeper")
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		db, code string
		exit     int
	}{
		{filepath.Join(missing, "cairn.db"), "not_found", 3},
		{filepath.Join(file, "cairn.db"), "invalid_params", 2},
	} {
		for _, args := range [][]string{{"retrieve", "q"}, {"log", "--kind", "message", "hello"}, {"status"}} {
			out, errOut, code := cli(t, tc.db, "", append([]string{"--json"}, args...)...)
			if code != tc.exit || !strings.Contains(out+errOut, tc.code) {
				t.Errorf("--db %s %v: exit %d, out %q, err %q; want exit %d and %s", tc.db, args, code, out, errOut, tc.exit, tc.code)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nonexistent")); !os.IsNotExist(err) {
		t.Errorf("the missing directory was created (stat: %v)", err)
	}

	// $CAIRN_DB is the user's own choice too.
	t.Setenv("CAIRN_DB", filepath.Join(missing, "env.db"))
	var a app
	if err := a.checkDBDir(filepath.Join(missing, "env.db")); err == nil {
		t.Error("a $CAIRN_DB in a missing directory was accepted")
	}
	// An existing directory is fine: the file itself is created.
	ok := filepath.Join(dir, "fresh.db")
	mustCLI(t, ok, "log", "--kind", "message", "hello")
	if _, err := os.Stat(ok); err != nil {
		t.Errorf("the database file in an existing directory was not created: %v", err)
	}
}
