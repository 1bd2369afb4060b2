package cairn_test

import (
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn"
)

func TestResolvePath(t *testing.T) {
	t.Setenv("HOME", "/home/ada")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv(cairn.EnvDB, "")
	if got := cairn.DefaultPath(); got != "/home/ada/.local/share/cairn/cairn.db" {
		t.Errorf("DefaultPath without XDG_DATA_HOME = %s", got)
	}
	t.Setenv("XDG_DATA_HOME", "/data")
	if got := cairn.ResolvePath(""); got != filepath.Join("/data", "cairn", "cairn.db") {
		t.Errorf("ResolvePath with XDG_DATA_HOME = %s", got)
	}
	t.Setenv("XDG_DATA_HOME", "relative/ignored")
	if got := cairn.DefaultPath(); got != "/home/ada/.local/share/cairn/cairn.db" {
		t.Errorf("a relative XDG_DATA_HOME is ignored, as the spec says: %s", got)
	}
	t.Setenv(cairn.EnvDB, "/env/cairn.db")
	if got := cairn.ResolvePath(""); got != "/env/cairn.db" {
		t.Errorf("CAIRN_DB: %s", got)
	}
	if got := cairn.ResolvePath("/flag.db"); got != "/flag.db" {
		t.Errorf("--db beats CAIRN_DB: %s", got)
	}
}
