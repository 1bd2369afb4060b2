package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// ReliabilityOptions configure the reliability suite (`cairn bench
// reliability`). Every part runs the real binary as agents do: `cairn log`
// processes, `cairn mcp` over stdio, `cairn serve` over HTTP.
type ReliabilityOptions struct {
	// Binary is the cairn executable to run.
	Binary string
	// Dir is the work directory (its databases are left for inspection).
	Dir string
	// Trials is the number of kill -9 trials in all, shared in turn by
	// the CLI, MCP and HTTP writers. Default 30.
	Trials int
	// Processes is the number of concurrent processes writing and reading
	// one database. Default 8.
	Processes int
	// Writes is each concurrent process's number of writes. Default 20.
	Writes int
	// Parts selects parts by name (kill, concurrent, slow, bodies,
	// backup); empty means all.
	Parts []string
	// Seed makes the writes, their sizes and the kill moments repeatable
	// (the moments are wall-clock delays, so where a kill lands still
	// varies with the machine).
	Seed uint64
	// Progress receives a line per step; nil is silent.
	Progress io.Writer
}

// ReliabilityParts are the suite's parts, in the order they run.
var ReliabilityParts = []string{"kill", "concurrent", "slow", "bodies", "backup"}

// ReliabilityReport is what the suite found. Failures lists every check
// that did not hold; the suite passed when it is empty.
type ReliabilityReport struct {
	Seed       uint64            `json:"seed"`
	Kill       *KillReport       `json:"kill,omitempty"`
	Concurrent *ConcurrentReport `json:"concurrent,omitempty"`
	// SlowClients and Bodies are named checks against `cairn serve` and
	// `cairn mcp`.
	SlowClients []Check       `json:"slowClients,omitempty"`
	Bodies      []Check       `json:"bodies,omitempty"`
	Backup      *BackupReport `json:"backup,omitempty"`
	Failures    []string      `json:"failures"`
	Seconds     float64       `json:"seconds"`
	Load1Start  float64       `json:"load1Start"`
	Load1End    float64       `json:"load1End"`
}

// Check is one named check and what was seen.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// RunReliability runs the suite. It returns an error when the suite could
// not run; checks that fail are in the report's Failures.
func RunReliability(ctx context.Context, o ReliabilityOptions) (ReliabilityReport, error) {
	if o.Trials <= 0 {
		o.Trials = 30
	}
	if o.Processes <= 0 {
		o.Processes = 8
	}
	if o.Writes <= 0 {
		o.Writes = 20
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if len(o.Parts) == 0 {
		o.Parts = ReliabilityParts
	}
	for _, p := range o.Parts {
		if !contains(ReliabilityParts, p) {
			return ReliabilityReport{}, memory.Errorf(memory.CodeInvalidParams, "unknown part %q (parts: %s)", p, strings.Join(ReliabilityParts, ", "))
		}
	}
	glove, err := embed.NewGloVe()
	if err != nil {
		return ReliabilityReport{}, err
	}
	r := &rel{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x5eed)), emb: glove}
	defer r.killAll()
	rep := ReliabilityReport{Seed: o.Seed, Failures: []string{}, Load1Start: load1()}
	start := time.Now()
	for _, part := range o.Parts {
		t0 := time.Now()
		r.logf("== %s", part)
		var err error
		switch part {
		case "kill":
			var k KillReport
			k, err = r.killLoop(ctx)
			rep.Kill = &k
		case "concurrent":
			var c ConcurrentReport
			c, err = r.concurrent(ctx)
			rep.Concurrent = &c
		case "slow":
			rep.SlowClients, err = r.slowClients(ctx)
		case "bodies":
			rep.Bodies, err = r.bodies(ctx)
		case "backup":
			var b BackupReport
			b, err = r.backup(ctx)
			rep.Backup = &b
		}
		if err != nil {
			return rep, err
		}
		r.logf("   %s: %.1f s", part, time.Since(t0).Seconds())
	}
	r.killAll()
	rep.Failures = append(rep.Failures, r.failures...)
	rep.Seconds = time.Since(start).Seconds()
	rep.Load1End = load1()
	return rep, nil
}

// rel is one run of the suite.
type rel struct {
	o   ReliabilityOptions
	rng *rand.Rand
	emb embed.Embedder

	mu       sync.Mutex
	failures []string
	procs    map[*exec.Cmd]bool
}

func (r *rel) logf(format string, args ...any) { fmt.Fprintf(r.o.Progress, format+"\n", args...) }

// fail records a check that did not hold.
func (r *rel) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	if len(r.failures) < 200 {
		r.failures = append(r.failures, msg)
	}
	r.mu.Unlock()
	r.logf("   FAIL %s", msg)
}

// checkList records a part's named checks: each is logged, and one that
// does not hold is a failure of the suite.
type checkList struct {
	r     *rel
	part  string // how failures name the part
	width int    // the names' column in the log
	list  *[]Check
}

// checks records part's checks in list, logging their names in a column
// width wide.
func (r *rel) checks(part string, width int, list *[]Check) *checkList {
	return &checkList{r: r, part: part, width: width, list: list}
}

// add records a check.
func (cl *checkList) add(name string, ok bool, format string, args ...any) {
	c := Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)}
	*cl.list = append(*cl.list, c)
	if !ok {
		cl.r.fail("%s: %s: %s", cl.part, name, c.Detail)
	}
	cl.r.logf("   %-*s %v  %s", cl.width, name, ok, c.Detail)
}

// cmd is a cairn command on db; its process is killed when the suite
// ends, if it is still running.
func (r *rel) cmd(db string, env []string, args ...string) *exec.Cmd {
	c := exec.Command(r.o.Binary, append([]string{"--db", db}, args...)...)
	c.Env = append(append(os.Environ(), "CAIRN_LOG=off"), env...)
	return c
}

// start starts c and tracks it.
func (r *rel) start(c *exec.Cmd) error {
	if err := c.Start(); err != nil {
		return memory.Wrap(memory.CodeInternal, err, "starting %s: %v", filepath.Base(c.Path), err)
	}
	r.mu.Lock()
	if r.procs == nil {
		r.procs = map[*exec.Cmd]bool{}
	}
	r.procs[c] = true
	r.mu.Unlock()
	return nil
}

// wait waits for c and stops tracking it.
func (r *rel) wait(c *exec.Cmd) error {
	err := c.Wait()
	r.mu.Lock()
	delete(r.procs, c)
	r.mu.Unlock()
	return err
}

// killAll kills the processes still running (after a failure).
func (r *rel) killAll() {
	r.mu.Lock()
	procs := r.procs
	r.procs = nil
	r.mu.Unlock()
	for c := range procs {
		c.Process.Kill()
		c.Wait()
	}
}

// killed reports whether a process ended by SIGKILL.
func killed(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// open opens db in this process, as a new cairn process would.
func (r *rel) open(db string) (*cairn.Engine, error) {
	return cairn.Open(db, &cairn.Options{Embedder: r.emb})
}

// write is one write a client sent: its id and content, and whether the
// writer acknowledged it.
type write struct {
	ID      string
	Token   string
	Content string
	Acked   bool
}

// fillerWords pad contents to varied sizes.
var fillerWords = strings.Fields(`deploy pipeline retry checkout session token expired clock skew webhook
duplicate migration index segment merge flush capsule summary thought graph entity edge commit rollback
timeout latency budget ranking lexical semantic recency vector embedding cache worker queue lock`)

// newWrite makes the write n of a writer: a unique token (a word found
// nowhere else), and a content of varied size (a fifth of them several
// KiB, so a record spans pages).
func (r *rel) newWrite(writer string, n int) write {
	r.mu.Lock()
	size := r.rng.IntN(40)
	if r.rng.IntN(5) == 0 {
		size = 500 + r.rng.IntN(2500)
	}
	words := make([]string, size)
	for i := range words {
		words[i] = fillerWords[r.rng.IntN(len(fillerWords))]
	}
	tok := fmt.Sprintf("zq%sx%dq%d", strings.NewReplacer("-", "", "_", "").Replace(writer), n, r.rng.IntN(1000))
	r.mu.Unlock()
	return write{
		ID:      fmt.Sprintf("obs_rel_%s_%d", writer, n),
		Token:   tok,
		Content: fmt.Sprintf("%s note %d %s %s", writer, n, tok, strings.Join(words, " ")),
	}
}

// logArgs are the log tool's arguments for w in session.
func logArgs(w write, session string) map[string]any {
	return map[string]any{"id": w.ID, "kind": "message", "content": w.Content,
		"scopeIds": map[string]string{"sessionId": session, "repoId": "/reliability"}}
}

// server is a running `cairn serve`.
type server struct {
	cmd  *exec.Cmd
	base string
	// lines are its log lines after the listening line (the first 1000).
	lines chan string
	// ready is how long it took to listen.
	ready time.Duration
}

var listeningRE = listening

// startServer starts `cairn serve` on a free port with flags and waits
// until it listens (or ends: then base is empty).
func (r *rel) startServer(db string, env []string, flags ...string) (*server, error) {
	c := r.cmd(db, env, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...)...)
	stderr, err := c.StderrPipe()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := r.start(c); err != nil {
		return nil, err
	}
	s := &server{cmd: c, lines: make(chan string, 1000)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		found := false
		for sc.Scan() {
			if !found {
				if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
					found = true
					addr <- m[1]
				}
				continue
			}
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
		close(addr)
		close(s.lines)
	}()
	select {
	case a, ok := <-addr:
		if ok {
			s.base = "http://" + strings.TrimSuffix(a, ")")
			s.ready = time.Since(t0)
		}
	case <-time.After(2 * time.Minute): // far above a start on a loaded machine
		c.Process.Kill()
		r.wait(c)
		return nil, memory.Errorf(memory.CodeInternal, "cairn serve did not start within two minutes")
	}
	return s, nil
}

// stop ends a server with SIGINT, as an operator would.
func (r *rel) stop(s *server) error {
	s.cmd.Process.Signal(os.Interrupt)
	return r.wait(s.cmd)
}

// stdio is a running `cairn mcp` spoken to line by line.
type stdio struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	// pipe is the process's standard output, for read deadlines.
	pipe io.Reader
	id   int
}

// startStdio starts `cairn mcp` and initializes a session.
func (r *rel) startStdio(db string, env ...string) (*stdio, error) {
	c := r.cmd(db, env, "mcp")
	in, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := r.start(c); err != nil {
		return nil, err
	}
	s := &stdio{cmd: c, in: in, out: bufio.NewReaderSize(out, 1<<20), pipe: out}
	if _, err := s.call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cairn-reliability","version":"1"}}`); err != nil {
		c.Process.Kill()
		r.wait(c)
		return nil, err
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s, nil
}

// rpcReply is a JSON-RPC answer as the suite reads it.
type rpcReply struct {
	ID     *int `json:"id"`
	Result *struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// send writes one raw line.
func (s *stdio) send(line string) error {
	_, err := io.WriteString(s.in, line+"\n")
	return err
}

// read reads the next answer: a message with an id, or an error (whose
// id is null when the request's could not be read).
func (s *stdio) read() (rpcReply, string, error) {
	// A server that never answers fails the check instead of hanging the
	// suite.
	if f, ok := s.pipe.(*os.File); ok {
		f.SetReadDeadline(time.Now().Add(safety))
	}
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			return rpcReply{}, "", err
		}
		var rep rpcReply
		if json.Unmarshal([]byte(line), &rep) == nil && (rep.ID != nil || rep.Error != nil) {
			return rep, line, nil
		}
	}
}

// call sends a request and reads its answer.
func (s *stdio) call(method, params string) (rpcReply, error) {
	s.id++
	if err := s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.id, method, params)); err != nil {
		return rpcReply{}, err
	}
	for {
		rep, line, err := s.read()
		if err != nil {
			return rep, err
		}
		if rep.ID != nil && *rep.ID == s.id {
			if rep.Error != nil {
				return rep, fmt.Errorf("%s: %.200s", method, line)
			}
			return rep, nil
		}
	}
}

// tool calls a tool and returns its answer (a tool error is not an error
// here: the caller checks Result.IsError).
func (s *stdio) tool(name string, args any) (rpcReply, error) {
	b, err := json.Marshal(map[string]any{"name": name, "arguments": args})
	if err != nil {
		return rpcReply{}, err
	}
	return s.call("tools/call", string(b))
}

// close ends the session (end of input) and waits for the process.
func (r *rel) closeStdio(s *stdio) error {
	s.in.Close()
	return r.wait(s.cmd)
}

// retrieved lists the candidates' ids of a retrieve JSON answer.
func retrieved(b []byte) []string {
	var res struct {
		Candidates []struct {
			Entity struct {
				ID string `json:"id"`
			} `json:"entity"`
		} `json:"candidates"`
	}
	if json.Unmarshal(b, &res) != nil {
		return nil
	}
	var ids []string
	for _, c := range res.Candidates {
		ids = append(ids, c.Entity.ID)
	}
	return ids
}

// found reports whether a retrieve JSON answer holds id among its
// candidates. (The record holding a query's only word need not come
// first: hybrid also credits a turn's neighbours in its capsule.)
func found(b []byte, id string) bool { return contains(retrieved(b), id) }

// doctorOK opens db in this process and runs the doctor; it returns the
// failed findings and the warnings.
func (r *rel) doctor(ctx context.Context, eng *cairn.Engine) (failed, warnings []string, err error) {
	rep, err := eng.Doctor(ctx, cairn.DoctorRequest{})
	if err != nil {
		return nil, nil, err
	}
	for _, f := range rep.Findings {
		switch {
		case f.OK:
		case f.Warning:
			warnings = append(warnings, f.Check+": "+f.Detail)
		default:
			failed = append(failed, f.Check+": "+f.Detail)
		}
	}
	return failed, warnings, nil
}

// cliDoctor runs `cairn doctor --json` on db: nil when it exits 0.
func (r *rel) cliDoctor(db string) error {
	out, err := r.cmd(db, nil, "--json", "doctor").CombinedOutput()
	if err != nil {
		return fmt.Errorf("cairn doctor: %v: %.600s", err, out)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
