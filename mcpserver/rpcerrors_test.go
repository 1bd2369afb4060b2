package mcpserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/mcpserver"
)

// goTexts are marks of Go's decoder and type names.
var goTexts = []string{"unmarshal", "json:", "Go value", "Go struct", "jsonrpc2.", "*mcp.", "mcp.CallToolParams", "of type"}

func quotesGo(s string) []string {
	var found []string
	for _, g := range goTexts {
		if strings.Contains(s, g) {
			found = append(found, g)
		}
	}
	return found
}

// Protocol errors (params of the wrong shape, a body that is not JSON-RPC)
// say what is wrong without quoting Go's decoder, on stdio and over HTTP.
func TestProtocolErrorsQuoteNoGo(t *testing.T) {
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	bad := []struct {
		method string
		params any
	}{
		{"tools/call", "zz"},
		{"tools/call", map[string]any{"name": 5}},
		{"tools/list", []int{1}},
		{"ping", 3},
	}

	c := startMCP(t, eng, nil)
	for _, b := range bad {
		line := c.call(b.method, b.params)
		if !strings.Contains(line, `"error"`) || len(quotesGo(line)) > 0 {
			t.Errorf("stdio %s %v: %s", b.method, b.params, line)
		}
	}
	if line := c.call("initialize", map[string]any{"protocolVersion": 5}); len(quotesGo(line)) > 0 {
		t.Errorf("stdio initialize: %s", line)
	}

	srv, err := mcpserver.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mcpserver.HTTPHandler(srv, nil))
	defer hs.Close()
	post := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, body := range []string{`{{{`, `"x"`, `[1,2]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"zz"}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":5}}`} {
		code, got := post(body)
		if len(quotesGo(got)) > 0 || (code == 200 && !strings.Contains(got, `"error"`)) {
			t.Errorf("HTTP %s: %d %s", body, code, got)
		}
	}
	// A good call still answers in full.
	if code, got := post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"status","arguments":{}}}`); code != 200 || !strings.Contains(got, `"result"`) {
		t.Errorf("status over HTTP: %d %s", code, got)
	}
}
