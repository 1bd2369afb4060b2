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
	db := filepath.Join(r.o.Dir, "concurrent.db")
	n := r.o.Processes
	rep := ConcurrentReport{Processes: n, Faces: map[string]int{}, Errors: map[string]int{}}
	faceOf := []string{"mcp", "http", "cli"}
	var writers []*concWriter
	for i := range n {
		w := &concWriter{idx: i, name: fmt.Sprintf("p%d", i), face: faceOf[i%3]}
		w.session = "reliability-concurrent-" + w.name
		writers = append(writers, w)
		rep.Faces[w.face]++
	}
	var mu sync.Mutex
	errorf := func(code, format string, args ...any) {
		mu.Lock()
		rep.Errors[code]++
		mu.Unlock()
		r.fail("concurrent: "+format, args...)
	}
	read := func(w *concWriter, i int, find func(q write, session string) ([]byte, error)) {
		other := writers[(w.idx+1+i/3)%len(writers)]
		if other == w {
			return
		}
		x, ok := other.last()
		if !ok {
			return
		}
		got, err := find(x, other.session)
		mu.Lock()
		rep.Reads++
		mu.Unlock()
		switch {
		case err != nil:
			errorf("read", "%s (%s) retrieving %s's newest write: %v", w.name, w.face, other.name, err)
		case !found(got, x.ID):
			mu.Lock()
			rep.Missed++
			mu.Unlock()
			r.fail("concurrent: %s (%s) did not find %s, acknowledged by %s", w.name, w.face, x.ID, other.name)
		}
	}

	// Start every process first, so they all run at once.
	type running struct {
		w      *concWriter
		stdio  *stdio
		server *server
	}
	var procs []running
	defer func() {
		for _, p := range procs {
			if p.stdio != nil {
				r.closeStdio(p.stdio)
			}
			if p.server != nil {
				r.stop(p.server)
			}
		}
	}()
	for _, w := range writers {
		switch w.face {
		case "mcp":
			s, err := r.startStdio(db)
			if err != nil {
				return rep, err
			}
			procs = append(procs, running{w: w, stdio: s})
		case "http":
			s, err := r.startServer(db, nil)
			if err != nil {
				return rep, err
			}
			if s.base == "" {
				return rep, memory.Errorf(memory.CodeInternal, "cairn serve ended before listening")
			}
			procs = append(procs, running{w: w, server: s})
		default:
			procs = append(procs, running{w: w})
		}
	}
	r.logf("   %d processes: %d mcp, %d serve, %d cli slots; %d writes each", n, rep.Faces["mcp"], rep.Faces["http"], rep.Faces["cli"], r.o.Writes)

	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := p.w
			switch {
			case p.stdio != nil:
				for i := range r.o.Writes {
					x := r.newWrite(w.name, i)
					res, err := p.stdio.tool("log", logArgs(x, w.session))
					if err != nil || res.Result == nil || res.Result.IsError {
						errorf(toolCode(res), "%s (mcp) write %d: %v %s", w.name, i, err, toolText(res))
						return
					}
					w.ack(x)
					if i%3 == 2 {
						read(w, i, func(q write, session string) ([]byte, error) {
							res, err := p.stdio.tool("retrieve", map[string]any{"query": q.Token, "scopeIds": map[string]string{"sessionId": session}, "maxCandidates": 5})
							if err != nil || res.Result == nil || res.Result.IsError {
								return nil, fmt.Errorf("%v %s", err, toolText(res))
							}
							return res.Result.StructuredContent, nil
						})
					}
				}
			case p.server != nil:
				client := &http.Client{Timeout: time.Minute}
				for i := range r.o.Writes {
					x := r.newWrite(w.name, i)
					body, _ := json.Marshal(logArgs(x, w.session))
					res, err := client.Post(p.server.base+"/v1/observations", "application/json", bytes.NewReader(body))
					if err != nil {
						errorf("transport", "%s (http) write %d: %v", w.name, i, err)
						return
					}
					b := readAll(res)
					if res.StatusCode != http.StatusCreated {
						errorf(httpCode(b), "%s (http) write %d: %d %.200s", w.name, i, res.StatusCode, b)
						return
					}
					w.ack(x)
					if i%3 == 2 {
						read(w, i, func(q write, session string) ([]byte, error) {
							body, _ := json.Marshal(map[string]any{"query": q.Token, "scopeIds": map[string]string{"sessionId": session}, "maxCandidates": 5})
							res, err := client.Post(p.server.base+"/v1/retrieve", "application/json", bytes.NewReader(body))
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
			default:
				for i := range r.o.Writes {
					x := r.newWrite(w.name, i)
					c := r.cmd(db, nil, "--json", "log", "--id", x.ID, "--kind", "message", "--scope", "session="+w.session+",repo=/reliability", "-")
					c.Stdin = strings.NewReader(x.Content)
					var out, errb bytes.Buffer
					c.Stdout, c.Stderr = &out, &errb
					if err := r.start(c); err != nil {
						errorf("start", "%s (cli): %v", w.name, err)
						return
					}
					if err := r.wait(c); err != nil {
						errorf(cliCode(errb.Bytes()), "%s (cli) write %d: %v %.200s", w.name, i, err, errb.String())
						return
					}
					w.ack(x)
					if i%3 == 2 {
						read(w, i, func(q write, session string) ([]byte, error) {
							c := r.cmd(db, nil, "--json", "retrieve", "--scope", "session="+session, "--max-candidates", "5", q.Token)
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
		}()
	}
	wg.Wait()
	for _, p := range procs {
		if p.stdio != nil {
			if err := r.closeStdio(p.stdio); err != nil {
				errorf("exit", "cairn mcp (%s) exited with %v", p.w.name, err)
			}
		}
		if p.server != nil {
			if err := r.stop(p.server); err != nil {
				errorf("exit", "cairn serve (%s) exited with %v", p.w.name, err)
			}
		}
	}
	procs = nil

	eng, err := r.open(db)
	if err != nil {
		return rep, err
	}
	for _, w := range writers {
		for _, x := range w.acked {
			rep.Acknowledged++
			o, err := eng.Observation(ctx, x.ID)
			if err != nil || o.Content != x.Content {
				rep.Lost++
				r.fail("concurrent: acknowledged write %s of %s (%s) is missing or changed: %v", x.ID, w.name, w.face, err)
			}
		}
	}
	bad, _, err := r.doctor(ctx, eng)
	eng.Close()
	if err != nil {
		return rep, err
	}
	if len(bad) > 0 {
		r.fail("concurrent: doctor: %s", strings.Join(bad, "; "))
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
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
