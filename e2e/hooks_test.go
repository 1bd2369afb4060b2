package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hookEnv is a user's home with a repository in it, and the database.
type hookEnv struct {
	home, repo, db string
	// spool is where hooks keep batches for db; env is added to every
	// command's environment.
	spool string
	env   []string
}

func newHookEnv(t *testing.T) hookEnv {
	t.Helper()
	dir := t.TempDir()
	waitForProcessesIn(t, dir)
	h := hookEnv{home: filepath.Join(dir, "home"), repo: filepath.Join(dir, "shop"), db: filepath.Join(dir, "cairn.db")}
	h.spool = h.db + "-spool"
	os.MkdirAll(filepath.Join(h.repo, ".git"), 0o755)
	os.MkdirAll(h.home, 0o755)
	os.WriteFile(filepath.Join(h.repo, ".git", "HEAD"), []byte("ref: refs/heads/fix/checkout\n"), 0o644)
	return h
}

func (h hookEnv) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(cairnBin, args...)
	cmd.Env = append(append(os.Environ(), "HOME="+h.home, "CAIRN_DB="+h.db), h.env...)
	cmd.Dir = h.repo
	return cmd
}

// run runs cairn and returns its standard output; it must succeed.
func (h hookEnv) run(t *testing.T, stdin []byte, env []string, args ...string) string {
	t.Helper()
	cmd := h.cmd(args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// payload is a recorded Claude Code payload placed in this repository.
func (h hookEnv) payload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "capture", "testdata", "hooks", "claude-code", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(b), "/src/shop", h.repo))
}

func (h hookEnv) spooled(t *testing.T) int {
	t.Helper()
	entries, _ := os.ReadDir(h.spool)
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n
}

// count is how many exported records contain s.
func (h hookEnv) count(t *testing.T, s string) int {
	t.Helper()
	return strings.Count(h.run(t, nil, nil, "export"), s)
}

// waitSpool waits until the background writer has emptied the spool and
// let go of it (it has closed the database by then).
func (h hookEnv) waitSpool(t *testing.T) {
	t.Helper()
	for start := time.Now(); h.spooled(t) > 0 || !h.writerDone(); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > stuck {
			t.Fatalf("%d batches still in the spool", h.spooled(t))
		}
	}
}

// writerDone says no background writer holds the spool's lock.
func (h hookEnv) writerDone() bool {
	f, err := os.OpenFile(h.spool+".lock", os.O_RDWR, 0)
	if err != nil {
		return true // no writer ever ran
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

func TestHooksInstallWithTheBinary(t *testing.T) {
	h := newHookEnv(t)
	settings := filepath.Join(h.home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	mine := `{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`
	os.WriteFile(settings, []byte(mine), 0o644)
	diff := h.run(t, nil, nil, "hooks", "install", "claude-code", "--dry-run")
	if !strings.Contains(diff, "+            \"command\": \""+cairnBin+" hook SessionStart --agent claude-code\"") {
		t.Fatalf("dry run diff:\n%s", diff)
	}
	if b, _ := os.ReadFile(settings); string(b) != mine {
		t.Fatal("--dry-run changed the file")
	}
	h.run(t, nil, nil, "hooks", "install", "claude-code")
	if out := h.run(t, nil, nil, "hooks", "install", "claude-code"); !strings.Contains(out, "already installed") {
		t.Fatalf("second install: %s", out)
	}
	var st struct {
		Agents []struct {
			Agent     string            `json:"agent"`
			Installed map[string]string `json:"installed"`
			Missing   []string          `json:"missing"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(h.run(t, nil, nil, "--json", "hooks", "status", "claude-code")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Agents) != 1 || len(st.Agents[0].Missing) != 0 || len(st.Agents[0].Installed) != 7 {
		t.Fatalf("status %+v", st)
	}
	backups, _ := filepath.Glob(settings + ".cairn-*.bak")
	if len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	h.run(t, nil, nil, "hooks", "uninstall", "claude-code")
	b, _ := os.ReadFile(settings)
	if strings.Contains(string(b), "cairn") || !strings.Contains(string(b), "say done") {
		t.Fatalf("after uninstall:\n%s", b)
	}
}

// TestHookSessionWithTheBinary runs a whole recorded session through
// cairn hook, as Claude Code would, then starts the next session.
func TestHookSessionWithTheBinary(t *testing.T) {
	h := newHookEnv(t)
	for _, f := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse-Bash", "PostToolUse-Edit", "PostToolUse-Read-env",
		"PostToolUseFailure", "PreCompact", "Stop", "SessionEnd"} {
		event := strings.SplitN(f, "-", 2)[0]
		out := h.run(t, h.payload(t, f), nil, "hook", event, "--agent", "claude-code")
		if event != "SessionStart" && out != "" {
			t.Fatalf("%s wrote %q to the agent", f, out)
		}
		// Each hook's batch is written before the next event, as the
		// session's order needs (the agent runs them one after another;
		// the background writer keeps up).
		h.waitSpool(t)
	}
	dump := h.run(t, nil, nil, "export")
	for _, secret := range []string{"S3cretPassw0rd", "sk_live_51HxAbCdEfGhIjKlMnOpQrSt", "9f8e7d6c5b4a39281706f5e4d3c2b1a0Zz"} {
		if strings.Contains(dump, secret) {
			t.Errorf("secret %q reached the database", secret)
		}
	}
	if !strings.Contains(dump, `"status":"closed"`) || !strings.Contains(dump, "Changed: auth/session.go") {
		t.Fatalf("no closed capsule with its summary:\n%s", dump)
	}
	next := strings.ReplaceAll(string(h.payload(t, "SessionStart")), "8c35adc1-5f0e-4a5e-9c41-2b6f0d7e9a11", "second-session")
	out := h.run(t, []byte(next), nil, "hook", "SessionStart", "--agent", "claude-code")
	var res struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("session start output %q: %v", out, err)
	}
	ctx := res.HookSpecificOutput.AdditionalContext
	if res.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(ctx, "## Last session") ||
		!strings.Contains(ctx, "Changed: auth/session.go") || !strings.Contains(ctx, "(branch fix/checkout)") {
		t.Fatalf("context:\n%s", ctx)
	}
	// A payload that is not one: exit 1 (never 2, which would block the
	// agent), and a message.
	cmd := h.cmd("hook", "PostToolUse", "--agent", "claude-code")
	cmd.Stdin = strings.NewReader("not json")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "JSON object") {
		t.Fatalf("bad payload: %v %q", err, errb.String())
	}
}

// startPaused runs cairn until it says it paused at point, and returns
// the process, still running.
func startPaused(t *testing.T, cmd *exec.Cmd, stdin []byte, point string) *exec.Cmd {
	t.Helper()
	cmd.Env = append(cmd.Env, "CAIRN_HOOK_PAUSE="+point)
	cmd.Stdin = bytes.NewReader(stdin)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "paused "+point) {
			return cmd
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("cairn never paused at %s", point)
	return nil
}

func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
}

// TestHookKilledNeverLosesAWrite kills hooks (and the spool's writer) with
// SIGKILL at each point between reading the event and forgetting it, and
// checks the event ends up in the database exactly once.
func TestHookKilledNeverLosesAWrite(t *testing.T) {
	h := newHookEnv(t)
	h.run(t, h.payload(t, "SessionStart"), nil, "hook", "SessionStart", "--agent", "claude-code")
	bash := func(marker string) []byte {
		return []byte(strings.ReplaceAll(string(h.payload(t, "PostToolUse-Bash")), "go test ./checkout/...", "go test ./"+marker+"/..."))
	}

	// 1. Killed once the batch is in the spool, before any write.
	kill9(t, startPaused(t, h.cmd("hook", "PostToolUse", "--agent", "claude-code"), bash("killed-after-spool"), "after-spool"))
	if n := h.spooled(t); n != 1 {
		t.Fatalf("spool holds %d batches, want 1", n)
	}
	if n := h.count(t, "killed-after-spool"); n != 0 {
		t.Fatalf("written before the write: %d", n)
	}
	// The next hook's writer takes it along.
	h.run(t, bash("next-hook"), nil, "hook", "PostToolUse", "--agent", "claude-code")
	h.waitSpool(t)
	if a, b := h.count(t, "killed-after-spool"), h.count(t, "next-hook"); a != 1 || b != 1 {
		t.Fatalf("after the next hook: %d and %d copies, want 1 and 1", a, b)
	}

	// 2. Killed after the write, before the batch left the spool (a hook
	// writing in its own process).
	direct := h.cmd("hook", "PostToolUse", "--agent", "claude-code")
	direct.Env = append(direct.Env, "CAIRN_HOOK_WRITE=direct")
	kill9(t, startPaused(t, direct, bash("killed-after-write"), "after-write"))
	if n, s := h.count(t, "killed-after-write"), h.spooled(t); n != 1 || s != 1 {
		t.Fatalf("after the kill: %d copies written, %d spooled; want 1 and 1", n, s)
	}
	h.run(t, nil, nil, "hooks", "flush")
	if n, s := h.count(t, "killed-after-write"), h.spooled(t); n != 1 || s != 0 {
		t.Fatalf("after the flush: %d copies, %d spooled; want 1 and 0", n, s)
	}

	// 3. The spool's writer killed between writing a batch and removing it.
	kill9(t, startPaused(t, h.cmd("hook", "PostToolUse", "--agent", "claude-code"), bash("writer-killed"), "after-spool"))
	kill9(t, startPaused(t, h.cmd("hooks", "flush"), nil, "after-write"))
	if n := h.count(t, "writer-killed"); n != 1 {
		t.Fatalf("%d copies after the writer's kill, want 1", n)
	}
	out := h.run(t, nil, nil, "hooks", "flush")
	if n, s := h.count(t, "writer-killed"), h.spooled(t); n != 1 || s != 0 {
		t.Fatalf("after the second flush (%s): %d copies, %d spooled", out, n, s)
	}
	h.waitSpool(t)
}

// TestHookSpoolNeverJams: a tool that printed a binary file (NUL bytes)
// is recorded, and a batch the database refuses (here a spool file that
// is not a batch, and one whose content the store cannot take) is set
// aside in the spool's rejected folder instead of holding back every
// later hook: the events after it reach the database, and hooks status
// says what was set aside.
func TestHookSpoolNeverJams(t *testing.T) {
	h := newHookEnv(t)
	bin := strings.Replace(string(h.payload(t, "PostToolUse-Bash")), `"stdout":"`, `"stdout":"\u007fELF\u0000\u0001 zqbinaryout `, 1)
	h.run(t, []byte(bin), nil, "hook", "PostToolUse", "--agent", "claude-code")
	h.waitSpool(t)
	if h.count(t, "zqbinaryout") != 1 {
		t.Fatal("the binary output's observation is not in the database")
	}

	spool := h.db + "-spool"
	bad := `{"id":"hook_00000000000000000000000001","agent":"claude-code","event":"tool","scopeIds":{"sessionId":"s-bad","repoId":"/r"},"ts":1,` +
		`"observations":[{"id":"obs_bad1","kind":"command","content":"nul \u0000 inside","provenance":{},"ts":1}]}`
	os.WriteFile(filepath.Join(spool, "hook_00000000000000000000000001.json"), []byte(bad), 0o600)
	os.WriteFile(filepath.Join(spool, "hook_00000000000000000000000002.json"), []byte(`{"id": "truncated`), 0o600)
	prompt := strings.Replace(string(h.payload(t, "UserPromptSubmit")), `"prompt":"`, `"prompt":"zqafterjam `, 1)
	h.run(t, []byte(prompt), nil, "hook", "UserPromptSubmit", "--agent", "claude-code")
	h.waitSpool(t)
	if h.count(t, "zqafterjam") != 1 {
		t.Fatal("a hook behind a refused batch did not reach the database")
	}
	rejected, _ := filepath.Glob(filepath.Join(spool, "rejected", "*.json"))
	if len(rejected) != 2 {
		t.Fatalf("set aside: %v; want the two refused batches", rejected)
	}
	if out := h.run(t, nil, nil, "hooks", "status"); !strings.Contains(out, "2 hook writes the database refused set aside in "+filepath.Join(spool, "rejected")) {
		t.Fatalf("hooks status does not say what was set aside:\n%s", out)
	}
}
