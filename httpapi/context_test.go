package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/memory"
)

// contextFixture writes, over HTTP, a closed session s0 with its summary,
// an open session s1 with a command and a diff, a pin on the command, and
// an observation of another repository.
type contextFixture struct {
	c0, c1 memory.Capsule
	s0     memory.Summary
	o1, o2 memory.Observation
	other  memory.Observation
}

func newContextFixture(t *testing.T, srv *httptest.Server) contextFixture {
	t.Helper()
	var f contextFixture
	post := func(path, body string, want int, v any) {
		t.Helper()
		r := do(t, srv, "POST", path, body)
		if r.status != want {
			t.Fatalf("POST %s %s: %d %s", path, body, r.status, r.body)
		}
		if v != nil {
			r.decode(t, v)
		}
	}
	post("/v1/capsules", `{"scopeIds":{"sessionId":"s0","repoId":"/src/shop"},"intent":"first try at checkout"}`, 201, &f.c0)
	post("/v1/observations", `{"kind":"error","content":"checkout returns 401 right after login","scopeIds":{"sessionId":"s0"}}`, 201, nil)
	var closed struct {
		Capsule memory.Capsule  `json:"capsule"`
		Summary *memory.Summary `json:"summary"`
	}
	post("/v1/capsules/"+f.c0.ID+"/close", `{"summary":{"content":"The session check rejects tokens issued by a clock that runs ahead."}}`, 200, &closed)
	f.s0 = *closed.Summary
	post("/v1/capsules", `{"scopeIds":{"sessionId":"s1","repoId":"/src/shop"},"intent":"fix checkout"}`, 201, &f.c1)
	post("/v1/observations", `{"kind":"command","content":"$ go test ./checkout/...\n--- FAIL: TestCheckoutAfterLogin\n[exit 1]","scopeIds":{"sessionId":"s1"}}`, 201, &f.o1)
	post("/v1/observations", `{"kind":"file_diff","content":"auth/session.go: allow 5s of clock skew","scopeIds":{"sessionId":"s1"}}`, 201, &f.o2)
	post("/v1/pins", fmt.Sprintf(`{"targetId":%q,"reason":"root cause"}`, f.o1.ID), 201, nil)
	post("/v1/observations", `{"kind":"message","content":"checkout in the other shop works","scopeIds":{"repoId":"/src/other"}}`, 201, &f.other)
	return f
}

// POST /v1/context/pre-compact writes the running summary of the
// session's open capsule: cairn's extractive one, or the agent's own,
// under one id.
func TestContextPreCompactRoute(t *testing.T) {
	srv, _ := newServer(t, nil)
	f := newContextFixture(t, srv)
	var s memory.Summary
	r := do(t, srv, "POST", "/v1/context/pre-compact", `{"scopeIds":{"sessionId":"s1"}}`)
	if r.status != 200 {
		t.Fatalf("pre-compact: %d %s", r.status, r.body)
	}
	r.decode(t, &s)
	if s.CapsuleID != f.c1.ID || s.Confidence != 0.5 || !slices.Equal(s.EvidenceRefs, []string{f.o1.ID, f.o2.ID}) ||
		!strings.HasPrefix(s.Content, "fix checkout: 0 prompts, 2 tool calls (1 commands, 0 errors), 0 files changed.") || s.Scope.RepoID != "/src/shop" {
		t.Fatalf("extractive summary %+v", s)
	}
	var c memory.Capsule
	do(t, srv, "GET", "/v1/capsules/"+f.c1.ID, "").decode(t, &c)
	if c.SummaryID != s.ID || c.Status != memory.CapsuleOpen {
		t.Fatalf("the capsule after pre-compact: %+v", c)
	}
	own := "Checkout fails after login: the session check has no clock skew allowance."
	var s2 memory.Summary
	r = do(t, srv, "POST", "/v1/context/pre-compact", fmt.Sprintf(`{"scopeIds":{"sessionId":"s1"},"summary":%q}`, own))
	if r.status != 200 {
		t.Fatalf("pre-compact with a summary: %d %s", r.status, r.body)
	}
	r.decode(t, &s2)
	if s2.ID != s.ID || s2.Content != own || s2.Confidence != 1 {
		t.Fatalf("the agent's own summary %+v; want id %s, its text, confidence 1", s2, s.ID)
	}
}

// POST /v1/context/session-start renders the repository's context: its
// sections in order, each record with its id, within the budget, the same
// JSON as the tool, and writes nothing.
func TestContextSessionStartRoute(t *testing.T) {
	srv, eng := newServer(t, nil)
	f := newContextFixture(t, srv)
	if r := do(t, srv, "POST", "/v1/context/pre-compact", `{"scopeIds":{"sessionId":"s1"},"summary":"Checkout fails after login: no clock skew allowance."}`); r.status != 200 {
		t.Fatalf("pre-compact: %d %s", r.status, r.body)
	}
	before := export(t, eng)
	body := `{"scopeIds":{"repoId":"/src/shop","sessionId":"s1"},"branch":"fix/checkout"}`
	r := do(t, srv, "POST", "/v1/context/session-start", body)
	if r.status != 200 {
		t.Fatalf("session-start: %d %s", r.status, r.body)
	}
	var c capture.Context
	r.decode(t, &c)
	md := c.Markdown
	if !strings.HasPrefix(md, "# cairn: memory of /src/shop (branch fix/checkout)\n") {
		t.Fatalf("header: %s", md)
	}
	pinned, open, last := strings.Index(md, "\n## Pinned\n"), strings.Index(md, "\n## Open session\n"), strings.Index(md, "\n## Last session\n")
	if pinned < 0 || open < pinned || last < open {
		t.Fatalf("sections out of order or missing (pinned %d, open %d, last %d):\n%s", pinned, open, last, md)
	}
	section := map[string]string{}
	for _, it := range c.Items {
		section[it.ID] = it.Section
		if !strings.Contains(md, "`"+it.ID+"`") {
			t.Errorf("item %s is not shown by id", it.ID)
		}
	}
	for id, want := range map[string]string{f.o1.ID: "Pinned", f.c1.ID: "Open session", f.c0.ID: "Last session", f.s0.ID: "Last session"} {
		if section[id] != want {
			t.Errorf("%s in section %q; want %q (items %+v)", id, section[id], want, c.Items)
		}
	}
	if _, ok := section[f.other.ID]; ok || strings.Contains(md, "other shop") {
		t.Errorf("another repository's record is in the context:\n%s", md)
	}
	if c.Items[0].ID != f.o1.ID || c.Items[0].Type != "observation" {
		t.Errorf("the pin is not first: %+v", c.Items[0])
	}
	if c.Tokens != content.EstimateTokens(md) || c.Tokens > capture.DefaultContextTokens || c.Omitted != 0 {
		t.Errorf("tokens %d (text %d), omitted %d", c.Tokens, content.EstimateTokens(md), c.Omitted)
	}
	want, err := eng.CallJSON(ctx, "context_session_start", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(want)
	if strings.TrimSpace(string(r.body)) != string(wb) {
		t.Errorf("the route's answer differs from the tool's:\n got  %s\n want %s", r.body, wb)
	}
	if again := do(t, srv, "POST", "/v1/context/session-start", body); string(again.body) != string(r.body) {
		t.Errorf("the same data gave another context:\n%s\n%s", r.body, again.body)
	}

	// A small budget: the text fits it, what does not fit is counted.
	r = do(t, srv, "POST", "/v1/context/session-start", `{"scopeIds":{"repoId":"/src/shop","sessionId":"s1"},"branch":"fix/checkout","tokenBudget":100}`)
	var small capture.Context
	r.decode(t, &small)
	if r.status != 200 || small.Tokens > 100 || small.Tokens != content.EstimateTokens(small.Markdown) || small.Omitted == 0 || len(small.Items) >= len(c.Items) {
		t.Fatalf("budget 100: %d, %d tokens, %d omitted, %d items (of %d)", r.status, small.Tokens, small.Omitted, len(small.Items), len(c.Items))
	}
	for _, it := range small.Items {
		if section[it.ID] != it.Section {
			t.Errorf("budget 100 shows %+v, which the full context shows in %q", it, section[it.ID])
		}
	}
	if export(t, eng) != before {
		t.Fatal("session-start changed the database")
	}
}

// Bad requests to the context routes are typed errors that change
// nothing and say nothing of cairn's insides.
func TestContextRoutesRefuseBadInput(t *testing.T) {
	srv, eng := newServer(t, nil)
	newContextFixture(t, srv)
	before := export(t, eng)
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/context/session-start", `{"scopeIds":{"sessionId":"s1"}}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `{}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `{"scopeIds":{"repoId":" padded "}}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `{"scopeIds":{"repoId":"/src/shop","team":"a"}}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `{"scopeIds":{"repoId":"/src/shop"},"tokenBudget":99}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `{"scopeIds":{"repoId":"/src/shop"},"tokenBudget":32001}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `{"scopeIds":{"repoId":"/src/shop"},"tokenBudget":"big"}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `{"scopeIds":{"repoId":"/src/shop"},"branch":"` + strings.Repeat("b", 257) + `"}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `{"scopeIds":{"repoId":"/src/shop"},"branch":"a\u0000b"}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `{"scopeIds":{"repoId":"/src/shop"},"budget":5}`, 400, "invalid_params"},
		{"POST", "/v1/context/session-start", `not json`, 400, "invalid_params"},
		{"GET", "/v1/context/session-start", ``, 404, "not_found"},
		{"POST", "/v1/context/pre-compact", `{}`, 400, "invalid_params"},
		{"POST", "/v1/context/pre-compact", `{"scopeIds":{"repoId":"/src/shop"}}`, 400, "invalid_params"},
		{"POST", "/v1/context/pre-compact", `{"scopeIds":{"sessionId":"s1","team":"a"}}`, 400, "invalid_params"},
		{"POST", "/v1/context/pre-compact", `{"scopeIds":{"sessionId":"s1"},"summary":42}`, 400, "invalid_params"},
		{"POST", "/v1/context/pre-compact", `{"scopeIds":{"sessionId":"s1"},"summary":"a\u0000b"}`, 400, "invalid_params"},
		{"POST", "/v1/context/pre-compact", `{"scopeIds":{"sessionId":"s1"},"summary":"` + strings.Repeat("x", 1<<20+1) + `"}`, 400, "invalid_params"},
		{"POST", "/v1/context/pre-compact", `{"scopeIds":{"sessionId":"nobody"}}`, 404, "not_found"},
		{"POST", "/v1/context/pre-compact", `{"scopeIds":{"sessionId":"s0"}}`, 404, "not_found"}, // closed: no open capsule
		{"POST", "/v1/context/pre-compact", `{"scopeIds":{"sessionId":"s1"}} {"again":1}`, 400, "invalid_params"},
	} {
		r := do(t, srv, tc.method, tc.path, tc.body)
		if r.status != tc.status || r.code() != tc.code {
			t.Errorf("%s %s %.80s: %d %.300s; want %d %s", tc.method, tc.path, tc.body, r.status, r.body, tc.status, tc.code)
		}
		if low := strings.ToLower(string(r.body)); strings.Contains(low, "sql") || strings.Contains(low, "goroutine") || strings.Contains(low, ".go:") {
			t.Errorf("%s %s: error leaks internals: %.300s", tc.method, tc.path, r.body)
		}
	}
	if export(t, eng) != before {
		t.Fatal("refused context requests changed the database")
	}
}
