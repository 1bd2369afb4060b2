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
	pc := &protoClients{queries: queries}
	defer pc.close()
	if err := pc.open(ctx, o, db); err != nil {
		return ProtocolReport{}, err
	}
	rep := ProtocolReport{Size: o.Size, Clients: o.Clients, Requests: o.Requests}
	if err := pc.measure(ctx, o, &rep); err != nil {
		return rep, err
	}
	// Overheads are paired: each query runs through the library and through
	// each protocol back to back, and the median of the per-query
	// differences is reported, so the query mix cancels out.
	fmt.Fprintln(o.Progress, "measuring protocol overhead, paired per query")
	var dHTTP, dRaw, dSDK []time.Duration
	for i := range o.Requests {
		t0 := time.Now()
		if err := pc.direct(ctx, 0, i); err != nil {
			return rep, err
		}
		lib := time.Since(t0)
		for _, m := range []struct {
			do func(context.Context, int, int) error
			d  *[]time.Duration
		}{{pc.overHTTP, &dHTTP}, {pc.overRaw, &dRaw}, {pc.overStdio, &dSDK}} {
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

// protoClients are the ways the protocol bench retrieves: the library,
// the HTTP API of `cairn serve`, MCP over its streamable HTTP, and MCP
// over the stdio of `cairn mcp` (a raw JSON-RPC client and the Go SDK's).
type protoClients struct {
	queries    []cairn.RetrieveRequest
	eng        *cairn.Engine
	base       string
	stopServe  func()
	stdio      *mcp.ClientSession
	raw        *rawStdio
	mcpHTTP    []*mcp.ClientSession
	httpClient *http.Client
}

// open opens the database and starts the processes and sessions; close
// ends those it started.
func (pc *protoClients) open(ctx context.Context, o ProtocolOptions, db string) error {
	var err error
	if pc.eng, err = cairn.Open(db, nil); err != nil {
		return err
	}
	fmt.Fprintln(o.Progress, "starting cairn serve and cairn mcp")
	if pc.base, pc.stopServe, err = startServe(o.Binary, db); err != nil {
		return err
	}
	if pc.stdio, err = mcpSession(ctx, &mcp.CommandTransport{Command: exec.Command(o.Binary, "--db", db, "mcp")}); err != nil {
		return err
	}
	if pc.raw, err = startRawStdio(o.Binary, db, nil); err != nil {
		return err
	}
	for range o.Clients {
		s, err := mcpSession(ctx, &mcp.StreamableClientTransport{Endpoint: pc.base + "/mcp"})
		if err != nil {
			return err
		}
		pc.mcpHTTP = append(pc.mcpHTTP, s)
	}
	pc.httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.Clients * 2}}
	return nil
}

func (pc *protoClients) close() {
	for i := len(pc.mcpHTTP) - 1; i >= 0; i-- {
		pc.mcpHTTP[i].Close()
	}
	if pc.raw != nil {
		pc.raw.close()
	}
	if pc.stdio != nil {
		pc.stdio.Close()
	}
	if pc.stopServe != nil {
		pc.stopServe()
	}
	if pc.eng != nil {
		pc.eng.Close()
	}
}

func (pc *protoClients) req(i int) cairn.RetrieveRequest { return pc.queries[i%len(pc.queries)] }

func (pc *protoClients) direct(ctx context.Context, _, i int) error {
	_, err := pc.eng.Retrieve(ctx, pc.req(i))
	return err
}

func (pc *protoClients) overHTTP(ctx context.Context, _, i int) error {
	body, _ := json.Marshal(pc.req(i))
	res, err := pc.httpClient.Post(pc.base+"/v1/retrieve", "application/json", bytes.NewReader(body))
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

func (pc *protoClients) callMCP(s *mcp.ClientSession, ctx context.Context, i int) error {
	var args map[string]any
	b, _ := json.Marshal(pc.req(i))
	json.Unmarshal(b, &args)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "retrieve", Arguments: args})
	if err == nil && res.IsError {
		err = fmt.Errorf("tool error")
	}
	return err
}

func (pc *protoClients) overStdio(ctx context.Context, _, i int) error {
	return pc.callMCP(pc.stdio, ctx, i)
}

func (pc *protoClients) overRaw(ctx context.Context, _, i int) error {
	return pc.raw.retrieve(ctx, pc.req(i))
}

func (pc *protoClients) overMCPHTTP(ctx context.Context, w, i int) error {
	return pc.callMCP(pc.mcpHTTP[w], ctx, i)
}

// measure runs Requests retrievals through each path, after a warm-up,
// by one caller and by Clients at once.
func (pc *protoClients) measure(ctx context.Context, o ProtocolOptions, rep *ProtocolReport) error {
	warm := min(200, o.Requests)
	for _, run := range []struct {
		path    string
		clients int
		do      func(context.Context, int, int) error
	}{
		{"library, 1 caller", 1, pc.direct},
		{"HTTP API, 1 caller", 1, pc.overHTTP},
		{"MCP stdio (raw JSON-RPC client), 1 caller", 1, pc.overRaw},
		{"MCP stdio (Go SDK client), 1 caller", 1, pc.overStdio},
		{fmt.Sprintf("library, %d callers", o.Clients), o.Clients, pc.direct},
		{fmt.Sprintf("HTTP API, %d callers", o.Clients), o.Clients, pc.overHTTP},
		{fmt.Sprintf("MCP streamable HTTP, %d callers", o.Clients), o.Clients, pc.overMCPHTTP},
	} {
		fmt.Fprintf(o.Progress, "measuring %s\n", run.path)
		Load(ctx, run.clients, warm, run.do) // warm caches and connections
		st := Load(ctx, run.clients, o.Requests, run.do)
		if st.Errors > 0 {
			return memory.Errorf(memory.CodeInternal, "%s: %d of %d calls failed", run.path, st.Errors, st.Requests)
		}
		rep.Runs = append(rep.Runs, Run{Path: run.path, Stats: st})
	}
	return nil
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
	cmd, base, err := startServeProcess(bin, db, nil)
	if err != nil {
		return "", nil, err
	}
	return base, func() { stopServeProcess(cmd) }, nil
}

// startServeProcess starts `cairn serve` on db on a free loopback port,
// with env added to its environment, and returns its process and base URL
// once it listens.
func startServeProcess(bin, db string, env []string) (*exec.Cmd, string, error) {
	cmd := exec.Command(bin, "--db", db, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(append(os.Environ(), "CAIRN_LOG=off"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", memory.Wrap(memory.CodeInternal, err, "starting cairn serve: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, "", memory.Wrap(memory.CodeInternal, err, "starting cairn serve: %v", err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, "http://" + strings.TrimSuffix(a, ")"), nil
	case <-time.After(2 * time.Minute): // far above a start on a loaded machine
		stopServeProcess(cmd)
		return nil, "", memory.Errorf(memory.CodeInternal, "cairn serve did not start")
	}
}

// stopServeProcess ends a `cairn serve` with SIGINT, as an operator
// would, and waits for it.
func stopServeProcess(cmd *exec.Cmd) error {
	cmd.Process.Signal(os.Interrupt)
	return cmd.Wait()
}

func mcpSession(ctx context.Context, t mcp.Transport) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "cairn-bench", Version: cairn.Version}, nil)
	s, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "connecting an MCP client: %v", err)
	}
	return s, nil
}
