package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// cli runs the command line against db and returns stdout, stderr and the
// exit code.
func cli(t *testing.T, db, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errw bytes.Buffer
	full := append([]string{"--db", db, "--now", "2026-03-04T10:00:00Z"}, args...)
	code := run(context.Background(), full, strings.NewReader(stdin), &out, &errw)
	return out.String(), errw.String(), code
}

func mustCLI(t *testing.T, db string, args ...string) string {
	t.Helper()
	out, errs, code := cli(t, db, "", args...)
	if code != 0 {
		t.Fatalf("cairn %v: exit %d: %s", args, code, errs)
	}
	return out
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return v
}

func TestRecordAndRetrieve(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	c := decode[memory.Capsule](t, mustCLI(t, db, "capsule", "open", "--json", "--scope", "session=s1,repo=/src/shop", "--intent", "fix checkout"))
	if c.Status != memory.CapsuleOpen || c.Scope.RepoID != "/src/shop" {
		t.Fatalf("opened %+v", c)
	}
	o := decode[memory.Observation](t, mustCLI(t, db, "log", "--json", "--kind", "error", "--scope", "session=s1",
		"--provenance", `{"tool":"go test"}`, "TestCheckout", "failed:", "session", "expired"))
	if o.Content != "TestCheckout failed: session expired" || o.Kind != memory.KindError || o.Scope.RepoID != "/src/shop" {
		t.Fatalf("logged %+v", o)
	}
	out, errs, code := cli(t, db, "the fix: accept 5s of clock skew\n", "log", "--json", "--kind", "file_diff", "--scope", "session=s1", "-")
	if code != 0 {
		t.Fatal(errs)
	}
	diff := decode[memory.Observation](t, out)
	if diff.Content != "the fix: accept 5s of clock skew" {
		t.Fatalf("stdin content %q", diff.Content)
	}
	mustCLI(t, db, "capsule", "summarize", c.ID, "--confidence", "0.6", "Checkout fails with session expired; clock skew suspected.")
	p := decode[memory.Pin](t, mustCLI(t, db, "pin", "--json", o.ID, "--reason", "the failing test", "--ttl", "7d"))
	if p.ExpiresAt == nil || *p.ExpiresAt != 1772618400000+7*24*3600*1000 || p.Scope.SessionID != "s1" {
		t.Fatalf("pin %+v", p)
	}
	res := decode[cairn.RetrieveResult](t, mustCLI(t, db, "retrieve", "--json", "--scope", "session=s1", "why", "does", "checkout", "fail", "with", "clock", "skew?"))
	if len(res.Pins) != 1 || res.CurrentSummary == nil || res.CurrentSummary.Confidence != 0.6 || len(res.Candidates) == 0 {
		t.Fatalf("retrieve: %+v", res)
	}
	for _, cand := range res.Candidates {
		if cand.Entity.ID() == o.ID {
			t.Fatal("a pinned observation is also a candidate")
		}
	}
	human := mustCLI(t, db, "retrieve", "--scope", "session=s1", "--explain", "clock skew")
	for _, want := range []string{"PINS", "CURRENT SUMMARY", "CANDIDATES", "reason: the failing test", diff.ID, "lexical", "semantic", "recency"} {
		if !strings.Contains(human, want) {
			t.Errorf("human output lacks %q:\n%s", want, human)
		}
	}
	closed := decode[cairn.CloseCapsuleResult](t, mustCLI(t, db, "capsule", "close", "--json", c.ID, "--summary", "Fixed by allowing clock skew.", "--evidence", diff.ID))
	if closed.Capsule.Status != memory.CapsuleClosed || len(closed.Capsule.ObservationIDs) != 2 || closed.Summary.Content != "Fixed by allowing clock skew." {
		t.Fatalf("closed %+v", closed)
	}
	if out := mustCLI(t, db, "forget", o.ID); !strings.Contains(out, "forgot "+o.ID) {
		t.Fatalf("forget: %s", out)
	}
	shown := decode[memory.Observation](t, mustCLI(t, db, "show", "--json", o.ID))
	if !shown.Redacted || shown.Content != memory.RedactedContent {
		t.Fatalf("after forget: %+v", shown)
	}
	mustCLI(t, db, "unpin", p.ID)
	status := decode[cairn.Status](t, mustCLI(t, db, "status", "--json"))
	st := status.Database
	if st.Observations != 2 || st.Redacted != 1 || st.Pins != 0 || st.Summaries != 1 || st.Capsules != 1 || status.Version != cairn.Version || len(status.Tools) < 10 {
		t.Fatalf("status %+v", status)
	}
}

func TestExitCodesAndErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	mustCLI(t, db, "capsule", "open", "--scope", "session=s1", "--id", "cap1")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"retrieve", "--scope", "team=a", "x"}, 2, `unknown scope key "team"`},
		{[]string{"retrieve", "   "}, 2, "query is empty"},
		{[]string{"retrieve", "--token-budget", "-4", "x"}, 2, "tokenBudget -4"},
		{[]string{"retrieve", "--syntax", "fts", "C++"}, 2, "malformed FTS query"},
		{[]string{"retrieve"}, 2, "requires at least 1 arg"},
		{[]string{"retrieve", "--bogus", "x"}, 2, "unknown flag"},
		{[]string{"log", "--kind", "thought", "x"}, 2, "unknown observation kind"},
		{[]string{"log", "--provenance", "[1]", "x"}, 2, "provenance must be a JSON object"},
		{[]string{"pin", "obs_missing"}, 3, "no observation or summary"},
		{[]string{"pin", "--ttl", "soon", "x"}, 2, "--ttl"},
		{[]string{"capsule", "open", "--scope", "session=s1"}, 4, "already has an open capsule"},
		{[]string{"capsule", "close", "nope"}, 3, "not found"},
		{[]string{"--now", "yesterday", "stats"}, 2, "--now"},
		{[]string{"import", "/no/such/file.jsonl"}, 2, "cannot open"},
		{[]string{"frobnicate"}, 2, "unknown command"},
	} {
		_, errs, code := cli(t, db, "", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) || !strings.HasPrefix(errs, "cairn: ") {
			t.Errorf("cairn %v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
	_, errs, code := cli(t, db, "", "--json", "capsule", "close", "nope")
	e := decode[map[string]map[string]string](t, errs)
	if code != 3 || e["error"]["code"] != "not_found" || e["error"]["message"] == "" {
		t.Fatalf("--json error: %q exit %d", errs, code)
	}
}

func TestContentCapFromEnvironment(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	t.Setenv("CAIRN_MAX_CONTENT_BYTES", "10")
	_, errs, code := cli(t, db, "", "log", "twelve bytes")
	if code != 2 || !strings.Contains(errs, "over the 10-byte limit") {
		t.Fatalf("exit %d %s", code, errs)
	}
	mustCLI(t, db, "log", "ten bytes!")
	t.Setenv("CAIRN_MAX_CONTENT_BYTES", "lots")
	if _, errs, code := cli(t, db, "", "stats"); code != 2 || !strings.Contains(errs, "CAIRN_MAX_CONTENT_BYTES") {
		t.Fatalf("bad setting: exit %d %s", code, errs)
	}
}

func TestImportExportFiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	lines := `{"kind":"message","content":"first memory","scopeIds":{"repoId":"r"}}
{"kind":"command","content":"make test","scopeIds":{"repoId":"r"},"ts":1700000000000}
`
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(lines), 0o600)
	out := mustCLI(t, src, "import", in)
	if !strings.Contains(out, "imported 2 observations") {
		t.Fatalf("import: %s", out)
	}
	dump := filepath.Join(dir, "dump.jsonl")
	mustCLI(t, src, "export", "--output", dump)
	dst := filepath.Join(dir, "dst.db")
	mustCLI(t, dst, "import", dump)
	a := mustCLI(t, src, "export")
	b := mustCLI(t, dst, "export")
	if a != b || strings.Count(a, "\n") != 2 {
		t.Fatalf("round trip differs:\n%s\n%s", a, b)
	}
	// The parity dataset format, with its deliberately dangling pin.
	rep := decode[[]cairn.ImportReport](t, mustCLI(t, filepath.Join(dir, "parity.db"), "import", "--json", "../../testdata/kindling-parity/dataset.json"))
	if rep[0].Format != cairn.FormatParity || rep[0].Observations != 2080 || len(rep[0].Skipped) != 1 {
		t.Fatalf("parity import %+v", rep)
	}
	// A bad file changes nothing.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(lines+`{"kind":"message"}`+"\n"), 0o600)
	_, errs, code := cli(t, src, "", "import", bad)
	if code != 2 || !strings.Contains(errs, "line 3") {
		t.Fatalf("bad import: exit %d %s", code, errs)
	}
	if after := mustCLI(t, src, "export"); after != a {
		t.Fatal("a failed import changed the database")
	}
}

func TestImportExportKnowledgeFiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	mustCLI(t, src, "think", "--origin", "human", "--tag", "auth", "Clock skew breaks session checks; allow 5s.")
	mustCLI(t, src, "think", "--tag", "ops", "--private", "The staging password rotates on Mondays.")
	mustCLI(t, src, "kg", "entity", "create", "auth-service", "--type", "service", "--data", `{"team":"identity"}`)
	mustCLI(t, src, "kg", "entity", "create", "ntp", "--type", "daemon")
	mustCLI(t, src, "kg", "observe", "auth-service", "tokens expire when clocks drift by more than 5s")
	mustCLI(t, src, "kg", "edge", "create", "auth-service", "depends_on", "ntp")
	dump := filepath.Join(dir, "dump.jsonl")
	mustCLI(t, src, "export", "--output", dump)
	dst := filepath.Join(dir, "dst.db")
	out := mustCLI(t, dst, "import", dump)
	if !strings.Contains(out, "2 thoughts, 2 entities, 1 entity observations, 1 edges") {
		t.Fatalf("import: %s", out)
	}
	a := mustCLI(t, src, "export")
	if b := mustCLI(t, dst, "export"); a != b || strings.Count(a, "\n") != 6 {
		t.Fatalf("round trip differs:\n%s\n%s", a, b)
	}
	// An edge to a missing entity fails the file, naming its line.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"thought":{"id":"th_x","content":"x","origin":"model","tags":[],"is_private":false,"status":"active","significance":0.5,"is_summary":false,"summary_of":[],"created_at":1,"scopeIds":{}}}
{"kg_edge":{"id":"edge_x","source":"ent_ghost","target":"ent_ghost","relation":"is","data":{},"created_at":1,"scopeIds":{}}}
`), 0o600)
	if _, errs, code := cli(t, dst, "", "import", bad); code == 0 || !strings.Contains(errs, "line 2") || !strings.Contains(errs, "not_found") {
		t.Fatalf("bad import: exit %d %s", code, errs)
	}
	if after := mustCLI(t, dst, "export"); after != a {
		t.Fatal("a failed import changed the database")
	}
}

func TestDemo(t *testing.T) {
	db := filepath.Join(t.TempDir(), "untouched.db")
	out := mustCLI(t, db, "demo")
	for _, want := range []string{"demo database: 26 observations", "obs_s1_00", "CURRENT SUMMARY", "pin_idempotency", "token budget 300 (cut)"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatal("demo touched the --db database")
	}
	res := decode[[]cairn.RetrieveResult](t, mustCLI(t, db, "demo", "--json", "idempotent", "webhook"))
	if len(res) != 1 || len(res[0].Candidates) == 0 {
		t.Fatalf("demo with a query: %+v", res)
	}
}

func TestHelpEverywhere(t *testing.T) {
	root := newRootCmd(&app{})
	paths := [][]string{{}}
	for _, c := range root.Commands() {
		paths = append(paths, []string{c.Name()})
		for _, sub := range c.Commands() {
			paths = append(paths, []string{c.Name(), sub.Name()})
		}
	}
	for _, p := range paths {
		out, errs, code := cli(t, filepath.Join(t.TempDir(), "x.db"), "", append(p, "--help")...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("cairn %v --help: exit %d %s", p, code, errs)
		}
	}
	out, _, code := cli(t, "x", "", "completion", "bash")
	if code != 0 || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: exit %d", code)
	}
}

func TestCallAndTools(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	o := decode[memory.Observation](t, mustCLI(t, db, "call", "log", `{"kind":"message","content":"called through call","scopeIds":{"repoId":"r"}}`))
	if o.Content != "called through call" || o.Scope.RepoID != "r" {
		t.Fatalf("call log: %+v", o)
	}
	out, errs, code := cli(t, db, `{"query":"called"}`, "call", "retrieve", "-")
	if code != 0 {
		t.Fatal(errs)
	}
	res := decode[cairn.RetrieveResult](t, out)
	if len(res.Candidates) != 1 || res.Candidates[0].Entity.ID() != o.ID {
		t.Fatalf("call retrieve: %+v", res)
	}
	// The friendly command and the tool give the same JSON.
	friendly := mustCLI(t, db, "show", "--json", o.ID)
	viaTool := mustCLI(t, db, "call", "observation_get", fmt.Sprintf(`{"observationId":%q}`, o.ID))
	if friendly != viaTool {
		t.Fatalf("show --json and call observation_get differ:\n%s\n%s", friendly, viaTool)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"call", "no_such_tool"}, 3, "unknown tool"},
		{[]string{"call", "retrieve", `{"query":`}, 2, "truncated JSON"},
		{[]string{"call", "retrieve", `{"query":"x","bogus":1}`}, 2, "unknown field"},
	} {
		if _, errs, code := cli(t, db, "", tc.args...); code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("cairn %v: exit %d %s", tc.args, code, errs)
		}
	}
	list := mustCLI(t, db, "tools")
	for _, tool := range cairn.ToolNames() {
		if !strings.Contains(list, tool) {
			t.Errorf("tools lacks %s", tool)
		}
	}
	described := decode[[]map[string]any](t, mustCLI(t, db, "tools", "--json"))
	if len(described) != len(cairn.Tools()) || described[0]["inputSchema"] == nil || described[0]["outputSchema"] == nil {
		t.Fatalf("tools --json: %v", described[0])
	}
}

func TestDoctor(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	mustCLI(t, db, "log", "something")
	out := mustCLI(t, db, "doctor")
	if strings.Contains(out, "FAIL") || !strings.Contains(out, "observation index") {
		t.Fatalf("healthy doctor: %s", out)
	}
	os.Chmod(db, 0o644)
	out, _, code := cli(t, db, "", "doctor")
	if code != 1 || !strings.Contains(out, "FAIL  file") || !strings.Contains(out, "chmod 600") {
		t.Fatalf("world-readable database: exit %d\n%s", code, out)
	}
	rep := decode[cairn.DoctorReport](t, func() string { out, _, _ := cli(t, db, "", "doctor", "--json"); return out }())
	if rep.OK {
		t.Fatal("doctor --json says ok for a world-readable database")
	}
}

// Records left without vectors (a process killed before embedding them)
// are a warning with the fix: doctor exits 0; --fix embeds them.
func TestDoctorWarnsOfPendingRecords(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	eng, err := cairn.Open(db, &cairn.Options{SkipEmbedOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Log(context.Background(), cairn.LogRequest{Kind: memory.KindMessage, Content: "left without a vector"}); err != nil {
		t.Fatal(err)
	}
	eng.Close()
	out, errs, code := cli(t, db, "", "doctor")
	if code != 0 || strings.Contains(out, "FAIL") || !strings.Contains(out, "WARN  vectors") || !strings.Contains(out, "1 pending") ||
		!strings.Contains(out, "cairn reembed") || !strings.Contains(out, "cairn serve or cairn mcp") {
		t.Fatalf("doctor with a pending record: exit %d\n%s%s", code, out, errs)
	}
	rep := decode[cairn.DoctorReport](t, mustCLI(t, db, "doctor", "--json"))
	if !rep.OK {
		t.Fatalf("doctor --json is not ok for a pending record: %+v", rep.Findings)
	}
	out = mustCLI(t, db, "doctor", "--fix")
	if strings.Contains(out, "WARN") || !strings.Contains(out, "repaired: embedded 1 pending records") {
		t.Fatalf("doctor --fix:\n%s", out)
	}
	// A real failure still fails, with the warning beside it.
	eng, err = cairn.Open(db, &cairn.Options{SkipEmbedOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Log(context.Background(), cairn.LogRequest{Kind: memory.KindMessage, Content: "another"}); err != nil {
		t.Fatal(err)
	}
	eng.Close()
	os.Chmod(db, 0o644)
	if out, _, code := cli(t, db, "", "doctor"); code != 1 || !strings.Contains(out, "FAIL  file") || !strings.Contains(out, "WARN  vectors") {
		t.Fatalf("world-readable database with a pending record: exit %d\n%s", code, out)
	}
}

func TestServeRefusesTheNetworkWithoutAToken(t *testing.T) {
	t.Setenv("CAIRN_TOKEN", "")
	db := filepath.Join(t.TempDir(), "cairn.db")
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:4747"} {
		_, errs, code := cli(t, db, "", "serve", "--addr", addr)
		if code != 2 || !strings.Contains(errs, "CAIRN_TOKEN") {
			t.Errorf("serve --addr %s: exit %d %s", addr, code, errs)
		}
	}
	if _, errs, code := cli(t, db, "", "serve", "--addr", "nonsense"); code != 2 || !strings.Contains(errs, "host:port") {
		t.Errorf("bad addr: exit %d %s", code, errs)
	}
}

func TestMCPOverStdio(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"log","arguments":{"kind":"message","content":"over stdio"}}}`,
		`garbage`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"status","arguments":{}}}`,
	}, "\n") + "\n"
	t.Setenv("MCP_NO_LOG", "1")
	out, errs, code := cli(t, db, in, "mcp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{`"id":1`, `"over stdio"`, `"code":-32700`, `"id":3`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %s:\n%s", want, out)
		}
	}
	if errs != "" {
		t.Errorf("MCP_NO_LOG=1 but stderr has %q", errs)
	}
}

// A token that guards nothing is refused: blank or with white space
// anywhere, and off loopback anything under 128 bits.
func TestServeRefusesWeakTokens(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	for _, tc := range []struct {
		token, addr string
	}{
		{"a", "0.0.0.0:0"},
		{" ", "0.0.0.0:0"},
		{" ", "127.0.0.1:0"},
		{"0123456789abcdef0123456789abcde", "0.0.0.0:0"}, // 31 hex characters: 124 bits
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "0.0.0.0:0"},
	} {
		t.Setenv("CAIRN_TOKEN", tc.token)
		_, errs, code := cli(t, db, "", "serve", "--addr", tc.addr)
		if code != 2 || !strings.Contains(errs, "CAIRN_TOKEN") {
			t.Errorf("token %q at %s: exit %d %s", tc.token, tc.addr, code, errs)
		}
	}
	for _, tok := range []string{"Zm9vYmFyYmF6cXV4cXV1eA", "0123456789abcdef0123456789abcdef"} {
		if err := checkToken(tok, false); err != nil {
			t.Errorf("checkToken(%q) = %v, want accepted (128 bits or more)", tok, err)
		}
	}
	if err := checkToken("short", true); err != nil {
		t.Errorf("a short token on loopback: %v, want accepted", err)
	}
}
