package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/mcpserver"
)

// The stdio guard answers every kind of bad line, including one over the
// size limit, and the session goes on.
func TestGuardedTransportKeepsServing(t *testing.T) {
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := mcpserver.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Run(ctx, mcpserver.GuardedTransport(inR, outW, 64<<10))
	lines := bufio.NewReader(outR)
	send := func(line string) map[string]any {
		t.Helper()
		go io.WriteString(inW, line+"\n")
		done := make(chan string, 1)
		go func() { l, _ := lines.ReadString('\n'); done <- l }()
		select {
		case l := <-done:
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("answer to %.60q is not JSON: %q", line, l)
			}
			return m
		case <-time.After(2 * time.Minute): // a safety net, not a measurement
			t.Fatalf("no answer to %.60q", line)
		}
		return nil
	}
	errCode := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	if m := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	for _, tc := range []struct {
		line string
		code float64
	}{
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"log","arguments":{"kind":"message","content":"` + strings.Repeat("x", 100<<10) + `"}}}`, -32600},
		{`{{{`, -32700},
		{`"just a string"`, -32600},
		{`{"jsonrpc":"1.0","id":3,"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":4}`, -32600},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":5,"method":""}`, -32600},
		// Nesting the SDK's decoder would refuse by ending the session:
		// deep arguments, a deep batch, and deeper than any JSON parser
		// here accepts.
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"log","arguments":{"kind":"message","content":"deep","provenance":` + nested(2000) + `}}}`, -32602},
		{`[{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"log","arguments":{"kind":"message","content":"deep","scopeIds":` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + `}}}]`, -32602},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"log","arguments":{"kind":"message","content":"deep","scopeIds":` + strings.Repeat("[", 12000) + strings.Repeat("]", 12000) + `}}}`, -32602},
	} {
		if m := send(tc.line); errCode(m) != tc.code {
			t.Errorf("%.60q: answer %v; want error %v", tc.line, m, tc.code)
		}
	}
	m := send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"status","arguments":{}}}`)
	if res, _ := m["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Fatalf("after bad lines, a good call: %v", m)
	}
	// Below the message's limit but over a record's: a tool error.
	m = send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"log","arguments":{"kind":"message","content":"deep","provenance":` + nested(100) + `}}}`)
	if res, _ := m["result"].(map[string]any); res == nil || res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "invalid_params") {
		t.Fatalf("provenance 100 levels deep: %v", m)
	}
	st, _ := eng.Stats(ctx)
	if st.Observations != 0 {
		t.Fatal("an oversized or too deeply nested line was written")
	}
}

// nested is a JSON object n levels deep.
func nested(n int) string {
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// Over HTTP, /mcp answers a body nesting deeper than the limit with a
// JSON-RPC invalid-params error (HTTP 400) and writes nothing; a body over
// the size limit gets 413; a normal call still works.
func TestHTTPDeepAndOversizedBodies(t *testing.T) {
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := mcpserver.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcpserver.HTTPHandler(srv, &mcpserver.Options{MaxRequestBytes: 1 << 20}))
	defer ts.Close()
	post := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	call := func(id int, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"log","arguments":%s}}`, id, args)
	}
	for _, depth := range []int{300, 5000, 20000} {
		code, body := post(call(depth, `{"kind":"message","content":"deep","provenance":`+nested(depth)+`}`))
		var m struct {
			ID    int `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil || code != http.StatusBadRequest || m.Error.Code != -32602 || m.ID != depth ||
			!strings.Contains(m.Error.Message, "levels deep") {
			t.Errorf("depth %d: %d %.200s", depth, code, body)
		}
	}
	if code, body := post(call(1, `{"kind":"message","content":"`+strings.Repeat("x", 1<<20)+`"}`)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d %.200s", code, body)
	}
	if st, _ := eng.Stats(context.Background()); st.Observations != 0 {
		t.Fatalf("%d observations written by refused bodies", st.Observations)
	}
	if code, body := post(call(2, `{"kind":"message","content":"fine","provenance":`+nested(10)+`}`)); code != http.StatusOK || strings.Contains(body, "isError") {
		t.Errorf("a normal call after them: %d %.200s", code, body)
	}
}
