package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/corpus"
	"github.com/cairnhq/cairn/memory"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolOptions configure the protocol benchmark.
type ProtocolOptions struct {
	// Binary is the cairn executable to start as `cairn serve` and
	// `cairn mcp`.
	Binary string
	// Size is the number of observations generated; Clients the concurrent
	// callers of the load runs; Requests the calls per run.
	Size, Clients, Requests int
	// Seed seeds the generator.
	Seed uint64
	// Dir holds the temporary database; default a new temporary directory,
	// removed afterwards.
	Dir string
	// Progress receives one line per step.
	Progress io.Writer
}

// ProtocolReport is what the protocol benchmark measured.
type ProtocolReport struct {
	Size     int   `json:"size"`
	Clients  int   `json:"clients"`
	Requests int   `json:"requests"`
	Runs     []Run `json:"runs"`
	// StdioOverheadP50Ms is the median, over queries, of an MCP stdio round
	// trip (with a raw JSON-RPC client) minus the library call of the same
	// query just before it; StdioSDKOverheadP50Ms the same with the Go SDK's
	// client, whose own decoding it includes.
	StdioOverheadP50Ms    float64 `json:"stdioOverheadP50Ms"`
	StdioSDKOverheadP50Ms float64 `json:"stdioSdkOverheadP50Ms"`
	// HTTPOverheadP50Ms is the same for the HTTP API.
	HTTPOverheadP50Ms float64 `json:"httpOverheadP50Ms"`
}

// Run is one measured path.
type Run struct {
	Path string `json:"path"`
	Stats
}

// Protocol builds a database of generated memory, starts `cairn serve` and
// `cairn mcp` on it, and measures retrieve through each face.
func Protocol(ctx context.Context, o ProtocolOptions) (ProtocolReport, error) {
	if o.Size < 1 || o.Clients < 1 || o.Requests < 1 {
		return ProtocolReport{}, memory.Errorf(memory.CodeInvalidParams, "size, clients and requests must be at least 1")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Dir != "" {
		if _, err := os.Stat(filepath.Join(o.Dir, "bench.db")); err == nil {
			return ProtocolReport{}, memory.Errorf(memory.CodeConflict, "%s already holds a bench.db; give an empty directory", o.Dir)
		}
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "cairn-bench-")
		if err != nil {
			return ProtocolReport{}, memory.Wrap(memory.CodeInternal, err, "temporary directory: %v", err)
		}
		defer os.RemoveAll(dir)
		o.Dir = dir
	}
	db := filepath.Join(o.Dir, "bench.db")
	fmt.Fprintf(o.Progress, "building a database of %d observations\n", o.Size)
	queries, err := BuildDB(ctx, db, o.Size, o.Seed)
	if err != nil {
		return ProtocolReport{}, err
	}
	eng, err := cairn.Open(db, nil)
	if err != nil {
		return ProtocolReport{}, err
	}
	defer eng.Close()

	fmt.Fprintln(o.Progress, "starting cairn serve and cairn mcp")
	base, stopServe, err := startServe(o.Binary, db)
	if err != nil {
		return ProtocolReport{}, err
	}
	defer stopServe()
	stdio, err := mcpSession(ctx, &mcp.CommandTransport{Command: exec.Command(o.Binary, "--db", db, "mcp")})
	if err != nil {
		return ProtocolReport{}, err
	}
	defer stdio.Close()
	raw, err := startRawStdio(o.Binary, db, nil)
	if err != nil {
		return ProtocolReport{}, err
	}
	defer raw.close()
	mcpHTTP := make([]*mcp.ClientSession, o.Clients)
	for i := range mcpHTTP {
		if mcpHTTP[i], err = mcpSession(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}); err != nil {
			return ProtocolReport{}, err
		}
		defer mcpHTTP[i].Close()
	}
	httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.Clients * 2}}

	req := func(i int) cairn.RetrieveRequest { return queries[i%len(queries)] }
	direct := func(ctx context.Context, _, i int) error { _, err := eng.Retrieve(ctx, req(i)); return err }
	overHTTP := func(ctx context.Context, _, i int) error {
		body, _ := json.Marshal(req(i))
		res, err := httpClient.Post(base+"/v1/retrieve", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	}
	callMCP := func(s *mcp.ClientSession, ctx context.Context, i int) error {
		var args map[string]any
		b, _ := json.Marshal(req(i))
		json.Unmarshal(b, &args)
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "retrieve", Arguments: args})
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error")
		}
		return err
	}
	overStdio := func(ctx context.Context, _, i int) error { return callMCP(stdio, ctx, i) }
	overRaw := func(ctx context.Context, _, i int) error { return raw.retrieve(ctx, req(i)) }
	overMCPHTTP := func(ctx context.Context, w, i int) error { return callMCP(mcpHTTP[w], ctx, i) }

	rep := ProtocolReport{Size: o.Size, Clients: o.Clients, Requests: o.Requests}
	warm := min(200, o.Requests)
	for _, run := range []struct {
		path    string
		clients int
		do      func(context.Context, int, int) error
	}{
		{"library, 1 caller", 1, direct},
		{"HTTP API, 1 caller", 1, overHTTP},
		{"MCP stdio (raw JSON-RPC client), 1 caller", 1, overRaw},
		{"MCP stdio (Go SDK client), 1 caller", 1, overStdio},
		{fmt.Sprintf("library, %d callers", o.Clients), o.Clients, direct},
		{fmt.Sprintf("HTTP API, %d callers", o.Clients), o.Clients, overHTTP},
		{fmt.Sprintf("MCP streamable HTTP, %d callers", o.Clients), o.Clients, overMCPHTTP},
	} {
		fmt.Fprintf(o.Progress, "measuring %s\n", run.path)
		Load(ctx, run.clients, warm, run.do) // warm caches and connections
		st := Load(ctx, run.clients, o.Requests, run.do)
		if st.Errors > 0 {
			return rep, memory.Errorf(memory.CodeInternal, "%s: %d of %d calls failed", run.path, st.Errors, st.Requests)
		}
		rep.Runs = append(rep.Runs, Run{Path: run.path, Stats: st})
	}
	// Overheads are paired: each query runs through the library and through
	// each protocol back to back, and the median of the per-query
	// differences is reported, so the query mix cancels out.
	fmt.Fprintln(o.Progress, "measuring protocol overhead, paired per query")
	var dHTTP, dRaw, dSDK []time.Duration
	for i := range o.Requests {
		t0 := time.Now()
		if err := direct(ctx, 0, i); err != nil {
			return rep, err
		}
		lib := time.Since(t0)
		for _, m := range []struct {
			do func(context.Context, int, int) error
			d  *[]time.Duration
		}{{overHTTP, &dHTTP}, {overRaw, &dRaw}, {overStdio, &dSDK}} {
			t0 := time.Now()
			if err := m.do(ctx, 0, i); err != nil {
				return rep, err
			}
			*m.d = append(*m.d, time.Since(t0)-lib)
		}
	}
	rep.HTTPOverheadP50Ms = Percentile(dHTTP, 0.5)
	rep.StdioOverheadP50Ms = Percentile(dRaw, 0.5)
	rep.StdioSDKOverheadP50Ms = Percentile(dSDK, 0.5)
	return rep, nil
}

// BuildDB writes size generated observations to a new database at path and
// returns natural-language questions about them, scoped to their
// repository.
func BuildDB(ctx context.Context, path string, size int, seed uint64) ([]cairn.RetrieveRequest, error) {
	g := corpus.New(seed)
	obs := g.Observations(size)
	eng, err := cairn.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	batch := make([]cairn.LogRequest, 0, 5000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := eng.LogBatch(ctx, batch)
		batch = batch[:0]
		return err
	}
	for _, o := range obs {
		ts := o.TS
		batch = append(batch, cairn.LogRequest{ID: o.ID, Kind: o.Kind, Content: o.Content, Provenance: o.Provenance, TS: &ts, ScopeIDs: o.Scope})
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	ten := 10
	qs := make([]cairn.RetrieveRequest, 200)
	for i := range qs {
		q, scope := g.Question(obs[(i*7919)%size])
		qs[i] = cairn.RetrieveRequest{Query: q, ScopeIDs: scope, MaxCandidates: &ten}
	}
	return qs, nil
}

var listening = regexp.MustCompile(`listening on http://(\S+)`)

// startServe starts `cairn serve` on a free loopback port.
func startServe(bin, db string) (string, func(), error) {
	cmd := exec.Command(bin, "--db", db, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CAIRN_LOG=off")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, memory.Wrap(memory.CodeInternal, err, "starting cairn serve: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return "", nil, memory.Wrap(memory.CodeInternal, err, "starting cairn serve: %v", err)
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + strings.TrimSuffix(a, ")"), stop, nil
	case <-time.After(2 * time.Minute): // far above a start on a loaded machine
		stop()
		return "", nil, memory.Errorf(memory.CodeInternal, "cairn serve did not start")
	}
}

func mcpSession(ctx context.Context, t mcp.Transport) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "cairn-bench", Version: cairn.Version}, nil)
	s, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "connecting an MCP client: %v", err)
	}
	return s, nil
}
