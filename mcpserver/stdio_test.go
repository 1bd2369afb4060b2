package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
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
		case <-time.After(10 * time.Second):
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
	} {
		if m := send(tc.line); errCode(m) != tc.code {
			t.Errorf("%.60q: answer %v; want error %v", tc.line, m, tc.code)
		}
	}
	m := send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"status","arguments":{}}}`)
	if res, _ := m["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Fatalf("after bad lines, a good call: %v", m)
	}
	st, _ := eng.Stats(ctx)
	if st.Observations != 0 {
		t.Fatal("the oversized line was written")
	}
}
