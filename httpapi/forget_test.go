package httpapi_test

import (
	"encoding/json"
	"net/url"
	"regexp"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/forgettest"
)

var routeParam = regexp.MustCompile(`\{(\w+)\}`)

// route renders a tool's call as its HTTP route: path parameters from the
// arguments, the rest as the body.
func route(t *testing.T, name string, args map[string]any) (method, path, body string) {
	t.Helper()
	tool, ok := cairn.ToolByName(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	rest := map[string]any{}
	for k, v := range args {
		rest[k] = v
	}
	path = routeParam.ReplaceAllStringFunc(tool.Path, func(m string) string {
		k := m[1 : len(m)-1]
		v, _ := rest[k].(string)
		delete(rest, k)
		return url.PathEscape(v)
	})
	if len(rest) > 0 {
		b, _ := json.Marshal(rest)
		body = string(b)
	}
	return tool.Method, path, body
}

// TestForgetEveryKind forgets or deletes a record of every kind through
// the HTTP routes: 200 with the redacted record (or the id deleted), the
// same answer again (a delete: 404), 404 for unknown ids and 400 for
// malformed ones.
func TestForgetEveryKind(t *testing.T) {
	srv, eng := newServer(t, nil)
	recs := forgettest.Seed(t, eng, t.TempDir())
	for _, c := range forgettest.Calls(recs) {
		m, p, b := route(t, c.Tool, c.Args)
		first := do(t, srv, m, p, b)
		if first.status != 200 {
			t.Fatalf("%s %s: %d %s", m, p, first.status, first.body)
		}
		forgettest.CheckResult(t, c, first.body)
		second := do(t, srv, m, p, b)
		switch {
		case c.Redacts && (second.status != 200 || string(second.body) != string(first.body)):
			t.Errorf("%s %s again: %d %s; want the same answer", m, p, second.status, second.body)
		case !c.Redacts && (second.status != 404 || second.code() != "not_found"):
			t.Errorf("%s %s again: %d %s; want 404 not_found", m, p, second.status, second.body)
		}
		m, p, b = route(t, c.Tool, c.Unknown)
		if r := do(t, srv, m, p, b); r.status != 404 || r.code() != "not_found" {
			t.Errorf("%s %s (unknown): %d %s; want 404 not_found", m, p, r.status, r.body)
		}
		m, p, b = route(t, c.Tool, c.Bad)
		if r := do(t, srv, m, p, b); r.status != 400 || r.code() != "invalid_params" {
			t.Errorf("%s %s (malformed): %d %s; want 400 invalid_params", m, p, r.status, r.body)
		}
		m, p, b = route(t, "record_history", map[string]any{"id": c.ID})
		hist := do(t, srv, m, p, b)
		if m != "GET" || hist.status != 200 {
			t.Fatalf("%s %s: %d %s", m, p, hist.status, hist.body)
		}
		forgettest.CheckHistory(t, c, hist.body)
	}
	for _, tc := range []struct {
		id     string
		status int
		code   string
	}{{"obs_unknown", 404, "not_found"}, {" obs_1", 400, "invalid_params"}} {
		m, p, b := route(t, "record_history", map[string]any{"id": tc.id})
		if r := do(t, srv, m, p, b); r.status != tc.status || r.code() != tc.code {
			t.Errorf("%s %s: %d %s; want %d %s", m, p, r.status, r.body, tc.status, tc.code)
		}
	}
	// Paging: a page of one entry names the next.
	m, p, _ := route(t, "record_history", map[string]any{"id": recs.Thought})
	page := do(t, srv, m, p+"?limit=1", "")
	var h cairn.RecordHistory
	if err := json.Unmarshal(page.body, &h); err != nil || page.status != 200 || len(h.Entries) != 1 || h.NextAfter != h.Entries[0].Seq {
		t.Fatalf("GET %s?limit=1: %d %s", p, page.status, page.body)
	}
	forgettest.CheckGone(t, eng, recs)
}
