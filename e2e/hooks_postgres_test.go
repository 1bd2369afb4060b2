package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
)

// Capture hooks on PostgreSQL: a recorded session goes through cairn hook
// and its background writer into the database; the spool lives in the
// cache directory (not in a directory named after the URL), and a URL
// holding a password is never written into an agent's settings.
func TestHookSessionOnPostgres(t *testing.T) {
	h := newHookEnv(t)
	cache := filepath.Join(t.TempDir(), "cache")
	// The test server trusts local connections: the password is there to
	// be kept out of files.
	h.db = strings.Replace(pgDatabase(t), "postgres@", "postgres:hunter2secret@", 1)
	h.env = []string{"XDG_CACHE_HOME=" + cache}
	t.Setenv("XDG_CACHE_HOME", cache)
	h.spool = cairn.SpoolDir(h.db)
	if !strings.HasPrefix(h.spool, cache+string(filepath.Separator)) {
		t.Fatalf("the spool of a PostgreSQL database is %s; want it under %s", h.spool, cache)
	}
	for _, f := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse-Bash", "PostToolUse-Edit", "PreCompact", "Stop", "SessionEnd"} {
		event := strings.SplitN(f, "-", 2)[0]
		h.run(t, h.payload(t, f), nil, "hook", event, "--agent", "claude-code")
		h.waitSpool(t)
	}
	dump := h.run(t, nil, nil, "export")
	if !strings.Contains(dump, `"status":"closed"`) || !strings.Contains(dump, "Changed: auth/session.go") {
		t.Fatalf("no closed capsule with its summary in the database:\n%s", dump)
	}
	entries, _ := os.ReadDir(h.repo)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "postgres") {
			t.Fatalf("a hook made %s in the working directory", e.Name())
		}
	}
	status := h.run(t, nil, nil, "hooks", "status", "claude-code")
	if strings.Contains(status, "hunter2secret") || !strings.Contains(status, "postgres://postgres:xxxxx@") {
		t.Fatalf("hooks status:\n%s", status)
	}

	settings := filepath.Join(h.home, ".claude", "settings.json")
	cmd := h.cmd("--db", h.db, "hooks", "install", "claude-code")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(string(out), "password") {
		t.Fatalf("installing hooks with a password in --db: %v\n%s", err, out)
	}
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Fatalf("the refused install wrote %s (%v)", settings, err)
	}
	plain := strings.Replace(h.db, ":hunter2secret@", "@", 1)
	h.run(t, nil, nil, "--db", plain, "hooks", "install", "claude-code")
	b, err := os.ReadFile(settings)
	if err != nil || !strings.Contains(string(b), "--db '"+plain+"'") {
		t.Fatalf("settings after installing with a URL: %v\n%s", err, b)
	}
}
