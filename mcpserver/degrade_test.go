package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/embedtest"
	"github.com/cairnhq/cairn/mcpserver"
	"github.com/cairnhq/cairn/retrieve"
)

// rpcClient speaks newline-delimited JSON-RPC to a server, one request at
// a time.
type rpcClient struct {
	t       *testing.T
	toSrv   io.Writer
	replies chan string
	n       int
}

// call sends a request and returns its answer's raw line.
func (c *rpcClient) call(method string, params any) string {
	c.t.Helper()
	c.n++
	p, _ := json.Marshal(params)
	fmt.Fprintf(c.toSrv, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.n, method, p)
	for {
		select {
		case r, ok := <-c.replies:
			if !ok {
				c.t.Fatalf("the server closed the connection after %s", method)
			}
			if replyID(r) == fmt.Sprint(c.n) {
				return r
			}
		case <-time.After(2 * time.Minute): // a safety net, not a measurement
			c.t.Fatalf("no answer to %s", method)
		}
	}
}

// tool calls a tool and returns the raw answer and the decoded result.
func (c *rpcClient) tool(name string, args any) (string, toolResult) {
	c.t.Helper()
	line := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	var m struct {
		Result *toolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || m.Result == nil {
		c.t.Fatalf("%s: not a tool result: %s", name, line)
	}
	return line, *m.Result
}

type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
	Meta map[string]any `json:"_meta"`
}

// errorCode is a tool error's code ("" for a success).
func (r toolResult) errorCode() string {
	if !r.IsError {
		return ""
	}
	code, _ := r.Meta["cairn/code"].(string)
	return code
}

// startMCP serves eng over the stdio transport and returns a client.
func startMCP(t *testing.T, eng *cairn.Engine, log *slog.Logger) *rpcClient {
	t.Helper()
	srv, err := mcpserver.New(eng, &mcpserver.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	clientToServer, toServer := io.Pipe()
	fromServer, serverToClient := io.Pipe()
	t.Cleanup(func() { toServer.Close() })
	go srv.Run(ctx, mcpserver.GuardedTransport(clientToServer, serverToClient, 1<<20))
	replies := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(fromServer)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			replies <- sc.Text()
		}
		close(replies)
	}()
	c := &rpcClient{t: t, toSrv: toServer, replies: replies}
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	fmt.Fprintln(toServer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// MCP against a real remote embedder, failing each way and working: writes
// succeed, retrieve degrades (and says so) only when the embedder fails,
// the inner voice and reembed fail with embedder_unavailable, and no
// answer or log line shows the embedder's address, path or answer, or
// Go's error texts.
func TestRemoteEmbedderMCP(t *testing.T) {
	for _, mode := range append(embedtest.Failing, embedtest.Working) {
		t.Run(string(mode), func(t *testing.T) {
			srv := embedtest.Start(t, mode, 16)
			down := mode != embedtest.Working
			iv := retrieve.DefaultInnerVoiceConfig()
			iv.Enabled = true
			now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
			eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Embedder: srv.Embedder(), InnerVoice: &iv,
				Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			var logs bytes.Buffer
			c := startMCP(t, eng, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
			shows := func(what, text string) {
				t.Helper()
				if leaks := srv.Leaks(text); len(leaks) > 0 {
					t.Errorf("%s shows %q: %s", what, leaks, text)
				}
			}

			for _, text := range embedtest.Birds {
				line, res := c.tool("log", map[string]any{"kind": "command", "content": text, "scopeIds": map[string]string{"repoId": embedtest.Repo}})
				if res.IsError {
					t.Fatalf("a write failed: %s", line)
				}
				shows("log", line)
			}

			line, res := c.tool("retrieve", map[string]any{"query": embedtest.Query, "scopeIds": map[string]string{"repoId": embedtest.Repo}})
			shows("retrieve", line)
			var got cairn.RetrieveResult
			if res.IsError || json.Unmarshal(res.StructuredContent, &got) != nil {
				t.Fatalf("retrieve: %s", line)
			}
			wantDegraded := ""
			if down {
				wantDegraded = "embedder_unavailable"
				if len(got.Candidates) != embedtest.Matching {
					t.Errorf("degraded retrieve found %d candidates; want the %d sharing words with the query", len(got.Candidates), embedtest.Matching)
				}
			} else if strings.Contains(line, "degraded") {
				t.Errorf("a full answer says degraded: %s", line)
			}
			if string(got.Provenance.Degraded) != wantDegraded {
				t.Errorf("provenance degraded %q; want %q", got.Provenance.Degraded, wantDegraded)
			}
			for _, cand := range got.Candidates {
				if string(cand.Explanation.Degraded) != wantDegraded {
					t.Errorf("candidate %s: explanation degraded %q; want %q", cand.Entity.ID(), cand.Explanation.Degraded, wantDegraded)
				}
			}

			for _, tool := range []string{"inner_voice_retrieve", "reembed"} {
				args := map[string]any{}
				if tool == "inner_voice_retrieve" {
					args["query"] = embedtest.Query
				}
				line, res := c.tool(tool, args)
				shows(tool, line)
				want := ""
				if down {
					want = "embedder_unavailable"
				}
				if res.errorCode() != want {
					t.Errorf("%s: code %q; want %q: %s", tool, res.errorCode(), want, line)
				}
			}
			line, _ = c.tool("doctor", map[string]any{})
			shows("doctor", line)

			// Malformed arguments are named in JSON's words, not Go's.
			line, res = c.tool("retrieve", map[string]any{"query": "x", "maxCandidates": "ten", "syntax": 3})
			if res.errorCode() != "invalid_params" || !strings.Contains(line, "must be a whole number") || strings.Contains(line, "int,") {
				t.Errorf("bad arguments: %s", line)
			}

			for _, l := range strings.Split(logs.String(), "\n") {
				shows("the log", l)
			}
		})
	}
}
