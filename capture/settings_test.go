package capture_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/memory"
)

// Settings files as users have them, with hooks of their own.
var existing = map[capture.Agent]string{
	capture.ClaudeCode: `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"]},
  "hooks": {
    "PostToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "gofmt -w \"$CLAUDE_FILE\""}]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}]
  },
  "statusLine": {"type": "command", "command": "~/.claude/status.sh"}
}
`,
	capture.GeminiCLI: `{"theme": "GitHub", "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "guard", "type": "command", "command": "./guard.sh"}]}]}}`,
	capture.Cursor:    `{"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}}`,
}

func TestInstallKeepsEverythingElse(t *testing.T) {
	for _, a := range capture.Agents {
		t.Run(string(a), func(t *testing.T) {
			before := existing[a]
			c, err := capture.PlanInstall(a, "settings.json", before, "/usr/local/bin/cairn", "", capture.InstallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !c.Changed || !strings.Contains(c.Diff(), "+") {
				t.Fatalf("install changed nothing: %+v", c)
			}
			// Every key and hook of the user's is still there.
			var was, now map[string]any
			json.Unmarshal([]byte(before), &was)
			if err := json.Unmarshal([]byte(c.After), &now); err != nil {
				t.Fatalf("result is not JSON: %v\n%s", err, c.After)
			}
			for k := range was {
				if now[k] == nil {
					t.Errorf("key %s dropped", k)
				}
			}
			for _, keep := range []string{"gofmt -w", "notify-send claude", "./guard.sh", "./format.sh"} {
				if strings.Contains(before, keep) && !strings.Contains(c.After, keep) {
					t.Errorf("user's hook %q dropped", keep)
				}
			}
			inst, err := capture.Installed(a, c.After)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range capture.NativeEvents(a) {
				if !strings.Contains(inst[ev], "/usr/local/bin/cairn hook "+ev+" --agent "+string(a)) {
					t.Errorf("event %s: %q", ev, inst[ev])
				}
			}
			// Idempotent.
			again, err := capture.PlanInstall(a, "settings.json", c.After, "/usr/local/bin/cairn", "", capture.InstallOptions{})
			if err != nil || again.Changed {
				t.Fatalf("second install changed the file (%v):\n%s", err, again.Diff())
			}
			// A moved binary replaces cairn's entries, never adds more.
			moved, _ := capture.PlanInstall(a, "settings.json", c.After, "/opt/cairn/bin/cairn", "/data/c.db", capture.InstallOptions{})
			if n := strings.Count(moved.After, "/usr/local/bin/cairn"); n != 0 {
				t.Fatalf("old entries left: %d", n)
			}
			if n := strings.Count(moved.After, "/opt/cairn/bin/cairn --db /data/c.db hook"); n != len(capture.NativeEvents(a)) {
				t.Fatalf("%d new entries, want %d", n, len(capture.NativeEvents(a)))
			}
			// Uninstall gives back the user's hooks and nothing of cairn's.
			u, err := capture.PlanUninstall(a, "settings.json", moved.After)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(u.After, "cairn") {
				t.Fatalf("uninstall left cairn:\n%s", u.After)
			}
			var back map[string]any
			json.Unmarshal([]byte(u.After), &back)
			if !jsonEqual(was, back) {
				t.Fatalf("uninstall did not restore the file:\nbefore %s\nafter  %s", before, u.After)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestInstallIntoNothing(t *testing.T) {
	c, err := capture.PlanInstall(capture.Cursor, "hooks.json", "", "cairn", "", capture.InstallOptions{NoPrompts: true})
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Version int                            `json:"version"`
		Hooks   map[string][]map[string]string `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(c.After), &f); err != nil || f.Version != 1 {
		t.Fatalf("cursor file: %v\n%s", err, c.After)
	}
	if got := f.Hooks["beforeSubmitPrompt"][0]["command"]; got != "cairn hook beforeSubmitPrompt --agent cursor --no-prompts" {
		t.Fatalf("prompt hook %q", got)
	}
	u, _ := capture.PlanUninstall(capture.Cursor, "hooks.json", c.After)
	if strings.Contains(u.After, "hook") {
		t.Fatalf("uninstall left %s", u.After)
	}
}

func TestInstallRefusesBrokenSettings(t *testing.T) {
	for _, bad := range []string{"{", "[1,2]", `{"hooks": []}`, `{"hooks": {"Stop": {}}}`} {
		_, err := capture.PlanInstall(capture.ClaudeCode, "s.json", bad, "cairn", "", capture.InstallOptions{})
		if bad == `{"hooks": {"Stop": {}}}` {
			if memory.CodeOf(err) != memory.CodeInvalidParams {
				t.Errorf("%s: %v", bad, err)
			}
			continue
		}
		if memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: %v, want invalid_params", bad, err)
		}
	}
}

func TestApplyBacksUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(existing[capture.ClaudeCode]), 0o600)
	c, err := capture.PlanInstall(capture.ClaudeCode, path, existing[capture.ClaudeCode], "cairn", "", capture.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := capture.Apply(&c, time.Unix(1_764_000_000, 0)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(c.Backup); string(b) != existing[capture.ClaudeCode] {
		t.Fatalf("backup %s holds %q", c.Backup, b)
	}
	if b, _ := os.ReadFile(path); string(b) != c.After {
		t.Fatal("file not written")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want the file's own 0600", fi.Mode().Perm())
	}
}

// A user's own hooks keep their text: installing does not rewrite
// "&&" or ">" in their commands as \u0026 or \u003e.
func TestInstallKeepsCommandsAsWritten(t *testing.T) {
	current := `{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Write",
        "hooks": [
          {
            "type": "command",
            "command": "cd \"$CLAUDE_PROJECT_DIR\" && make fmt > /dev/null"
          }
        ]
      }
    ]
  }
}
`
	for _, a := range []capture.Agent{capture.ClaudeCode, capture.GeminiCLI} {
		in, err := capture.PlanInstall(a, "settings.json", current, "/opt/cairn & co/cairn", "", capture.InstallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(in.After, `"command": "cd \"$CLAUDE_PROJECT_DIR\" && make fmt > /dev/null"`) || strings.Contains(in.After, `\u00`) {
			t.Fatalf("%s: the user's command was rewritten:\n%s", a, in.After)
		}
		out, err := capture.PlanUninstall(a, "settings.json", in.After)
		if err != nil {
			t.Fatal(err)
		}
		if out.After != current {
			t.Fatalf("%s: install then uninstall does not give the file back:\n%s", a, out.After)
		}
	}
}

// Installing and removing within one second keeps both backups: the
// second never overwrites the first (the user's own file).
func TestApplyNeverOverwritesABackup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	os.WriteFile(path, []byte(existing[capture.ClaudeCode]), 0o600)
	now := time.Unix(1_764_000_000, 0)
	in, err := capture.PlanInstall(capture.ClaudeCode, path, existing[capture.ClaudeCode], "cairn", "", capture.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := capture.Apply(&in, now); err != nil {
		t.Fatal(err)
	}
	out, err := capture.PlanUninstall(capture.ClaudeCode, path, in.After)
	if err != nil {
		t.Fatal(err)
	}
	if err := capture.Apply(&out, now); err != nil {
		t.Fatal(err)
	}
	if in.Backup == "" || out.Backup == "" || in.Backup == out.Backup {
		t.Fatalf("backups %q and %q", in.Backup, out.Backup)
	}
	if b, _ := os.ReadFile(in.Backup); string(b) != existing[capture.ClaudeCode] {
		t.Fatalf("the first backup %s now holds %q, not the user's file", in.Backup, b)
	}
	if b, _ := os.ReadFile(out.Backup); string(b) != in.After {
		t.Fatalf("the second backup %s holds %q", out.Backup, b)
	}
}

// A settings file that is a symbolic link (a dotfiles repository) stays
// one: the file it points to is changed, not replaced by a copy.
func TestApplyFollowsASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "claude-settings.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte(existing[capture.ClaudeCode]), 0o640)
	path := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.Symlink(target, path); err != nil {
		t.Skipf("symbolic links are not available here: %v", err)
	}
	c, err := capture.PlanInstall(capture.ClaudeCode, path, existing[capture.ClaudeCode], "cairn", "", capture.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := capture.Apply(&c, time.Unix(1_764_000_000, 0)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the settings file is no longer a link: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != c.After {
		t.Fatalf("the linked file was not changed: %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(c.Backup); string(b) != existing[capture.ClaudeCode] {
		t.Fatalf("backup %s holds %q", c.Backup, b)
	}
}

func TestDenyList(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, capture.DenyFile), []byte("# ours\nsecrets/\nconfig/prod.yaml\n*.sqlite\n"), 0o644)
	d := capture.LoadDeny(dir)
	for file, want := range map[string]bool{
		".env": true, "app/.env.local": true, "certs/server.pem": true, "/home/u/.ssh/id_rsa": true,
		"secrets/db.txt": true, "config/prod.yaml": true, "data/x.sqlite": true,
		"main.go": false, "config/dev.yaml": false, "docs/env.md": false, "environment.go": false,
	} {
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, file)
		}
		if got := d.Match(dir, p); got != want {
			t.Errorf("%s: denied %v, want %v", file, got, want)
		}
	}
}
