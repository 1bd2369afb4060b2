package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
)

// connWatch is an http.Server's ConnState hook that lets a test wait for
// the server to close a connection, instead of sleeping.
type connWatch struct {
	mu     sync.Mutex
	closed map[string]chan struct{} // by the client's address
	active chan string
}

func newConnWatch() *connWatch {
	return &connWatch{closed: map[string]chan struct{}{}, active: make(chan string, 64)}
}

func (w *connWatch) ch(addr string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.closed[addr]
	if !ok {
		c = make(chan struct{})
		w.closed[addr] = c
	}
	return c
}

func (w *connWatch) hook(c net.Conn, s http.ConnState) {
	switch s {
	case http.StateActive:
		select {
		case w.active <- c.RemoteAddr().String():
		default:
		}
	case http.StateClosed, http.StateHijacked:
		close(w.ch(c.RemoteAddr().String()))
	}
}

// waitClosed waits until the server has closed the connection whose local
// end is c. The bound is a safety net for a broken server, far above any
// configured timeout, not a measurement.
func (w *connWatch) waitClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	select {
	case <-w.ch(c.LocalAddr().String()):
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the server kept the connection open", what)
	}
}

// limitedServer serves the API with the given limits through its own
// http.Server (what cairn serve runs), watching its connections.
func limitedServer(t *testing.T, eng *cairn.Engine, opts *httpapi.Options) (*httptest.Server, *connWatch) {
	t.Helper()
	api := httpapi.New(eng, opts)
	ts := httptest.NewUnstartedServer(api)
	ts.Listener = smallBuffers{ts.Listener}
	ts.Config = api.HTTPServer()
	w := newConnWatch()
	ts.Config.ConnState = w.hook
	ts.Start()
	t.Cleanup(ts.Close)
	return ts, w
}

// smallBuffers gives the server's connections a small send buffer, so the
// time a write waits on a slow reader is the time that reader takes to
// read a little, not megabytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(64 << 10)
	}
	return c, err
}

func dial(t *testing.T, ts *httptest.Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// trickle writes s one byte at a time, pausing between bytes, until it is
// written or the connection fails. The pauses make the client slow; no
// assertion depends on their length.
func trickle(c net.Conn, s string, pause time.Duration, stop <-chan struct{}) {
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

// healthy checks that the server answers a well-behaved client, on a new
// connection each time: a kept-alive one could meet the server's idle
// timeout on its way out, which says nothing of the server.
func healthy(t *testing.T, ts *httptest.Server, when string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get(ts.URL + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("%s: /healthz %v %v", when, res, err)
	}
	res.Body.Close()
}

// Slow and stuck clients are cut off by the server's own timeouts, while
// it goes on answering others, and nothing they sent is written: headers
// trickled forever (slowloris), a body trickled slowly, a client that
// never reads its answer, a kept-alive connection left idle, headers over
// the limit.
func TestSlowClientsAreCutOff(t *testing.T) {
	eng := bigEngine(t)
	before := export(t, eng)
	ts, watch := limitedServer(t, eng, &httpapi.Options{
		// Timeouts well above how long a loaded machine may keep the
		// test's own well-behaved requests waiting for a core: a
		// health check must never be cut off as a slow client.
		ReadHeaderTimeout: time.Second, ReadTimeout: 1500 * time.Millisecond,
		WriteTimeout: 1500 * time.Millisecond, IdleTimeout: time.Second, MaxHeaderBytes: 4 << 10,
	})

	t.Run("headers trickled", func(t *testing.T) {
		var conns []net.Conn
		stop := make(chan struct{})
		defer close(stop)
		for range 20 {
			c := dial(t, ts)
			conns = append(conns, c)
			go trickle(c, "POST /v1/observations HTTP/1.1\r\nHost: localhost\r\n"+strings.Repeat("X-Slow: 1\r\n", 1000), 5*time.Millisecond, stop)
		}
		healthy(t, ts, "while 20 clients trickle their headers")
		for _, c := range conns {
			watch.waitClosed(t, c, "headers trickled")
		}
	})

	t.Run("body trickled", func(t *testing.T) {
		c := dial(t, ts)
		body := `{"kind":"message","content":"trickled body that must not be written` + strings.Repeat(".", 2000) + `"}`
		fmt.Fprintf(c, "POST /v1/observations HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		stop := make(chan struct{})
		defer close(stop)
		go trickle(c, body, 5*time.Millisecond, stop)
		watch.waitClosed(t, c, "body trickled")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && res.StatusCode != http.StatusBadRequest {
			t.Errorf("a body cut off by the read timeout got %d; want 400 or no answer", res.StatusCode)
		}
		healthy(t, ts, "after a trickled body")
	})

	t.Run("answer never read", func(t *testing.T) {
		c := dial(t, ts)
		c.(*net.TCPConn).SetReadBuffer(64 << 10)
		fmt.Fprintf(c, "GET /v1/export HTTP/1.1\r\nHost: localhost\r\n\r\n")
		watch.waitClosed(t, c, "answer never read")
		n, _ := io.Copy(io.Discard, c)
		if n >= int64(len(before)) {
			t.Errorf("the whole export (%d bytes) reached a client that never read", n)
		}
		healthy(t, ts, "after a client that never read")
	})

	t.Run("idle keep-alive", func(t *testing.T) {
		c := dial(t, ts)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("first request: %v %v", res, err)
		}
		io.Copy(io.Discard, res.Body)
		watch.waitClosed(t, c, "idle keep-alive")
		if _, err := br.ReadByte(); err == nil {
			t.Error("the idle connection was closed yet delivered more data")
		}
	})

	t.Run("headers over the limit", func(t *testing.T) {
		c := dial(t, ts)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: %s\r\n\r\n", strings.Repeat("b", 16<<10))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("headers over the limit: %v %v; want 431", res, err)
		}
	})

	if export(t, eng) != before {
		t.Fatal("a slow client's request changed the database")
	}
	healthy(t, ts, "at the end")
}

// A large export outlasts WriteTimeout as long as the client reads: the
// deadline applies to each write.
func TestExportOutlastsWriteTimeout(t *testing.T) {
	eng := bigEngine(t)
	want := export(t, eng)
	const timeout = time.Second
	ts, _ := limitedServer(t, eng, &httpapi.Options{WriteTimeout: timeout})
	c := dial(t, ts)
	c.(*net.TCPConn).SetReadBuffer(64 << 10)
	fmt.Fprintf(c, "GET /v1/export HTTP/1.1\r\nHost: localhost\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("export: %v %v", res, err)
	}
	// Read in small pieces with pauses: the answer, larger than the
	// sockets' buffers, takes well over the write timeout to arrive, and
	// must still arrive whole.
	var got strings.Builder
	start := time.Now()
	buf := make([]byte, 16<<10)
	for {
		n, err := res.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
		time.Sleep(4 * time.Millisecond)
	}
	if got.String() != want {
		t.Fatalf("export read slowly: %d of %d bytes", got.Len(), len(want))
	}
	if took := time.Since(start); took < timeout {
		t.Logf("the export took %v, less than the write timeout: this run did not test the per-write deadline", took)
	}
}

// bigEngine holds about 8 MiB of records, more than the sockets between a
// client and the server buffer, so an export cannot be written ahead of a
// client that does not read.
func bigEngine(t *testing.T) *cairn.Engine {
	t.Helper()
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "big.db"), &cairn.Options{SkipEmbedOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	var batch []cairn.LogRequest
	chunk := strings.Repeat("export filler about deploy pipelines and retries ", 400)
	for i := range 400 {
		batch = append(batch, cairn.LogRequest{Kind: "message", Content: fmt.Sprintf("%d %s", i, chunk)})
	}
	if _, err := eng.LogBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	return eng
}

// Deeply nested bodies are invalid_params (400) with a message that says
// so, on every route that takes free-form JSON, and write nothing; a
// body at the nesting limit is accepted.
func TestDeepBodies(t *testing.T) {
	srv, eng := newServer(t, nil)
	before := export(t, eng)
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/observations", `{"kind":"message","content":"x","provenance":` + deep(65) + `}`, "provenance nests 65 levels deep"},
		{"/v1/observations", `{"kind":"message","content":"x","provenance":` + deep(9000) + `}`, "provenance nests 9000 levels deep"},
		{"/v1/observations", `{"kind":"message","content":"x","provenance":` + deep(20000) + `}`, "nested too deeply"},
		{"/v1/observations", `{"kind":"message","content":"x","scopeIds":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`, "scopeIds"},
		{"/v1/retrieve", `{"query":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, "nested too deeply"},
		{"/v1/kg/entities", `{"name":"deep","type":"thing","data":` + deep(100) + `}`, "data nests 100 levels deep"},
	} {
		r := do(t, srv, "POST", tc.path, tc.body)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		json.Unmarshal(r.body, &e)
		if r.status != 400 || e.Error.Code != "invalid_params" || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s %.60s…: %d %s; want 400 invalid_params saying %q", tc.path, tc.body, r.status, r.body, tc.want)
		}
	}
	if export(t, eng) != before {
		t.Fatal("a refused body changed the database")
	}
	if r := do(t, srv, "POST", "/v1/observations", `{"kind":"message","content":"x","provenance":`+deep(64)+`}`); r.status != 201 {
		t.Fatalf("provenance at the limit: %d %s", r.status, r.body)
	}
}
