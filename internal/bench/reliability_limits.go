package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// The short limits `cairn serve` runs with in the slow-client part, so
// that each check takes a second or two. No check depends on them being
// met precisely: each waits for the server to close the connection (with
// a safety bound far above them). They are still well above how long a
// loaded machine may keep the suite's own well-behaved requests (the
// normal write, the health checks) waiting for a core, so only the slow
// clients can miss them.
const (
	slowHeaderTimeout = time.Second
	slowReadTimeout   = 1500 * time.Millisecond
	slowWriteTimeout  = 1500 * time.Millisecond
	slowIdleTimeout   = time.Second
	// safety is how long a check waits before calling the server stuck.
	safety = 30 * time.Second
)

// slowClients runs slow and stuck clients against `cairn serve` started
// with short timeouts, and checks that the server cuts each off, keeps
// answering others meanwhile, and writes nothing they sent.
func (r *rel) slowClients(ctx context.Context) ([]Check, error) {
	db := filepath.Join(r.o.Dir, "slow.db")
	seeded, exported, err := r.seedExport(ctx, db)
	if err != nil {
		return nil, err
	}
	// The hash embedder keeps the server's background embedding of the
	// 400 records cheap; CAIRN_LOG=info gives a line per request done.
	s, err := r.startServer(db, []string{"CAIRN_LOG=info", "CAIRN_EMBED_PROVIDER=hash"},
		"--read-header-timeout", slowHeaderTimeout.String(), "--read-timeout", slowReadTimeout.String(),
		"--write-timeout", slowWriteTimeout.String(), "--idle-timeout", slowIdleTimeout.String())
	if err != nil {
		return nil, err
	}
	defer r.stop(s)
	if s.base == "" {
		return nil, memory.Errorf(memory.CodeInternal, "cairn serve ended before listening")
	}
	var checks []Check
	// The well-behaved requests go on a new connection each time: a
	// kept-alive one could meet the server's idle timeout on its way
	// out, which says nothing of the server.
	sr := &slowRun{s: s, addr: strings.TrimPrefix(s.base, "http://"), cl: r.checks("slow clients", 34, &checks),
		fresh: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
	if err := sr.slowloris(); err != nil {
		return nil, err
	}
	sr.bigHeaders()
	sr.trickledBody()
	sr.unreadAnswer(exported)
	sr.idleKeepAlive()

	// Nothing a slow client sent was written; the normal write was.
	sr.cl.add("server healthy after", sr.healthy(), "/healthz answers")
	eng, err := r.open(db)
	if err != nil {
		return checks, err
	}
	st, err := eng.Stats(ctx)
	_, errBody := eng.Observation(ctx, "obs_rel_slow_body")
	eng.Close()
	if err != nil {
		return checks, err
	}
	sr.cl.add("nothing half-sent written", st.Observations == seeded+1 && memory.CodeOf(errBody) == memory.CodeNotFound,
		"%d observations: the %d seeded and the normal write", st.Observations, seeded)
	return checks, nil
}

// seedExport writes about 8 MiB of records to db, more than the sockets
// buffer between client and server, so that an export cannot be written
// ahead of a client that does not read. It returns how many records it
// wrote and the size of their export.
func (r *rel) seedExport(ctx context.Context, db string) (int, int, error) {
	eng, err := cairn.Open(db, &cairn.Options{Embedder: r.emb, SkipEmbedOnWrite: true})
	if err != nil {
		return 0, 0, err
	}
	defer eng.Close()
	var batch []cairn.LogRequest
	filler := strings.Repeat("export filler about deploy pipelines and retries ", 400)
	for i := range 400 {
		batch = append(batch, cairn.LogRequest{Kind: memory.KindMessage, Content: fmt.Sprintf("%d %s", i, filler)})
	}
	if _, err := eng.LogBatch(ctx, batch); err != nil {
		return 0, 0, err
	}
	var full bytes.Buffer
	if _, err := eng.Export(ctx, &full); err != nil {
		return 0, 0, err
	}
	return len(batch), full.Len(), nil
}

// slowRun is the slow-client part's server and checks.
type slowRun struct {
	s     *server
	addr  string
	fresh *http.Client // a new connection per request
	cl    *checkList
}

// healthy reports whether the server answers /healthz.
func (sr *slowRun) healthy() bool {
	res, err := sr.fresh.Get(sr.s.base + "/healthz")
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == 200
}

// slowloris: many connections trickle their headers; meanwhile a normal
// client writes; the server closes every slow one.
func (sr *slowRun) slowloris() error {
	const slow = 64
	var conns []net.Conn
	closed := make(chan time.Duration, slow)
	stop := make(chan struct{})
	for range slow {
		c, err := net.Dial("tcp", sr.addr)
		if err != nil {
			close(stop)
			return err
		}
		conns = append(conns, c)
		t0 := time.Now()
		go trickleBytes(c, "POST /v1/observations HTTP/1.1\r\nHost: localhost\r\n"+strings.Repeat("X-Slow: 1\r\n", 5000), 20*time.Millisecond, stop)
		go func() { io.Copy(io.Discard, c); closed <- time.Since(t0) }()
	}
	okWrite := false
	if res, err := sr.fresh.Post(sr.s.base+"/v1/observations", "application/json",
		strings.NewReader(`{"id":"obs_rel_slow_normal","kind":"message","content":"a normal write while slow clients hold connections"}`)); err == nil {
		okWrite = res.StatusCode == http.StatusCreated
		res.Body.Close()
	}
	var longest time.Duration
	cut := 0
	for range slow {
		select {
		case d := <-closed:
			cut++
			longest = max(longest, d)
		case <-time.After(safety):
		}
	}
	close(stop)
	for _, c := range conns {
		c.Close()
	}
	sr.cl.add("slowloris headers", cut == slow && okWrite && sr.healthy(),
		"%d of %d connections trickling headers closed by the server, the last after %.2f s (header timeout %v); a normal write meanwhile: %v",
		cut, slow, longest.Seconds(), slowHeaderTimeout, okWrite)
	return nil
}

// bigHeaders: headers over the limit.
func (sr *slowRun) bigHeaders() {
	c, err := net.Dial("tcp", sr.addr)
	if err != nil {
		return
	}
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: %s\r\n\r\n", strings.Repeat("b", 128<<10))
	c.SetDeadline(time.Now().Add(safety))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	status := 0
	if err == nil {
		status = res.StatusCode
	}
	c.Close()
	sr.cl.add("headers over 64 KiB", status == http.StatusRequestHeaderFieldsTooLarge, "answer %d (want 431)", status)
}

// trickledBody: a body trickled slowly is cut off by the read timeout,
// not written.
func (sr *slowRun) trickledBody() {
	c, err := net.Dial("tcp", sr.addr)
	if err != nil {
		return
	}
	body := `{"id":"obs_rel_slow_body","kind":"message","content":"a trickled body` + strings.Repeat(".", 4000) + `"}`
	fmt.Fprintf(c, "POST /v1/observations HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	stop := make(chan struct{})
	t0 := time.Now()
	go trickleBytes(c, body, 20*time.Millisecond, stop)
	c.SetReadDeadline(time.Now().Add(safety))
	got, err := io.ReadAll(c)
	took := time.Since(t0)
	close(stop)
	c.Close()
	status := "none"
	if res, perr := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), nil); perr == nil {
		status = res.Status
	}
	timedOut := false
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		timedOut = true
	}
	sr.cl.add("body trickled", !timedOut && (status == "none" || strings.HasPrefix(status, "400")),
		"closed after %.2f s (read timeout %v), answer %s", took.Seconds(), slowReadTimeout, status)
}

// unreadAnswer: a client that never reads its answer (an export of
// exported bytes). The server gives up (its log line for the request
// says the handler is done), and the client finds a cut answer.
func (sr *slowRun) unreadAnswer(exported int) {
	c, err := net.Dial("tcp", sr.addr)
	if err != nil {
		return
	}
	c.(*net.TCPConn).SetReadBuffer(64 << 10)
	t0 := time.Now()
	fmt.Fprintf(c, "GET /v1/export HTTP/1.1\r\nHost: localhost\r\n\r\n")
	done := false
	deadline := time.After(safety)
wait:
	for {
		select {
		case line, ok := <-sr.s.lines:
			if !ok {
				break wait
			}
			if strings.Contains(line, "GET /v1/export") {
				done = true
				break wait
			}
		case <-deadline:
			break wait
		}
	}
	took := time.Since(t0)
	c.SetReadDeadline(time.Now().Add(safety))
	n, _ := io.Copy(io.Discard, c)
	c.Close()
	sr.cl.add("answer never read", done && n < int64(exported),
		"the server gave up after %.2f s (write timeout %v); %.1f of %.1f MiB reached the client",
		took.Seconds(), slowWriteTimeout, float64(n)/(1<<20), float64(exported)/(1<<20))
}

// idleKeepAlive: a kept-alive connection left idle is closed.
func (sr *slowRun) idleKeepAlive() {
	c, err := net.Dial("tcp", sr.addr)
	if err != nil {
		return
	}
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(safety))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	ok := err == nil && res.StatusCode == 200
	if ok {
		io.Copy(io.Discard, res.Body)
	}
	t0 := time.Now()
	_, err = br.ReadByte()
	took := time.Since(t0)
	ne, isNet := err.(net.Error)
	c.Close()
	sr.cl.add("idle keep-alive", ok && err != nil && !(isNet && ne.Timeout()),
		"closed %.2f s after its answer (idle timeout %v)", took.Seconds(), slowIdleTimeout)
}

// trickleBytes writes s one byte at a time with a pause between bytes,
// until done, stopped, or the connection fails. The pauses only make the
// client slow; no check depends on their length.
func trickleBytes(c net.Conn, s string, pause time.Duration, stop <-chan struct{}) {
	for i := range len(s) {
		if _, err := c.Write([]byte{s[i]}); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(pause):
		}
	}
}

// nestedObject is a JSON object n levels deep.
func nestedObject(n int) string {
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// bodies sends oversized and deeply nested bodies to `cairn serve` (the
// HTTP API and MCP at /mcp) and to `cairn mcp` over stdio: each gets a
// typed error, the processes keep serving, and nothing is written.
func (r *rel) bodies(ctx context.Context) ([]Check, error) {
	db := filepath.Join(r.o.Dir, "bodies.db")
	s, err := r.startServer(db, nil)
	if err != nil {
		return nil, err
	}
	defer r.stop(s)
	if s.base == "" {
		return nil, memory.Errorf(memory.CodeInternal, "cairn serve ended before listening")
	}
	var checks []Check
	cl := r.checks("bodies", 40, &checks)
	big := strings.Repeat("x", 9<<20)
	httpBodies(s, cl, big)
	m, err := r.startStdio(db)
	if err != nil {
		return checks, err
	}
	if err := stdioBodies(m, cl, big); err != nil {
		return checks, err
	}
	if err := r.closeStdio(m); err != nil {
		cl.add("cairn mcp exits cleanly", false, "%v", err)
	}

	eng, err := r.open(db)
	if err != nil {
		return checks, err
	}
	defer eng.Close()
	st, err := eng.Stats(ctx)
	if err != nil {
		return checks, err
	}
	ents, err := eng.Entities(ctx, cairn.EntitiesRequest{})
	if err != nil {
		return checks, err
	}
	cl.add("nothing refused was written", st.Observations == 2 && len(ents.Entities) == 0,
		"%d observations (the two normal writes), %d entities", st.Observations, len(ents.Entities))
	return checks, nil
}

// deepArray is a JSON array n levels deep.
func deepArray(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// logCall is a JSON-RPC call of the log tool.
func logCall(id int, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"log","arguments":%s}}`, id, args)
}

// httpBodies sends the bodies to the HTTP API and to MCP at /mcp, then a
// normal write.
func httpBodies(s *server, cl *checkList, big string) {
	post := func(path, body string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, []byte(err.Error())
		}
		return res.StatusCode, readAll(res)
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
	}{
		{"HTTP body of 9 MiB", "/v1/observations", `{"kind":"message","content":"` + big + `"}`, 413},
		{"HTTP provenance 65 levels deep", "/v1/observations", `{"kind":"message","content":"x","provenance":` + nestedObject(65) + `}`, 400},
		{"HTTP provenance 5,000 levels deep", "/v1/observations", `{"kind":"message","content":"x","provenance":` + nestedObject(5000) + `}`, 400},
		{"HTTP body 100,000 levels deep", "/v1/observations", `{"kind":"message","content":"x","scopeIds":` + deepArray(100000) + `}`, 400},
		{"HTTP retrieve query 20,000 levels deep", "/v1/retrieve", `{"query":` + deepArray(20000) + `}`, 400},
		{"HTTP entity data 100 levels deep", "/v1/kg/entities", `{"name":"deep","type":"thing","data":` + nestedObject(100) + `}`, 400},
	} {
		status, b := post(tc.path, tc.body)
		cl.add(tc.name, status == tc.status && httpCode(b) == string(memory.CodeInvalidParams), "%d %s", status, brief(b))
	}
	for _, tc := range []struct {
		name, body string
		status     int
		code       int
	}{
		{"/mcp message 300 levels deep", logCall(1, `{"kind":"message","content":"x","provenance":`+nestedObject(300)+`}`), 400, -32602},
		{"/mcp message 100,000 levels deep", logCall(2, `{"kind":"message","content":"x","scopeIds":`+deepArray(100000)+`}`), 400, -32602},
		{"/mcp body of 9 MiB", logCall(3, `{"kind":"message","content":"`+big+`"}`), 413, 0},
	} {
		status, b := post("/mcp", tc.body)
		var rep rpcReply
		json.Unmarshal(b, &rep)
		ok := status == tc.status
		if tc.code != 0 {
			ok = ok && rep.Error != nil && rep.Error.Code == tc.code
		}
		cl.add(tc.name, ok, "%d %s", status, brief(b))
	}
	status, b := post("/v1/observations", `{"id":"obs_rel_bodies_http","kind":"message","content":"a normal write after the refusals"}`)
	cl.add("HTTP still serving", status == 201, "%d %s", status, brief(b))
}

// stdioBodies sends the bodies to `cairn mcp` over stdio, then a normal
// write.
func stdioBodies(m *stdio, cl *checkList, big string) error {
	for _, tc := range []struct {
		name, line string
		code       int
	}{
		{"stdio message 300 levels deep", logCall(101, `{"kind":"message","content":"x","provenance":`+nestedObject(300)+`}`), -32602},
		{"stdio message 100,000 levels deep", logCall(102, `{"kind":"message","content":"x","scopeIds":`+deepArray(100000)+`}`), -32602},
		{"stdio line of 9 MiB", logCall(103, `{"kind":"message","content":"`+big+`"}`), -32600},
	} {
		if err := m.send(tc.line); err != nil {
			return err
		}
		rep, line, err := m.read()
		cl.add(tc.name, err == nil && rep.Error != nil && rep.Error.Code == tc.code, "%s", brief([]byte(line)))
	}
	res, err := m.tool("log", map[string]any{"kind": "message", "content": "x", "provenance": json.RawMessage(nestedObject(65))})
	cl.add("stdio provenance 65 levels deep", err == nil && res.Result != nil && res.Result.IsError && toolCode(res) == string(memory.CodeInvalidParams), "%s", toolText(res))
	res, err = m.tool("log", map[string]any{"id": "obs_rel_bodies_stdio", "kind": "message", "content": "a normal write after the refusals"})
	cl.add("stdio session still serving", err == nil && res.Result != nil && !res.Result.IsError, "%v %s", err, toolText(res))
	return nil
}

// brief is the start of an answer, for a check's detail.
func brief(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
