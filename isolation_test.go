package cairn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/internal/isotest"
	"github.com/cairnhq/cairn/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The isolation properties (internal/isotest): for random stores and
// random questions, no answer holds a record outside the requested scope,
// a private thought without include_private, a thought marked for removal
// or forgotten, or a forgotten observation (a pin on one only with
// includeRedacted) — with either provider, for retrieve,
// inner_voice_retrieve, thoughts_list and inner_voice, through the engine,
// the HTTP API and MCP alike, on SQLite and on PostgreSQL. The command
// line's test (cmd/cairn) asks the same questions.

// faces calls a tool through the engine, HTTP and MCP; each returns the
// JSON result.
type faces struct {
	eng *cairn.Engine
	srv *httptest.Server
	mcp *mcp.ClientSession
}

func newFaces(t *testing.T, eng *cairn.Engine) *faces {
	t.Helper()
	srv := httptest.NewServer(httpapi.New(eng, nil))
	t.Cleanup(srv.Close)
	ms, err := mcpserver.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := ms.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "isolation-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &faces{eng: eng, srv: srv, mcp: cs}
}

// call returns the engine's, HTTP's and MCP's JSON answers to one call.
func (f *faces) call(t *testing.T, tool string, args any) (engine, viaHTTP, viaMCP []byte) {
	t.Helper()
	ctx := context.Background()
	in, _ := json.Marshal(args)
	out, err := f.eng.CallJSON(ctx, tool, in)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, in, err)
	}
	engine, _ = json.Marshal(out)

	var tl cairn.Tool
	for _, x := range cairn.Tools() {
		if x.Name == tool {
			tl = x
		}
	}
	var resp *http.Response
	if tl.Method == http.MethodGet {
		// A GET takes its arguments as query parameters, nested objects'
		// fields by their own names.
		var m map[string]any
		json.Unmarshal(in, &m)
		q := url.Values{}
		var add func(m map[string]any)
		add = func(m map[string]any) {
			for k, v := range m {
				if sub, ok := v.(map[string]any); ok {
					add(sub)
					continue
				}
				q.Set(k, fmt.Sprint(v))
			}
		}
		add(m)
		resp, err = http.Get(f.srv.URL + tl.Path + "?" + q.Encode())
	} else {
		resp, err = http.Post(f.srv.URL+tl.Path, "application/json", bytes.NewReader(in))
	}
	if err != nil {
		t.Fatal(err)
	}
	viaHTTP, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %s: %d %s", tl.Path, resp.StatusCode, viaHTTP)
	}

	var m map[string]any
	json.Unmarshal(in, &m)
	res, err := f.mcp.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: m})
	if err != nil || res.IsError {
		t.Fatalf("MCP %s: %v %+v", tool, err, res)
	}
	viaMCP, _ = json.Marshal(res.StructuredContent)
	return engine, viaHTTP, viaMCP
}

// isoOptions are the engine's options for an isolation store: the
// settings' defaults with the inner voice on, and a fixed clock.
func isoOptions(t *testing.T) *cairn.Options {
	t.Helper()
	s, err := cairn.SettingsFromEnv(func(k string) string {
		if k == "SURR_ENABLE_INNER_VOICE" {
			return "1"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.Options()
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_800_000_000_000)
	o.Now = func() time.Time { return now }
	return o
}

// askEveryFace asks every face one question of each tool, requires the
// same answer from each, and checks it.
func askEveryFace(t *testing.T, f *faces, st *isotest.Store, what string, q isotest.Question, tl *isotest.Tally) {
	t.Helper()
	for _, c := range []struct {
		tool  string
		args  any
		check func(raw []byte)
	}{
		{isotest.ToolRetrieve, q.Retrieve, func(raw []byte) { st.CheckRetrieve(t, what, q.Retrieve, raw, tl) }},
		{isotest.ToolInnerVoice, q.InnerVoice, func(raw []byte) { st.CheckInnerVoice(t, what, q.InnerVoice, raw, tl) }},
		{isotest.ToolThoughts, q.Thoughts, func(raw []byte) { st.CheckThoughts(t, what, q.Thoughts, raw) }},
		{isotest.ToolAsk, q.Ask, func(raw []byte) { st.CheckAsk(t, what, q.Ask, raw, tl) }},
	} {
		e, h, m := f.call(t, c.tool, c.args)
		if !isotest.SameJSON(e, h) || !isotest.SameJSON(e, m) {
			t.Fatalf("%s: the faces answer %s differently:\nengine %s\nHTTP   %s\nMCP    %s", what, c.tool, isotest.Short(e), isotest.Short(h), isotest.Short(m))
		}
		c.check(e)
	}
}

// testIsolation builds stores with open and asks each the questions.
func testIsolation(t *testing.T, stores, questions int, open func(t *testing.T, seed uint64) *cairn.Engine) {
	var tl isotest.Tally
	for seed := range uint64(stores) {
		rng := rand.New(rand.NewPCG(seed, 77))
		eng := open(t, seed)
		st := isotest.Build(t, eng, rng)
		f := newFaces(t, eng)
		for i := range questions {
			askEveryFace(t, f, st, fmt.Sprintf("store %d, question %d", seed, i), st.Question(rng), &tl)
		}
		eng.Close()
	}
	tl.Exercised(t)
}

func TestIsolationProperties(t *testing.T) {
	stores, questions := 3, 60
	if testing.Short() {
		stores, questions = 1, 20
	}
	testIsolation(t, stores, questions, func(t *testing.T, seed uint64) *cairn.Engine {
		eng, err := cairn.Open(filepath.Join(t.TempDir(), "iso.db"), isoOptions(t))
		if err != nil {
			t.Fatal(err)
		}
		return eng
	})
}

// TestIsolationPropertiesPostgres: the same properties on the PostgreSQL
// store (a private server of internal/pgtest; skipped with a message
// without the server's binaries, failed in CI).
func TestIsolationPropertiesPostgres(t *testing.T) {
	stores, questions := 2, 30
	if testing.Short() {
		stores, questions = 1, 10
	}
	testIsolation(t, stores, questions, func(t *testing.T, seed uint64) *cairn.Engine {
		o := isoOptions(t)
		o.IndexDir = filepath.Join(t.TempDir(), "index")
		eng, err := cairn.Open(pgURL(t), o)
		if err != nil {
			t.Fatal(err)
		}
		return eng
	})
}
