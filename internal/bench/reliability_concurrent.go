package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// ConcurrentReport is the tally of processes of mixed faces writing and
// reading one database at once.
type ConcurrentReport struct {
	// Processes ran at once: Faces says how many of each.
	Processes int            `json:"processes"`
	Faces     map[string]int `json:"faces"`
	// Writes acknowledged, and how many of them were missing afterwards
	// (must be 0).
	Acknowledged int `json:"acknowledged"`
	Lost         int `json:"lost"`
	// Reads are retrievals, each of the newest write another process had
	// acknowledged; Missed counts those that did not find it (must be 0).
	Reads  int `json:"reads"`
	Missed int `json:"missed"`
	// Errors are calls answered with an error, by code (must be empty).
	Errors  map[string]int `json:"errors"`
	Seconds float64        `json:"seconds"`
}

// concWriter is one process of the concurrent part.
type concWriter struct {
	idx     int
	name    string
	face    string
	session string
	mu      sync.Mutex
	acked   []write
}

func (w *concWriter) ack(x write) {
	w.mu.Lock()
	w.acked = append(w.acked, x)
	w.mu.Unlock()
}

// last is the newest write w had acknowledged.
func (w *concWriter) last() (write, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.acked) == 0 {
		return write{}, false
	}
	return w.acked[len(w.acked)-1], true
}

// concurrent runs Processes processes (MCP over stdio, HTTP servers with a
// client each, and CLI slots running `cairn log` and `cairn retrieve` one
// after another) on one database. Each writes Writes records, and every
// third write it retrieves the newest record another process has
// acknowledged: a write acknowledged by any process must be found by the
// next search of every other.
func (r *rel) concurrent(ctx context.Context) (ConcurrentReport, error) {
	start := time.Now()
	n := r.o.Processes
	cr := &concRun{r: r, db: filepath.Join(r.o.Dir, "concurrent.db"),
		rep: ConcurrentReport{Processes: n, Faces: map[string]int{}, Errors: map[string]int{}}}
	faceOf := []string{"mcp", "http", "cli"}
	for i := range n {
		w := &concWriter{idx: i, name: fmt.Sprintf("p%d", i), face: faceOf[i%3]}
		w.session = "reliability-concurrent-" + w.name
		cr.writers = append(cr.writers, w)
		cr.rep.Faces[w.face]++
	}
	// Start every process first, so they all run at once.
	procs, err := cr.startAll()
	if err != nil {
		cr.stopAll(procs, false)
		return cr.rep, err
	}
	r.logf("   %d processes: %d mcp, %d serve, %d cli slots; %d writes each", n, cr.rep.Faces["mcp"], cr.rep.Faces["http"], cr.rep.Faces["cli"], r.o.Writes)
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch {
			case p.stdio != nil:
				cr.mcpWriter(p.w, p.stdio)
			case p.server != nil:
				cr.httpWriter(p.w, p.server)
			default:
				cr.cliWriter(p.w)
			}
		}()
	}
	wg.Wait()
	cr.stopAll(procs, true)
	if err := cr.verify(ctx); err != nil {
		return cr.rep, err
	}
	cr.rep.Seconds = time.Since(start).Seconds()
	return cr.rep, nil
}

// concRun is the concurrent part's processes and tally.
type concRun struct {
	r       *rel
	db      string
	writers []*concWriter
	mu      sync.Mutex // guards rep's counts while the processes run
	rep     ConcurrentReport
}

// concProc is a running process of the concurrent part (a CLI slot has
// neither a stdio session nor a server).
type concProc struct {
	w      *concWriter
	stdio  *stdio
	server *server
}

// startAll starts the MCP sessions and servers; on failure it returns
// those it started.
func (cr *concRun) startAll() ([]concProc, error) {
	var procs []concProc
	for _, w := range cr.writers {
		switch w.face {
		case "mcp":
			s, err := cr.r.startStdio(cr.db)
			if err != nil {
				return procs, err
			}
			procs = append(procs, concProc{w: w, stdio: s})
		case "http":
			s, err := cr.r.startServer(cr.db, nil)
			if err != nil {
				return procs, err
			}
			if s.base == "" {
				return procs, memory.Errorf(memory.CodeInternal, "cairn serve ended before listening")
			}
			procs = append(procs, concProc{w: w, server: s})
		default:
			procs = append(procs, concProc{w: w})
		}
	}
	return procs, nil
}

// stopAll stops the processes; with check, one that does not exit cleanly
// is an error of the part.
func (cr *concRun) stopAll(procs []concProc, check bool) {
	for _, p := range procs {
		if p.stdio != nil {
			if err := cr.r.closeStdio(p.stdio); err != nil && check {
				cr.errorf("exit", "cairn mcp (%s) exited with %v", p.w.name, err)
			}
		}
		if p.server != nil {
			if err := cr.r.stop(p.server); err != nil && check {
				cr.errorf("exit", "cairn serve (%s) exited with %v", p.w.name, err)
			}
		}
	}
}

// errorf counts an error of code and records the failure.
func (cr *concRun) errorf(code, format string, args ...any) {
	cr.mu.Lock()
	cr.rep.Errors[code]++
	cr.mu.Unlock()
	cr.r.fail("concurrent: "+format, args...)
}

// read has w, at its write i, retrieve the newest write of another
// process with find.
func (cr *concRun) read(w *concWriter, i int, find func(q write, session string) ([]byte, error)) {
	other := cr.writers[(w.idx+1+i/3)%len(cr.writers)]
	if other == w {
		return
	}
	x, ok := other.last()
	if !ok {
		return
	}
	got, err := find(x, other.session)
	cr.mu.Lock()
	cr.rep.Reads++
	cr.mu.Unlock()
	switch {
	case err != nil:
		cr.errorf("read", "%s (%s) retrieving %s's newest write: %v", w.name, w.face, other.name, err)
	case !found(got, x.ID):
		cr.mu.Lock()
		cr.rep.Missed++
		cr.mu.Unlock()
		cr.r.fail("concurrent: %s (%s) did not find %s, acknowledged by %s", w.name, w.face, x.ID, other.name)
	}
}

// mcpWriter writes and reads through a `cairn mcp` session.
func (cr *concRun) mcpWriter(w *concWriter, s *stdio) {
	for i := range cr.r.o.Writes {
		x := cr.r.newWrite(w.name, i)
		res, err := s.tool("log", logArgs(x, w.session))
		if err != nil || res.Result == nil || res.Result.IsError {
			cr.errorf(toolCode(res), "%s (mcp) write %d: %v %s", w.name, i, err, toolText(res))
			return
		}
		w.ack(x)
		if i%3 == 2 {
			cr.read(w, i, func(q write, session string) ([]byte, error) {
				res, err := s.tool("retrieve", map[string]any{"query": q.Token, "scopeIds": map[string]string{"sessionId": session}, "maxCandidates": 5})
				if err != nil || res.Result == nil || res.Result.IsError {
					return nil, fmt.Errorf("%v %s", err, toolText(res))
				}
				return res.Result.StructuredContent, nil
			})
		}
	}
}

// httpWriter writes and reads through a client of `cairn serve`.
func (cr *concRun) httpWriter(w *concWriter, s *server) {
	client := &http.Client{Timeout: time.Minute}
	for i := range cr.r.o.Writes {
		x := cr.r.newWrite(w.name, i)
		body, _ := json.Marshal(logArgs(x, w.session))
		res, err := client.Post(s.base+"/v1/observations", "application/json", bytes.NewReader(body))
		if err != nil {
			cr.errorf("transport", "%s (http) write %d: %v", w.name, i, err)
			return
		}
		b := readAll(res)
		if res.StatusCode != http.StatusCreated {
			cr.errorf(httpCode(b), "%s (http) write %d: %d %.200s", w.name, i, res.StatusCode, b)
			return
		}
		w.ack(x)
		if i%3 == 2 {
			cr.read(w, i, func(q write, session string) ([]byte, error) {
				body, _ := json.Marshal(map[string]any{"query": q.Token, "scopeIds": map[string]string{"sessionId": session}, "maxCandidates": 5})
				res, err := client.Post(s.base+"/v1/retrieve", "application/json", bytes.NewReader(body))
				if err != nil {
					return nil, err
				}
				b := readAll(res)
				if res.StatusCode != http.StatusOK {
					return nil, fmt.Errorf("%d %.200s", res.StatusCode, b)
				}
				return b, nil
			})
		}
	}
}

// cliWriter writes and reads with `cairn log` and `cairn retrieve`
// processes, one after another.
func (cr *concRun) cliWriter(w *concWriter) {
	r := cr.r
	for i := range r.o.Writes {
		x := r.newWrite(w.name, i)
		c := r.cmd(cr.db, nil, "--json", "log", "--id", x.ID, "--kind", "message", "--scope", "session="+w.session+",repo=/reliability", "-")
		c.Stdin = strings.NewReader(x.Content)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		if err := r.start(c); err != nil {
			cr.errorf("start", "%s (cli): %v", w.name, err)
			return
		}
		if err := r.wait(c); err != nil {
			cr.errorf(cliCode(errb.Bytes()), "%s (cli) write %d: %v %.200s", w.name, i, err, errb.String())
			return
		}
		w.ack(x)
		if i%3 == 2 {
			cr.read(w, i, func(q write, session string) ([]byte, error) {
				c := r.cmd(cr.db, nil, "--json", "retrieve", "--scope", "session="+session, "--max-candidates", "5", q.Token)
				var out, errb bytes.Buffer
				c.Stdout, c.Stderr = &out, &errb
				if err := r.start(c); err != nil {
					return nil, err
				}
				if err := r.wait(c); err != nil {
					return nil, fmt.Errorf("%v %.200s", err, errb.String())
				}
				return out.Bytes(), nil
			})
		}
	}
}

// verify checks that every acknowledged write is in the database, whole,
// and that `cairn doctor`'s checks pass.
func (cr *concRun) verify(ctx context.Context) error {
	r := cr.r
	eng, err := r.open(cr.db)
	if err != nil {
		return err
	}
	for _, w := range cr.writers {
		for _, x := range w.acked {
			cr.rep.Acknowledged++
			o, err := eng.Observation(ctx, x.ID)
			if err != nil || o.Content != x.Content {
				cr.rep.Lost++
				r.fail("concurrent: acknowledged write %s of %s (%s) is missing or changed: %v", x.ID, w.name, w.face, err)
			}
		}
	}
	bad, _, err := r.doctor(ctx, eng)
	eng.Close()
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		r.fail("concurrent: doctor: %s", strings.Join(bad, "; "))
	}
	return nil
}

// toolCode is a tool error's code (from its _meta, else "tool_error").
func toolCode(res rpcReply) string {
	if res.Error != nil {
		return fmt.Sprintf("jsonrpc_%d", res.Error.Code)
	}
	if res.Result == nil {
		return "transport"
	}
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if len(res.Result.Content) > 0 && json.Unmarshal([]byte(res.Result.Content[0].Text), &e) == nil && e.Error.Code != "" {
		return e.Error.Code
	}
	return "tool_error"
}

func toolText(res rpcReply) string {
	if res.Result == nil || len(res.Result.Content) == 0 {
		return ""
	}
	return res.Result.Content[0].Text
}

// httpCode is an HTTP error body's code.
func httpCode(b []byte) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
		return e.Error.Code
	}
	return "http_error"
}

// cliCode is the code of a `cairn --json` error on standard error.
func cliCode(b []byte) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(b), &e) == nil && e.Error.Code != "" {
		return e.Error.Code
	}
	return "cli_error"
}

func readAll(res *http.Response) []byte {
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return b.Bytes()
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
