package cairn_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/memory"
)

// session replays the recorded Claude Code session: each payload parsed
// and built into a batch, at one-second steps.
func session(t *testing.T, sessionID string) []capture.Batch {
	t.Helper()
	n := 0
	ids := func(prefix string) string {
		n++
		return fmt.Sprintf("%s_%s_%03d", prefix, sessionID, n)
	}
	var out []capture.Batch
	for i, f := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse-Bash", "PostToolUse-Edit", "PostToolUse-Read-env",
		"PostToolUseFailure", "PreCompact", "Stop", "SessionEnd"} {
		data, err := os.ReadFile(filepath.Join("capture", "testdata", "hooks", "claude-code", f+".json"))
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.ReplaceAll(string(data), "8c35adc1-5f0e-4a5e-9c41-2b6f0d7e9a11", sessionID))
		ev, err := capture.Parse(capture.ClaudeCode, "", data)
		if err != nil {
			t.Fatal(err)
		}
		b, err := capture.Build(ev, capture.Repo{Root: "/src/shop", Branch: "fix/checkout"}, 1_764_000_000_000+int64(i)*1000,
			capture.Options{Redactor: &capture.Redactor{}, Deny: capture.LoadDeny(""), NewID: ids})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestRecorderAppliesASessionOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	rec, err := cairn.OpenRecorder(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var capsule string
	for _, b := range session(t, "s1") {
		res, err := rec.Apply(ctx, b)
		if err != nil {
			t.Fatalf("%s: %v", b.Event, err)
		}
		// Applying it again (a hook killed before it left the spool)
		// writes nothing more.
		again, err := rec.Apply(ctx, b)
		if err != nil || len(again.Observations) != 0 || again.Opened {
			t.Fatalf("%s applied twice: %+v %v", b.Event, again, err)
		}
		if res.CapsuleID != "" {
			capsule = res.CapsuleID
		}
	}
	rec.Close()
	eng := openAt(t, path, nil)
	c, err := eng.Capsule(ctx, capsule)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != memory.CapsuleClosed || len(c.ObservationIDs) != 6 || c.Scope.RepoID != "/src/shop" || c.Scope.AgentID != "claude-code" {
		t.Fatalf("capsule %+v", c)
	}
	s, err := eng.Summary(ctx, c.SummaryID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 prompts", "Changed: auth/session.go", "Asked: Checkout fails", "Last answer: Fixed"} {
		if !strings.Contains(s.Content, want) {
			t.Errorf("summary lacks %q:\n%s", want, s.Content)
		}
	}
	dump := export(t, eng)
	for _, secret := range []string{"S3cretPassw0rd", "sk_live_51HxAbCdEfGhIjKlMnOpQrSt", "9f8e7d6c5b4a39281706f5e4d3c2b1a0Zz"} {
		if strings.Contains(dump, secret) {
			t.Errorf("secret %q reached the database", secret)
		}
	}
	// The index catches up with what the lean path wrote.
	res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "TestCheckoutAfterLogin status 401", ScopeIDs: memory.Scope{RepoID: "/src/shop"}})
	if err != nil || len(res.Candidates) == 0 || !strings.Contains(res.Candidates[0].Entity.Content(), "401") {
		t.Fatalf("retrieve after hooks: %+v %v", res.Candidates, err)
	}
}

func TestSessionContext(t *testing.T) {
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), nil)
	for _, b := range session(t, "s1") {
		if _, err := eng.ApplyCapture(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	fix, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: "Decision: allow 5s of clock skew in session checks",
		ScopeIDs: memory.Scope{RepoID: "/src/shop"}})
	if err != nil {
		t.Fatal(err)
	}
	pin, err := eng.Pin(ctx, cairn.PinRequest{TargetID: fix.ID, Reason: "root cause"})
	if err != nil {
		t.Fatal(err)
	}
	// A new session starts.
	next := session(t, "s2")[0]
	if _, err := eng.ApplyCapture(ctx, next); err != nil {
		t.Fatal(err)
	}
	c, err := eng.SessionContext(ctx, cairn.SessionContextRequest{ScopeIDs: memory.Scope{RepoID: "/src/shop", SessionID: "s2"}, Branch: "fix/checkout"})
	if err != nil {
		t.Fatal(err)
	}
	md := c.Markdown
	if strings.Contains(md, "## Open session") {
		t.Errorf("a session just opened is shown:\n%s", md)
	}
	for _, want := range []string{"# cairn: memory of /src/shop (branch fix/checkout)", "## Pinned", fix.ID, "root cause",
		"## Last session", "Changed: auth/session.go", "## Relevant memories", "observation_get"} {
		if !strings.Contains(md, want) {
			t.Errorf("context lacks %q:\n%s", want, md)
		}
	}
	if c.Items[0].ID != pin.TargetID || c.Tokens > 1500 || c.Tokens != (len([]rune(md))+3)/4 {
		t.Fatalf("items %+v tokens %d", c.Items, c.Tokens)
	}
	// Once the session has recorded something (a resume, a compaction),
	// it is the open session.
	if _, err := eng.ApplyCapture(ctx, session(t, "s2")[2]); err != nil {
		t.Fatal(err)
	}
	resumed, err := eng.SessionContext(ctx, cairn.SessionContextRequest{ScopeIDs: memory.Scope{RepoID: "/src/shop", SessionID: "s2"}})
	if err != nil || !strings.Contains(resumed.Markdown, "## Open session") {
		t.Fatalf("resumed session: %v\n%s", err, resumed.Markdown)
	}
	md = resumed.Markdown
	// A small budget keeps the header, the pin and the footer and counts
	// what it left out.
	small, err := eng.SessionContext(ctx, cairn.SessionContextRequest{ScopeIDs: memory.Scope{RepoID: "/src/shop"}, TokenBudget: ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if small.Tokens > 100 || small.Omitted == 0 || !strings.Contains(small.Markdown, "observation_get") {
		t.Fatalf("small context (%d tokens, %d omitted):\n%s", small.Tokens, small.Omitted, small.Markdown)
	}
	// Deterministic.
	again, _ := eng.SessionContext(ctx, cairn.SessionContextRequest{ScopeIDs: memory.Scope{RepoID: "/src/shop", SessionID: "s2"}})
	if again.Markdown != md {
		t.Fatal("context differs between two calls")
	}
	for _, bad := range []cairn.SessionContextRequest{{}, {ScopeIDs: memory.Scope{SessionID: "s2"}}, {ScopeIDs: memory.Scope{RepoID: "/r"}, TokenBudget: ptr(5)}} {
		if _, err := eng.SessionContext(ctx, bad); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	// An empty repository says so.
	empty, err := eng.SessionContext(ctx, cairn.SessionContextRequest{ScopeIDs: memory.Scope{RepoID: "/elsewhere"}})
	if err != nil || !strings.Contains(empty.Markdown, "Nothing recorded") || len(empty.Items) != 0 {
		t.Fatalf("empty repo: %v\n%s", err, empty.Markdown)
	}
}

func TestPreCompact(t *testing.T) {
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), nil)
	for _, b := range session(t, "s1")[:4] {
		if _, err := eng.ApplyCapture(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	s, err := eng.PreCompact(ctx, cairn.PreCompactRequest{ScopeIDs: memory.Scope{SessionID: "s1"}})
	if err != nil || !strings.Contains(s.Content, "Changed: auth/session.go") || s.Confidence != 0.5 {
		t.Fatalf("extractive: %+v %v", s, err)
	}
	own, err := eng.PreCompact(ctx, cairn.PreCompactRequest{ScopeIDs: memory.Scope{SessionID: "s1"}, Summary: "Fixing clock skew in auth; tests still red."})
	if err != nil || own.ID != s.ID || own.Content != "Fixing clock skew in auth; tests still red." {
		t.Fatalf("own summary: %+v %v", own, err)
	}
	res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "clock skew", ScopeIDs: memory.Scope{SessionID: "s1"}})
	if err != nil || res.CurrentSummary == nil || res.CurrentSummary.ID != s.ID {
		t.Fatalf("current summary: %+v %v", res.CurrentSummary, err)
	}
	if _, err := eng.PreCompact(ctx, cairn.PreCompactRequest{ScopeIDs: memory.Scope{SessionID: "none"}}); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("no capsule: %v", err)
	}
	if _, err := eng.PreCompact(ctx, cairn.PreCompactRequest{}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("no session: %v", err)
	}
}

func TestWritesAreRedactedByDefault(t *testing.T) {
	key := "AKIA" + "QWERTYUIOPASDFGH"
	for _, off := range []bool{false, true} {
		eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{NoRedact: off})
		o, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindCommand, Content: "export AWS_ACCESS_KEY_ID=" + key})
		if err != nil {
			t.Fatal(err)
		}
		th, err := eng.Think(ctx, cairn.ThinkRequest{Content: "the deploy key is " + key})
		if err != nil {
			t.Fatal(err)
		}
		leaked := strings.Contains(o.Content, key) || strings.Contains(th.Content, key) || strings.Contains(export(t, eng), key)
		if leaked != off {
			t.Fatalf("NoRedact=%v: observation %q, thought %q", off, o.Content, th.Content)
		}
		if !off && !strings.Contains(o.Content, "[REDACTED:aws-key]") {
			t.Fatalf("no visible marker: %q", o.Content)
		}
	}
	set, err := cairn.SettingsFromEnv(func(k string) string { return map[string]string{cairn.EnvRedact: "off"}[k] })
	if err != nil || set.Redact {
		t.Fatalf("CAIRN_REDACT=off: %+v %v", set.Redact, err)
	}
	if _, err := cairn.SettingsFromEnv(func(k string) string { return map[string]string{cairn.EnvRedact: "maybe"}[k] }); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("CAIRN_REDACT=maybe: %v", err)
	}
}
