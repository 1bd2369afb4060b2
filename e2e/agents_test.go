package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// agentsReady checks that node and e2e/agents' packages are installed
// (.ci/run runs npm ci there); outside CI their absence skips the test.
func agentsReady(t *testing.T, pkg string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("agents", "node_modules", pkg, "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install node and e2e/agents' packages (cd e2e/agents && npm ci): %v", err)
		}
		t.Skipf("needs node and e2e/agents' packages: run (cd e2e/agents && npm ci): %v", err)
	}
	return node
}

var (
	peerFilesOnce sync.Once
	peerFilesDir  string
	peerFilesErr  string
)

// peerFiles runs the real peers once (e2e/agents/produce.mjs) and returns
// the folder of the files they wrote.
func peerFiles(t *testing.T) string {
	t.Helper()
	node := agentsReady(t, "mem0ai")
	peerFilesOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-peers-")
		if err != nil {
			peerFilesErr = err.Error()
			return
		}
		cmd := exec.Command(node, "produce.mjs", dir)
		cmd.Dir = "agents"
		cmd.Env = append(os.Environ(), "MEM0_TELEMETRY=false", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			peerFilesErr = err.Error() + ": " + string(out)
			return
		}
		peerFilesDir = dir
	})
	if peerFilesErr != "" {
		t.Fatalf("running the peers: %s", peerFilesErr)
	}
	return peerFilesDir
}

type peerReport struct {
	From     string         `json:"from"`
	Mapped   map[string]int `json:"mapped"`
	Imported map[string]int `json:"imported"`
	Present  map[string]int `json:"present"`
	Notes    []string       `json:"notes"`
}

func (h hookEnv) importPeer(t *testing.T, from, file string, extra ...string) peerReport {
	t.Helper()
	var reps []peerReport
	args := append([]string{"--json", "import", "--from", from}, extra...)
	out := h.run(t, nil, nil, append(args, file)...)
	if err := json.Unmarshal([]byte(out), &reps); err != nil || len(reps) != 1 {
		t.Fatalf("import report %q: %v", out, err)
	}
	return reps[0]
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestImportFromRealPeers imports files written by the peers' own npm
// packages: all of it once, nothing more the second time, nothing at all
// from a damaged file.
func TestImportFromRealPeers(t *testing.T) {
	dir := peerFiles(t)
	h := newHookEnv(t)
	cases := []struct {
		from, file string
		want       map[string]int
		extra      []string
	}{
		{"mcp-memory", "mcp-memory.jsonl", map[string]int{"entities": 3, "kg_observations": 5, "edges": 2}, []string{"--scope", "user=alice"}},
		{"kindling", "kindling-export.json", map[string]int{"observations": 5, "capsules": 1, "summaries": 1, "pins": 1}, nil},
		{"mem0", "mem0.json", map[string]int{"thoughts": 3}, nil},
	}
	for _, c := range cases {
		t.Run(c.from, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			rep := h.importPeer(t, c.from, path, c.extra...)
			for k, n := range c.want {
				if rep.Imported[k] != n {
					t.Errorf("imported %s: %d, want %d (report %+v)", k, rep.Imported[k], n, rep)
				}
			}
			if sum(rep.Imported) != sum(c.want) || len(rep.Mapped) == 0 {
				t.Errorf("report %+v", rep)
			}
			again := h.importPeer(t, c.from, path, c.extra...)
			if sum(again.Imported) != 0 || sum(again.Present) != sum(c.want) {
				t.Errorf("second import wrote %+v (present %+v)", again.Imported, again.Present)
			}
		})
	}
	dump := h.run(t, nil, nil, "export")
	for _, want := range []string{
		// mcp-memory: the graph, scoped as asked.
		`"name":"checkout-service","type":"service"`, `"relation":"depends on"`, `Allows 5s of clock skew since PR #412`, `"userId":"alice"`,
		// Kindling: ids, times, membership, the pin.
		`"id":"kd-obs-2"`, `"ts":1764000002000`, `"observationIds":["kd-obs-1","kd-obs-2","kd-obs-3","kd-obs-4"]`, `"id":"kd-pin-1"`,
		// mem0: thoughts with their scope and metadata.
		`"content":"Bob is allergic to peanuts"`, `"category=health"`, `"sessionId":"run-7"`, `"pipeline":"mem0"`,
	} {
		if !strings.Contains(dump, want) {
			t.Errorf("export lacks %s", want)
		}
	}
	// All or nothing: a damaged file writes none of its records. Each
	// damaged file holds records the database lacks (renamed), so a
	// partial write would show.
	src := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	kindling := strings.ReplaceAll(src("kindling-export.json"), `"kd-`, `"kx-`)
	kindlingBundle := strings.ReplaceAll(src("kindling-bundle.json"), `"kd-`, `"kx-`)
	var mem0 struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal([]byte(src("mem0.json")), &mem0); err != nil || len(mem0.Results) != 3 {
		t.Fatalf("mem0.json: %v", err)
	}
	for _, m := range mem0.Results {
		m["id"] = "again-" + m["id"].(string)
	}
	mem0New, _ := json.Marshal(mem0)
	mem0.Results[2]["memory"] = "  "
	mem0Blank, _ := json.Marshal(mem0)
	for _, c := range []struct {
		name, from, data, says string
	}{
		{"mcp-memory, a line cut short", "mcp-memory",
			strings.TrimRight(strings.Replace(src("mcp-memory.jsonl"), "Alice", "Alicia", -1), "\n") + "\n{\"type\":\"entity\",\"name\":\"x\"\n", "line 6"},
		{"kindling, truncated", "kindling", kindling[:len(kindling)*2/3], "not a Kindling export"},
		{"kindling, its last observation's provenance corrupt", "kindling",
			strings.Replace(kindling, `"provenance": {}`, `"provenance": [1]`, 1), "observation 5 (kx-obs-5): provenance must be a JSON object"},
		{"kindling bundle, truncated", "kindling", kindlingBundle[:len(kindlingBundle)/2], "not a Kindling export"},
		{"kindling bundle, an unknown bundle version", "kindling",
			strings.Replace(kindlingBundle, `"bundleVersion": "1.0"`, `"bundleVersion": "2.0"`, 1), `bundle version "2.0"`},
		{"mem0, truncated", "mem0", string(mem0New[:len(mem0New)-40]), "not mem0's getAll() result"},
		{"mem0, its last memory blank", "mem0", string(mem0Blank), "memory 3"},
	} {
		bad := filepath.Join(t.TempDir(), "damaged")
		if err := os.WriteFile(bad, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		before := h.run(t, nil, nil, "export")
		out, err := h.cmd("import", "--from", c.from, bad).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.says) || !strings.Contains(string(out), "invalid_params") {
			t.Errorf("%s: %v %s; want invalid_params saying %q", c.name, err, out, c.says)
		}
		if h.run(t, nil, nil, "export") != before {
			t.Fatalf("%s: a failed import changed the database", c.name)
		}
	}
	// The undamaged renamed files import whole: the damage, not the
	// renaming, was refused.
	for _, c := range []struct{ from, data string }{{"kindling", kindling}, {"mem0", string(mem0New)}} {
		f := filepath.Join(t.TempDir(), c.from+".json")
		os.WriteFile(f, []byte(c.data), 0o644)
		if rep := h.importPeer(t, c.from, f); sum(rep.Imported) == 0 {
			t.Errorf("the renamed %s file imported nothing: %+v", c.from, rep)
		}
	}
}

// Kindling's own export writes a bundle around the store's dataset, and
// the store itself is a SQLite file (kindling.db); cairn imports each as
// it imports the bare dataset: the same records, and any of them after
// another writes nothing. The store file is read where it lies and left
// as it was.
func TestImportKindlingBundle(t *testing.T) {
	dir := peerFiles(t)
	storeFile := filepath.Join(dir, "kindling.db")
	storeBefore, err := os.ReadFile(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	bare := newHookEnv(t)
	rb := bare.importPeer(t, "kindling", filepath.Join(dir, "kindling-export.json"))
	want := bare.run(t, nil, nil, "export")
	for _, file := range []string{"kindling-bundle.json", "kindling.db"} {
		h := newHookEnv(t)
		r := h.importPeer(t, "kindling", filepath.Join(dir, file))
		if sum(r.Imported) != 8 || !equalCounts(r.Imported, rb.Imported) || !equalCounts(r.Mapped, rb.Mapped) {
			t.Fatalf("%s imported %+v (mapped %+v); the dataset %+v (mapped %+v)", file, r.Imported, r.Mapped, rb.Imported, rb.Mapped)
		}
		if got := h.run(t, nil, nil, "export"); got != want {
			t.Fatalf("%s and the dataset import differently:\n%s\n%s", file, got, want)
		}
		again := h.importPeer(t, "kindling", filepath.Join(dir, "kindling-export.json"))
		if sum(again.Imported) != 0 || sum(again.Present) != 8 {
			t.Fatalf("the dataset after %s wrote %+v (present %+v)", file, again.Imported, again.Present)
		}
	}
	if after, _ := os.ReadFile(storeFile); string(after) != string(storeBefore) {
		t.Fatal("importing kindling.db changed it")
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestClaudeCodeAddsAndConnects runs the README's set-up with the client it
// is written for: Claude Code's own CLI adds cairn as an MCP server and
// checks that it connects (claude mcp list starts the server and
// initialises it; no login or network is needed for that).
func TestClaudeCodeAddsAndConnects(t *testing.T) {
	agentsReady(t, "@anthropic-ai/claude-code")
	claude, err := filepath.Abs(filepath.Join("agents", "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHookEnv(t)
	run := func(args ...string) string {
		cmd := exec.Command(claude, args...)
		cmd.Dir = h.repo
		cmd.Env = append(os.Environ(), "HOME="+h.home, "CAIRN_DB="+h.db, "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := run("mcp", "add", "--scope", "user", "cairn", "--", cairnBin, "--db", h.db, "mcp")
	if !strings.Contains(out, "cairn") {
		t.Fatalf("mcp add: %s", out)
	}
	list := run("mcp", "list")
	line := ""
	for _, l := range strings.Split(list, "\n") {
		if strings.HasPrefix(l, "cairn:") {
			line = l
		}
	}
	if !strings.Contains(line, "Connected") {
		t.Fatalf("claude mcp list does not show cairn connected:\n%s", list)
	}
	t.Logf("%s", line)
	get := run("mcp", "get", "cairn")
	if !strings.Contains(get, cairnBin) {
		t.Fatalf("mcp get: %s", get)
	}
	// The hooks cairn installs are in the settings file Claude Code reads.
	h.run(t, nil, nil, "hooks", "install", "claude-code")
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	b, _ := os.ReadFile(filepath.Join(h.home, ".claude", "settings.json"))
	if err := json.Unmarshal(b, &settings); err != nil || len(settings.Hooks["PostToolUse"]) != 1 {
		t.Fatalf("settings after install: %v\n%s", err, b)
	}
	// Claude Code still reads its settings and lists cairn.
	if list := run("mcp", "list"); !strings.Contains(list, "cairn") {
		t.Fatalf("after hooks install: %s", list)
	}
}

// TestGeminiCLIRunsTheHooks runs the real Gemini CLI with cairn's hooks
// installed: it adds cairn as an MCP server and lists it connected, then
// starts a non-interactive session. There is no network or account here,
// so the model call fails, but the CLI runs its hooks before that: the
// session start (cairn opens a capsule and returns the repository's
// context, which lands in the conversation) and the prompt (cairn records
// it, without the context the CLI puts in front of it).
func TestGeminiCLIRunsTheHooks(t *testing.T) {
	agentsReady(t, "@google/gemini-cli")
	gemini, err := filepath.Abs(filepath.Join("agents", "node_modules", ".bin", "gemini"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHookEnv(t)
	env := append(os.Environ(), "HOME="+h.home, "CAIRN_DB="+h.db, "GEMINI_API_KEY=not-a-key-no-network-here",
		"GEMINI_CLI_NO_RELAUNCH=true", "NO_COLOR=1")
	cmd := func(args ...string) *exec.Cmd {
		c := exec.Command(gemini, args...)
		c.Dir, c.Env = h.repo, env
		return c
	}
	run := func(args ...string) string {
		out, err := cmd(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("gemini %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The folder is trusted: Gemini CLI runs no MCP server (and no hook)
	// in an untrusted one.
	os.MkdirAll(filepath.Join(h.home, ".gemini"), 0o755)
	trusted, _ := json.Marshal(map[string]string{h.repo: "TRUST_FOLDER"})
	os.WriteFile(filepath.Join(h.home, ".gemini", "trustedFolders.json"), trusted, 0o644)
	run("mcp", "add", "--scope", "user", "cairn", cairnBin, "--db", h.db, "mcp")
	if list := run("mcp", "list"); !strings.Contains(list, "cairn") || !strings.Contains(list, "Connected") {
		t.Fatalf("gemini mcp list:\n%s", list)
	}
	// Something to remember about this repository.
	var o struct {
		ID string `json:"id"`
	}
	json.Unmarshal([]byte(h.run(t, nil, nil, "--json", "log", "--kind", "message", "--scope", "repo="+h.repo,
		"Decision: the checkout service allows 5s of clock skew")), &o)
	h.run(t, nil, nil, "pin", o.ID, "--reason", "root cause")
	h.run(t, nil, nil, "hooks", "install", "gemini-cli")

	g := cmd("-p", "Why does checkout fail?")
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		g.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { g.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			g.Process.Kill()
			<-done
		}
	}()
	var dump string
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		dump = h.run(t, nil, nil, "export")
		if strings.Contains(dump, `"content":"user: Why does checkout fail?"`) {
			break
		}
		if time.Since(start) > stuck {
			t.Fatalf("Gemini CLI's prompt hook recorded nothing in %v:\n%s", stuck, dump)
		}
	}
	if !strings.Contains(dump, `"agentId":"gemini-cli"`) || !strings.Contains(dump, `"repoId":"`+h.repo+`"`) ||
		!strings.Contains(dump, `"intent":"gemini-cli session in shop (branch fix/checkout)"`) || strings.Contains(dump, "hook_context") {
		t.Fatalf("what the hooks recorded:\n%s", dump)
	}
	// The session-start context reached the conversation: the CLI put it
	// before the prompt, where the prompt hook found the pinned memory's id
	// (and kept it as provenance, not as the prompt).
	if !strings.Contains(dump, `"contextIds":["`+o.ID+`"]`) {
		t.Fatalf("the prompt did not carry the session-start context with the pinned memory %s:\n%s", o.ID, dump)
	}
}

// TestClaudeCodeRunsTheHooks runs a real Claude Code session (claude -p)
// with cairn's hooks installed. There is no network or account here, so
// its model call never answers, but Claude Code runs the hooks around it:
// the session start (cairn opens a capsule; its context lands in the
// session's transcript as the hook's additional context), the prompt, and,
// once the session is stopped, the session end (the capsule closes with a
// summary).
func TestClaudeCodeRunsTheHooks(t *testing.T) {
	agentsReady(t, "@anthropic-ai/claude-code")
	claude, err := filepath.Abs(filepath.Join("agents", "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHookEnv(t)
	var o struct {
		ID string `json:"id"`
	}
	json.Unmarshal([]byte(h.run(t, nil, nil, "--json", "log", "--kind", "message", "--scope", "repo="+h.repo,
		"Decision: the checkout service allows 5s of clock skew")), &o)
	h.run(t, nil, nil, "pin", o.ID, "--reason", "root cause")
	h.run(t, nil, nil, "hooks", "install", "claude-code")

	c := exec.Command(claude, "-p", "Why does checkout fail?")
	c.Dir = h.repo
	c.Env = append(os.Environ(), "HOME="+h.home, "CAIRN_DB="+h.db, "ANTHROPIC_API_KEY=sk-ant-not-a-key-no-network-here",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { c.Wait(); close(exited) }()
	defer func() {
		c.Process.Kill()
		<-exited
	}()
	transcript := func() string {
		var text string
		filepath.WalkDir(filepath.Join(h.home, ".claude", "projects"), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
				b, _ := os.ReadFile(path)
				text += string(b)
			}
			return nil
		})
		return text
	}
	var dump string
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		dump = h.run(t, nil, nil, "export")
		if strings.Contains(dump, `"content":"user: Why does checkout fail?"`) && strings.Contains(transcript(), "hook_additional_context") {
			break
		}
		if time.Since(start) > stuck {
			t.Fatalf("Claude Code's hooks did not run in %v:\n%s", stuck, dump)
		}
	}
	if !strings.Contains(dump, `"agentId":"claude-code"`) || !strings.Contains(dump, `"intent":"claude-code session in shop (branch fix/checkout)"`) {
		t.Fatalf("what the hooks recorded:\n%s", dump)
	}
	if tr := transcript(); !strings.Contains(tr, "the checkout service allows 5s of clock skew") || !strings.Contains(tr, o.ID) {
		t.Fatal("the session-start context with the pinned memory is not in Claude Code's transcript")
	}
	// Stopping the session runs its session-end hook: the capsule closes
	// with a summary.
	c.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(stuck):
		c.Process.Signal(syscall.SIGTERM)
	}
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		dump = h.run(t, nil, nil, "export")
		if strings.Contains(dump, `"status":"closed"`) && strings.Contains(dump, "Asked: Why does checkout fail?") {
			break
		}
		if time.Since(start) > stuck {
			t.Fatalf("no closed capsule with its summary after the session stopped:\n%s", dump)
		}
	}
}
