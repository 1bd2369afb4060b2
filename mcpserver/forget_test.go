package mcpserver_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/forgettest"
	"github.com/cairnhq/cairn/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestForgetEveryKind forgets or deletes a record of every kind through
// MCP tool calls: the first call forgets it, a second one answers the same
// (a delete: not_found) and changes nothing; unknown ids are not_found and
// malformed ones invalid_params.
func TestForgetEveryKind(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	recs := forgettest.Seed(t, eng, t.TempDir())
	srv, err := mcpserver.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(tool string, args map[string]any) (string, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			code, _ := res.Meta["cairn/code"].(string)
			return text, code
		}
		return text, ""
	}
	for _, c := range forgettest.Calls(recs) {
		first, code := call(c.Tool, c.Args)
		if code != "" {
			t.Fatalf("%s: %s", c.Tool, first)
		}
		forgettest.CheckResult(t, c, []byte(first))
		second, code := call(c.Tool, c.Args)
		switch {
		case c.Redacts && (code != "" || second != first):
			t.Errorf("%s again: %s (%s); want the same answer %s", c.Tool, second, code, first)
		case !c.Redacts && code != "not_found":
			t.Errorf("%s again: %s; want not_found", c.Tool, second)
		}
		if _, code := call(c.Tool, c.Unknown); code != "not_found" {
			t.Errorf("%s of an unknown record: code %q; want not_found", c.Tool, code)
		}
		if _, code := call(c.Tool, c.Bad); code != "invalid_params" {
			t.Errorf("%s with a malformed id: code %q; want invalid_params", c.Tool, code)
		}
		hist, code := call("record_history", map[string]any{"id": c.ID})
		if code != "" {
			t.Fatalf("record_history of %s: %s", c.Kind, hist)
		}
		forgettest.CheckHistory(t, c, []byte(hist))
	}
	if _, code := call("record_history", map[string]any{"id": "obs_unknown"}); code != "not_found" {
		t.Errorf("record_history of an unknown id: code %q; want not_found", code)
	}
	if _, code := call("record_history", map[string]any{"id": " obs_1"}); code != "invalid_params" {
		t.Errorf("record_history of a malformed id: code %q; want invalid_params", code)
	}
	forgettest.CheckGone(t, eng, recs)
}
