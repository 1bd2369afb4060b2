package capture_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/memory"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// ids makes deterministic ids.
func ids() func(string) string {
	n := 0
	return func(prefix string) string {
		n++
		return fmt.Sprintf("%s_%04d", prefix, n)
	}
}

// payloads lists the recorded payloads of an agent: event name (the file
// name up to its first '-') and path.
func payloads(t *testing.T, a capture.Agent) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "hooks", string(a), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no payloads for %s", a)
	}
	out := map[string]string{}
	for _, f := range files {
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = f
	}
	return out
}

// TestRecordedPayloads parses every recorded payload and builds what it
// records, compared with golden files (go test ./capture -update rewrites
// them).
func TestRecordedPayloads(t *testing.T) {
	for _, a := range capture.Agents {
		for name, path := range payloads(t, a) {
			t.Run(string(a)+"/"+name, func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				native := strings.SplitN(name, "-", 2)[0]
				ev, err := capture.Parse(a, native, data)
				if err != nil {
					t.Fatal(err)
				}
				if ev.Native != native {
					t.Fatalf("event %q, want %q", ev.Native, native)
				}
				repo := capture.Repo{Root: "/src/shop", Branch: "fix/checkout"}
				b, err := capture.Build(ev, repo, 1_764_037_800_000, capture.Options{Redactor: &capture.Redactor{}, Deny: &capture.DenyList{Patterns: capture.DefaultDeny}, NewID: ids()})
				if err != nil {
					t.Fatal(err)
				}
				got, _ := json.MarshalIndent(struct {
					Event capture.Event `json:"event"`
					Batch capture.Batch `json:"batch"`
				}{ev, b}, "", "  ")
				golden := filepath.Join("testdata", "hooks", "golden", string(a)+"-"+name+".json")
				if *update {
					os.MkdirAll(filepath.Dir(golden), 0o755)
					if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./capture -run TestRecordedPayloads -update)", err)
				}
				if strings.TrimSpace(string(want)) != strings.TrimSpace(string(got)) {
					t.Errorf("batch differs from %s:\n%s", golden, got)
				}
			})
		}
	}
}

func build(t *testing.T, a capture.Agent, file string) capture.Batch {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hooks", string(a), file))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := capture.Parse(a, "", data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Build(ev, capture.Repo{Root: "/src/shop"}, 1, capture.Options{Redactor: &capture.Redactor{}, Deny: capture.LoadDeny(""), NewID: ids()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWhatHooksRecord(t *testing.T) {
	// A failing command: kind command with its exit code... or error.
	b := build(t, capture.GeminiCLI, "AfterTool-shell.json")
	if len(b.Observations) != 1 || b.Observations[0].Kind != memory.KindError || !strings.Contains(b.Observations[0].Content, "[exit 1]") {
		t.Fatalf("gemini failing shell: %+v", b.Observations)
	}
	// Claude's Bash response has no exit code: a command, output kept.
	b = build(t, capture.ClaudeCode, "PostToolUse-Bash.json")
	o := b.Observations[0]
	if o.Kind != memory.KindCommand || !strings.HasPrefix(o.Content, "$ go test ./checkout/...\n--- FAIL") {
		t.Fatalf("claude bash: %+v", o)
	}
	// A failed tool: an error with its exit code, the bearer token gone.
	b = build(t, capture.ClaudeCode, "PostToolUseFailure.json")
	o = b.Observations[0]
	if o.Kind != memory.KindError || !strings.Contains(o.Content, "[exit 7]") || strings.Contains(o.Content, "9f8e7d6c5b4a39281706f5e4d3c2b1a0Zz") ||
		!strings.Contains(o.Content, "[REDACTED:auth-header]") {
		t.Fatalf("failure: %+v", o)
	}
	var prov map[string]any
	json.Unmarshal(o.Provenance, &prov)
	if prov["redactions"] == nil || prov["exitCode"] != float64(7) {
		t.Fatalf("provenance %s", o.Provenance)
	}
	// An edit: a diff of the structured patch, the path relative.
	b = build(t, capture.ClaudeCode, "PostToolUse-Edit.json")
	o = b.Observations[0]
	if o.Kind != memory.KindFileDiff || !strings.Contains(o.Content, "--- a/auth/session.go") || !strings.Contains(o.Content, "+\tif now.Add(-clockSkew).After(s.Expiry) {") {
		t.Fatalf("edit: %+v", o)
	}
	// Reading .env: on the deny list, no content at all.
	b = build(t, capture.ClaudeCode, "PostToolUse-Read-env.json")
	o = b.Observations[0]
	if strings.Contains(o.Content, "S3cret") || strings.Contains(o.Content, "sk_live") || !strings.Contains(o.Content, "deny list") {
		t.Fatalf(".env: %+v", o)
	}
	// Session start opens the capsule; session end closes it; pre-compact
	// summarises.
	if b := build(t, capture.ClaudeCode, "SessionStart.json"); b.Open == nil || len(b.Observations) != 0 {
		t.Fatalf("session start: %+v", b)
	}
	if b := build(t, capture.ClaudeCode, "SessionEnd.json"); !b.Close {
		t.Fatalf("session end: %+v", b)
	}
	if b := build(t, capture.GeminiCLI, "PreCompress.json"); !b.Summarize {
		t.Fatalf("pre-compress: %+v", b)
	}
	// Cursor's conversation is the session; its workspace root the cwd.
	b = build(t, capture.Cursor, "beforeSubmitPrompt.json")
	if b.Scope.SessionID != "c0ffee00-1234-4abc-8def-0123456789ab" || b.Open == nil || b.Observations[0].Content != "user: Fix the session expired error in checkout" {
		t.Fatalf("cursor prompt: %+v", b)
	}
}

func TestPromptsOptOut(t *testing.T) {
	data, _ := os.ReadFile("testdata/hooks/claude-code/UserPromptSubmit.json")
	ev, err := capture.Parse(capture.ClaudeCode, "", data)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := capture.Build(ev, capture.Repo{Root: "/r"}, 1, capture.Options{NoPrompts: true, NewID: ids()})
	if len(b.Observations) != 0 || b.Open == nil {
		t.Fatalf("prompt recorded despite NoPrompts: %+v", b)
	}
}

func TestOutputCapped(t *testing.T) {
	long := strings.Repeat("a", 10000) + "TAIL"
	p, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": "/r", "hook_event_name": "PostToolUse", "tool_name": "Bash",
		"tool_input": map[string]string{"command": "yes"}, "tool_response": map[string]any{"stdout": "HEAD" + long}})
	ev, err := capture.Parse(capture.ClaudeCode, "", p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := capture.Build(ev, capture.Repo{Root: "/r"}, 1, capture.Options{MaxOutputBytes: 1000, NewID: ids()})
	c := b.Observations[0].Content
	if len(c) > 1200 || !strings.Contains(c, "HEAD") || !strings.Contains(c, "TAIL") || !strings.Contains(c, "bytes cut]") {
		t.Fatalf("capped output (%d bytes): %.300q", len(c), c)
	}
}

func TestBadPayloads(t *testing.T) {
	for _, p := range []string{"", "[]", "not json", `{"hook_event_name":"Nope","session_id":"s"}`, `{"hook_event_name":`} {
		if _, err := capture.Parse(capture.ClaudeCode, "", []byte(p)); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%q: %v, want invalid_params", p, err)
		}
	}
	ev, err := capture.Parse(capture.ClaudeCode, "", []byte(`{"hook_event_name":"Stop"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capture.Build(ev, capture.Repo{}, 1, capture.Options{NewID: ids()}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Errorf("no session id: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, a := range capture.Agents {
		files, _ := filepath.Glob(filepath.Join("testdata", "hooks", string(a), "*.json"))
		for _, file := range files {
			b, _ := os.ReadFile(file)
			f.Add(string(a), string(b))
		}
	}
	f.Fuzz(func(t *testing.T, agent, payload string) {
		a, err := capture.ParseAgent(agent)
		if err != nil {
			return
		}
		ev, err := capture.Parse(a, "", []byte(payload))
		if err != nil {
			if memory.CodeOf(err) != memory.CodeInvalidParams {
				t.Fatalf("error code %v", err)
			}
			return
		}
		b, err := capture.Build(ev, capture.FindRepo(""), 1, capture.Options{Redactor: &capture.Redactor{}, NewID: ids()})
		if err != nil {
			return
		}
		for _, o := range b.Observations {
			if again, _ := (&capture.Redactor{}).Redact(o.Content); again != o.Content {
				t.Fatalf("redaction not idempotent: %q -> %q", o.Content, again)
			}
		}
	})
}

// Whatever a tool printed (a binary file's bytes, a NUL, bytes that are
// not UTF-8), what a hook records is text the database takes: a batch the
// store refused would wait in the spool for ever, ahead of every later one.
func TestHookRecordsOnlyStorableText(t *testing.T) {
	payloads := []string{
		`{"session_id":"s1","cwd":"/src/shop","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cat app.bin"},"tool_response":{"stdout":"\u007fELF\u0000\u0001\u0002 binary\u0000","stderr":"","interrupted":false}}`,
		"{\"session_id\":\"s1\",\"cwd\":\"/src/shop\",\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"mcp__db__query\",\"tool_input\":{\"sql\":\"select \xff\xfe\"},\"tool_response\":\"ok \\u0000 done\"}",
		`{"session_id":"s1","cwd":"/src/shop","hook_event_name":"UserPromptSubmit","prompt":"why does \u0000 break it?"}`,
		`{"session_id":"s1","cwd":"/src/shop","hook_event_name":"Stop","last_assistant_message":"the NUL \u0000 was it"}`,
	}
	for _, p := range payloads {
		native := map[bool]string{true: "PostToolUse"}[strings.Contains(p, "PostToolUse")]
		if native == "" {
			native = map[bool]string{true: "UserPromptSubmit", false: "Stop"}[strings.Contains(p, "UserPromptSubmit")]
		}
		ev, err := capture.Parse(capture.ClaudeCode, native, []byte(p))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		b, err := capture.Build(ev, capture.Repo{Root: "/src/shop"}, 1, capture.Options{Redactor: &capture.Redactor{}, NewID: ids()})
		if err != nil || len(b.Observations) != 1 {
			t.Fatalf("%s: %+v, %v", p, b, err)
		}
		o := b.Observations[0]
		if err := memory.ValidateContent("content", o.Content, memory.DefaultMaxContentBytes); err != nil {
			t.Errorf("%s records %q, which the store refuses: %v", native, o.Content, err)
		}
		if !strings.Contains(o.Content, "\uFFFD") {
			t.Errorf("%s records %q: the byte the store cannot take should show as U+FFFD", native, o.Content)
		}
	}
}
