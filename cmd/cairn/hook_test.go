package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// A hook never exits 2, which Claude Code reads as "block this prompt or
// tool call": not for a flag this version does not know (a settings file
// committed by a teammate with another cairn), a missing or extra
// argument, a payload it cannot read, nor a panic.
func TestHookNeverExitsTwo(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	prompt := `{"session_id":"s1","cwd":"/src/shop","hook_event_name":"UserPromptSubmit","prompt":"hello"}`
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{prompt, []string{"hook", "UserPromptSubmit", "--agent", "claude-code", "--flag-of-a-later-version"}},
		{prompt, []string{"hook", "--agent", "claude-code"}},
		{prompt, []string{"hook", "UserPromptSubmit", "PostToolUse", "--agent", "claude-code"}},
		{prompt, []string{"hook", "UserPromptSubmit", "--agent", "an-agent-from-the-future"}},
		{"not json", []string{"hook", "UserPromptSubmit", "--agent", "claude-code"}},
	} {
		_, errs, code := cli(t, db, c.stdin, c.args...)
		if code != 1 || errs == "" {
			t.Errorf("cairn %s: exit %d (%q); want 1 and a message", strings.Join(c.args, " "), code, errs)
		}
	}
	if _, errs, code := cli(t, db, prompt, "hook", "UserPromptSubmit", "--agent", "claude-code"); code != 0 {
		t.Fatalf("a good hook: exit %d %s", code, errs)
	}
	// Other commands keep their exit codes.
	if _, _, code := cli(t, db, "", "log", "--no-such-flag", "x"); code != 2 {
		t.Fatalf("a usage error outside hooks: exit %d; want 2", code)
	}
	var errw bytes.Buffer
	if code := hookExit(&errw, func() int { panic("a bug") }); code != 1 || !strings.Contains(errw.String(), "a bug") {
		t.Fatalf("a panicking hook: exit %d, %q", code, errw.String())
	}
}

// cairn config says whether writes are redacted and what the hooks record.
func TestConfigShowsCapture(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	out := mustCLI(t, db, "config")
	if !strings.Contains(out, "redaction          on:") || !strings.Contains(out, "user prompts recorded") || !strings.Contains(out, "write mode background") {
		t.Fatalf("config:\n%s", out)
	}
	t.Setenv("CAIRN_REDACT", "off")
	t.Setenv(EnvCapturePrompts, "off")
	t.Setenv(EnvHookWrite, "direct")
	out = mustCLI(t, db, "config")
	if !strings.Contains(out, "redaction          off") || !strings.Contains(out, "user prompts not recorded") || !strings.Contains(out, "write mode direct") {
		t.Fatalf("config with capture settings:\n%s", out)
	}
}
