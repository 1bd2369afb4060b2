package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
)

func TestVersion(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	want := "cairn " + cairn.Version
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, errOut, code := cli(t, db, "", args...)
		if code != 0 || !strings.HasPrefix(out, want+" ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("cairn %v: code %d, out %q, err %q; want a line starting %q naming %s", args, code, out, errOut, want, runtime.Version())
		}
	}
	b := decode[buildInfo](t, mustCLI(t, db, "version", "--json"))
	if b.Version != cairn.Version || b.Go != runtime.Version() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version --json = %+v", b)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("version opened the database (stat: %v)", err)
	}
	if _, _, code := cli(t, db, "", "version", "extra"); code != 2 {
		t.Errorf("version with an argument: exit %d, want 2", code)
	}
}

func TestBuildInfoLine(t *testing.T) {
	b := buildInfo{Version: "1.2.3", Commit: "0123456789abcdef", Modified: true, Go: "go1.26", Platform: "linux/amd64"}
	if got, want := b.String(), "cairn 1.2.3 (0123456789ab, modified) go1.26 linux/amd64"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	b.Commit, b.Modified = "", false
	if got, want := b.String(), "cairn 1.2.3 go1.26 linux/amd64"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
