package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/memory"
)

var ctx = context.Background()

func newEngine(t testing.TB) *cairn.Engine {
	t.Helper()
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

func newServer(t testing.TB, opts *httpapi.Options) (*httptest.Server, *cairn.Engine) {
	t.Helper()
	eng := newEngine(t)
	srv := httptest.NewServer(httpapi.New(eng, opts))
	t.Cleanup(srv.Close)
	return srv, eng
}

type reply struct {
	status int
	body   []byte
}

func (r reply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

func (r reply) code() string {
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func do(t *testing.T, srv *httptest.Server, method, path, body string, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, b}
}

func export(t *testing.T, eng *cairn.Engine) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := eng.Export(ctx, &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Every tool's route answers with the same JSON the engine's tool call
// gives (which is also what the MCP tool returns).
func TestRoutesMatchTools(t *testing.T) {
	srv, eng := newServer(t, nil)
	var c memory.Capsule
	r := do(t, srv, "POST", "/v1/capsules", `{"scopeIds":{"sessionId":"s1","repoId":"/r"},"intent":"fix"}`)
	if r.status != 201 {
		t.Fatalf("open capsule: %d %s", r.status, r.body)
	}
	r.decode(t, &c)
	var o memory.Observation
	r = do(t, srv, "POST", "/v1/observations", `{"kind":"error","content":"checkout failed: session expired","scopeIds":{"sessionId":"s1"}}`)
	if r.status != 201 {
		t.Fatalf("log: %d %s", r.status, r.body)
	}
	r.decode(t, &o)
	if o.Scope.RepoID != "/r" {
		t.Fatalf("logged %+v", o)
	}
	r = do(t, srv, "PUT", "/v1/capsules/"+c.ID+"/summary", `{"content":"running summary","confidence":0.5}`)
	var s memory.Summary
	r.decode(t, &s)
	if r.status != 200 || s.CapsuleID != c.ID {
		t.Fatalf("summary: %d %s", r.status, r.body)
	}
	var p memory.Pin
	r = do(t, srv, "POST", "/v1/pins", fmt.Sprintf(`{"targetId":%q,"reason":"why"}`, o.ID))
	r.decode(t, &p)
	if r.status != 201 || p.TargetID != o.ID {
		t.Fatalf("pin: %d %s", r.status, r.body)
	}
	for _, tc := range []struct {
		tool, method, path, body string
	}{
		{"retrieve", "POST", "/v1/retrieve", `{"query":"session expired","scopeIds":{"repoId":"/r"}}`},
		{"capsule_get", "GET", "/v1/capsules/" + c.ID, ``},
		{"observation_get", "GET", "/v1/observations/" + o.ID, ``},
		{"summary_get", "GET", "/v1/summaries/" + s.ID, ``},
		{"pin_get", "GET", "/v1/pins/" + p.ID, ``},
		{"status", "GET", "/v1/status", ``},
		{"doctor", "POST", "/v1/doctor", `{}`},
	} {
		r := do(t, srv, tc.method, tc.path, tc.body)
		args := tc.body
		if args == "" {
			args = "{}"
		}
		switch tc.tool {
		case "capsule_get":
			args = fmt.Sprintf(`{"capsuleId":%q}`, c.ID)
		case "observation_get":
			args = fmt.Sprintf(`{"observationId":%q}`, o.ID)
		case "summary_get":
			args = fmt.Sprintf(`{"summaryId":%q}`, s.ID)
		case "pin_get":
			args = fmt.Sprintf(`{"pinId":%q}`, p.ID)
		}
		// The same call as a network caller's (which sees no paths).
		want, err := eng.CallJSON(cairn.ForRemoteCaller(ctx), tc.tool, []byte(args))
		if err != nil {
			t.Fatal(err)
		}
		wb, _ := json.Marshal(want)
		if r.status != 200 || string(bytes.TrimSpace(r.body)) != string(wb) {
			t.Errorf("%s %s: %d\n got  %s\n want %s", tc.method, tc.path, r.status, r.body, wb)
		}
	}
	r = do(t, srv, "DELETE", "/v1/pins/"+p.ID, ``)
	if r.status != 200 || !strings.Contains(string(r.body), p.ID) {
		t.Fatalf("unpin: %d %s", r.status, r.body)
	}
	r = do(t, srv, "POST", "/v1/observations/"+o.ID+"/forget", ``)
	r.decode(t, &o)
	if r.status != 200 || !o.Redacted {
		t.Fatalf("forget: %d %s", r.status, r.body)
	}
	var closed cairn.CloseCapsuleResult
	r = do(t, srv, "POST", "/v1/capsules/"+c.ID+"/close", `{"summary":{"content":"done"}}`)
	r.decode(t, &closed)
	if r.status != 200 || closed.Capsule.Status != memory.CapsuleClosed || closed.Summary.ID != s.ID {
		t.Fatalf("close: %d %s", r.status, r.body)
	}
	var tools struct {
		Tools []struct{ Name, Method, Path string }
	}
	do(t, srv, "GET", "/v1/tools", "").decode(t, &tools)
	if len(tools.Tools) != len(cairn.Tools()) {
		t.Fatalf("tools %+v", tools)
	}
}

func TestErrorsCarryCodes(t *testing.T) {
	srv, eng := newServer(t, nil)
	do(t, srv, "POST", "/v1/capsules", `{"scopeIds":{"sessionId":"s1"},"id":"c1"}`)
	before := export(t, eng)
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/retrieve", `{"query":""}`, 400, "invalid_params"},
		{"POST", "/v1/retrieve", `{"query":"x","scopeIds":{"team":"a"}}`, 400, "invalid_params"},
		{"POST", "/v1/retrieve", `{"query":"x","maxCandidates":"ten"}`, 400, "invalid_params"},
		{"POST", "/v1/retrieve", `{"query":"x"} {"again":1}`, 400, "invalid_params"},
		{"POST", "/v1/retrieve", `not json`, 400, "invalid_params"},
		{"POST", "/v1/retrieve", `[1,2]`, 400, "invalid_params"},
		{"POST", "/v1/retrieve", `{"query":"C++","syntax":"fts"}`, 400, "invalid_params"},
		{"POST", "/v1/observations", `{"kind":"message","content":"x","extra":true}`, 400, "invalid_params"},
		{"POST", "/v1/observations", `{"kind":"message","content":"a\u0000b"}`, 400, "invalid_params"},
		{"POST", "/v1/pins", `{"targetId":"nope"}`, 404, "not_found"},
		{"GET", "/v1/capsules/nope", ``, 404, "not_found"},
		{"GET", "/v1/pins/nope", ``, 404, "not_found"},
		{"POST", "/v1/capsules", `{"scopeIds":{"sessionId":"s1"}}`, 409, "conflict"},
		{"POST", "/v1/capsules/c1/close", `{"capsuleId":"c2"}`, 400, "invalid_params"},
		{"POST", "/v1/capsules/c1/close", `{"summary":{"content":"s","confidence":7}}`, 400, "invalid_params"},
		{"GET", "/v1/nothing", ``, 404, "not_found"},
		{"GET", "/v1/retrieve", ``, 404, "not_found"},
	} {
		r := do(t, srv, tc.method, tc.path, tc.body)
		if r.status != tc.status || r.code() != tc.code {
			t.Errorf("%s %s %s: %d %s; want %d %s", tc.method, tc.path, tc.body, r.status, r.body, tc.status, tc.code)
		}
		if strings.Contains(string(r.body), "SQL") || strings.Contains(string(r.body), "sqlite") {
			t.Errorf("%s %s: error leaks internals: %s", tc.method, tc.path, r.body)
		}
	}
	if export(t, eng) != before {
		t.Fatal("refused requests changed the database")
	}
}

func TestTokenRequiredAndConstantTime(t *testing.T) {
	srv, eng := newServer(t, &httpapi.Options{Token: "s3cret-token"})
	before := export(t, eng)
	body := `{"kind":"message","content":"should not be written"}`
	for _, hdr := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "s3cret-token"}, {"Authorization", "Bearer s3cret-token2"}, {"Authorization", "Basic czNjcmV0LXRva2Vu"}} {
		r := do(t, srv, "POST", "/v1/observations", body, hdr...)
		if r.status != 401 || r.code() != "unauthorized" {
			t.Errorf("header %v: %d %s; want 401", hdr, r.status, r.body)
		}
	}
	for _, path := range []string{"/v1/status", "/metrics", "/v1/export", "/mcp"} {
		if r := do(t, srv, "GET", path, ""); r.status != 401 {
			t.Errorf("GET %s without a token: %d", path, r.status)
		}
	}
	if export(t, eng) != before {
		t.Fatal("an unauthorised request changed the database")
	}
	if r := do(t, srv, "GET", "/healthz", ""); r.status != 200 {
		t.Errorf("healthz needs no token: %d", r.status)
	}
	if r := do(t, srv, "POST", "/v1/observations", body, "Authorization", "Bearer s3cret-token"); r.status != 201 {
		t.Fatalf("with the token: %d %s", r.status, r.body)
	}
}

func TestBodyLimit(t *testing.T) {
	srv, eng := newServer(t, &httpapi.Options{MaxBodyBytes: 1024})
	before := export(t, eng)
	big := fmt.Sprintf(`{"kind":"message","content":%q}`, strings.Repeat("x", 2000))
	r := do(t, srv, "POST", "/v1/observations", big)
	if r.status != 413 || r.code() != "invalid_params" {
		t.Fatalf("oversized body: %d %s", r.status, r.body)
	}
	if export(t, eng) != before {
		t.Fatal("an oversized request changed the database")
	}
}

func TestHostAndOriginChecks(t *testing.T) {
	srv, _ := newServer(t, &httpapi.Options{LoopbackOnly: true})
	if r := do(t, srv, "GET", "/v1/status", "", "Host", "attacker.example"); r.status != 403 {
		t.Errorf("rebinding host: %d", r.status)
	}
	for _, h := range []string{"localhost:4747", "127.0.0.1", "[::1]:80"} {
		if r := do(t, srv, "GET", "/v1/status", "", "Host", h); r.status != 200 {
			t.Errorf("host %s: %d", h, r.status)
		}
	}
	r := do(t, srv, "POST", "/v1/observations", `{"kind":"message","content":"csrf"}`, "Origin", "https://attacker.example", "Sec-Fetch-Site", "cross-site")
	if r.status != 403 {
		t.Errorf("cross-origin write: %d %s", r.status, r.body)
	}
}

func TestMetrics(t *testing.T) {
	srv, _ := newServer(t, nil)
	do(t, srv, "POST", "/v1/observations", `{"kind":"message","content":"one"}`)
	do(t, srv, "POST", "/v1/retrieve", `{"query":"one"}`)
	do(t, srv, "POST", "/v1/retrieve", `{"query":""}`)
	text := string(do(t, srv, "GET", "/metrics", "").body)
	for _, want := range []string{
		`cairn_http_requests_total{route="POST /v1/retrieve",code="200"} 1`,
		`cairn_http_requests_total{route="POST /v1/retrieve",code="400"} 1`,
		`cairn_http_requests_total{route="POST /v1/observations",code="201"} 1`,
		`cairn_http_request_seconds_count{route="POST /v1/retrieve"} 2`,
		`cairn_store_rows{kind="observations"} 1`,
		`cairn_store_rows{kind="observations_indexed"} 1`,
		"# TYPE cairn_store_bytes gauge",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// A server's background healing shows in /metrics: records a killed
// process left without vectors are counted as they are embedded.
func TestMetricsCountHealing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	w, err := cairn.Open(path, &cairn.Options{SkipEmbedOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"one", "two", "three"} {
		if _, err := w.Log(context.Background(), cairn.LogRequest{Kind: memory.KindMessage, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	eng, err := cairn.Open(path, &cairn.Options{HealEmbeddings: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv := httptest.NewServer(httpapi.New(eng, nil))
	t.Cleanup(srv.Close)
	// The first pass runs at open; wait for it to be reported.
	for deadline := time.Now().Add(2 * time.Minute); eng.Healing().Passes == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the healer reported no pass")
		}
	}
	text := string(do(t, srv, "GET", "/metrics", "").body)
	for _, want := range []string{
		"# TYPE cairn_embeddings_healed_total counter", "cairn_embeddings_healed_total 3",
		"cairn_embeddings_heal_failures_total 0", "# TYPE cairn_embeddings_pending gauge", "cairn_embeddings_pending 0",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestImportExport(t *testing.T) {
	srv, _ := newServer(t, nil)
	lines := "{\"kind\":\"message\",\"content\":\"a\"}\n{\"kind\":\"command\",\"content\":\"b\"}\n"
	r := do(t, srv, "POST", "/v1/import", lines)
	var rep cairn.ImportReport
	r.decode(t, &rep)
	if r.status != 200 || rep.Observations != 2 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	r = do(t, srv, "POST", "/v1/import", lines+"{\"kind\":\"nope\",\"content\":\"c\"}\n")
	if r.status != 400 || !strings.Contains(string(r.body), "line 3") {
		t.Fatalf("bad import: %d %s", r.status, r.body)
	}
	r = do(t, srv, "GET", "/v1/export", "")
	if r.status != 200 || strings.Count(string(r.body), "\n") != 2 {
		t.Fatalf("export: %d %s", r.status, r.body)
	}
}

// A client that sends its headers too slowly is cut off; the server goes
// on serving.
func TestSlowClientIsCutOff(t *testing.T) {
	eng := newEngine(t)
	api := httpapi.New(eng, &httpapi.Options{ReadHeaderTimeout: time.Second})
	hs := api.HTTPServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	defer hs.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/retrieve HTTP/1.1\r\nHost: localhost\r\n") // and then nothing
	// The deadline is a safety net for a broken server, far above the
	// configured timeout, not a measurement.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadAll(conn); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("the server kept a slow client's connection open")
		}
	}
	res, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("after a slow client: %v %v", res, err)
	}
}

// A client that gives up mid-call leaves nothing half-written and the
// server serving.
func TestClientDisconnect(t *testing.T) {
	eng := newEngine(t)
	srv, watch := limitedServer(t, eng, nil)
	var lines strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&lines, "{\"kind\":\"message\",\"content\":\"bulk line %d about deploys\"}\n", i)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(cctx, "POST", srv.URL+"/v1/import", strings.NewReader(lines.String()))
	done := make(chan struct{})
	go func() {
		if res, err := srv.Client().Do(req); err == nil {
			res.Body.Close()
		}
		close(done)
	}()
	// Give up once the server is reading the request, then wait for the
	// server to be done with the connection.
	addr := <-watch.active
	cancel()
	<-done
	select {
	case <-watch.ch(addr):
	case <-time.After(30 * time.Second):
		t.Fatal("the server kept the abandoned connection")
	}
	st, err := eng.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Observations != 0 && st.Observations != 5000 {
		t.Fatalf("%d observations: an interrupted import was half-written", st.Observations)
	}
	if r := do(t, srv, "GET", "/v1/status", ""); r.status != 200 {
		t.Fatalf("after a disconnect: %d", r.status)
	}
}

// Shutdown lets a write in flight finish.
func TestShutdownFinishesWritesInFlight(t *testing.T) {
	eng := newEngine(t)
	srv, watch := limitedServer(t, eng, nil)
	hs := srv.Config
	var lines strings.Builder
	for i := range 30000 {
		fmt.Fprintf(&lines, "{\"kind\":\"message\",\"content\":\"observation %d of a large import\"}\n", i)
	}
	done := make(chan int, 1)
	go func() {
		res, err := http.Post(srv.URL+"/v1/import", "application/x-ndjson", strings.NewReader(lines.String()))
		if err != nil {
			done <- -1
			return
		}
		res.Body.Close()
		done <- res.StatusCode
	}()
	<-watch.active // the request is being read
	// Shutdown waits for the import (about 10 s on an idle machine, far
	// longer on a loaded one); the bound is a safety net for a shutdown
	// that never ends, not a measurement.
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 200 {
		t.Fatalf("the write in flight got %d", code)
	}
	st, _ := eng.Stats(ctx)
	if st.Observations != 30000 {
		t.Fatalf("%d observations after shutdown; want 30000", st.Observations)
	}
}

// Wrong bearer tokens are throttled per client: past ten a minute the
// client gets 429 with Retry-After, even with the right token, and other
// clients are not locked out. The scheme's name is case-insensitive.
func TestTokenThrottleAndSchemeCase(t *testing.T) {
	eng := newEngine(t)
	api := httpapi.New(eng, &httpapi.Options{Token: "s3cret-token"})
	call := func(remote, auth string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "http://127.0.0.1/v1/status", nil)
		r.RemoteAddr = remote
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		return w
	}
	for _, auth := range []string{"bearer s3cret-token", "BEARER s3cret-token", "Bearer  s3cret-token"} {
		if w := call("192.0.2.1:1000", auth); w.Code != 200 {
			t.Errorf("%q: %d %s", auth, w.Code, w.Body)
		}
	}
	for i := range 10 {
		if w := call("192.0.2.7:1000", "Bearer guess"); w.Code != 401 {
			t.Fatalf("wrong token %d: %d, want 401", i, w.Code)
		}
	}
	w := call("192.0.2.7:2000", "Bearer s3cret-token")
	if w.Code != 429 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "rate_limited") {
		t.Fatalf("after ten wrong tokens: %d %q %s, want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if w := call("192.0.2.8:1000", "Bearer s3cret-token"); w.Code != 200 {
		t.Fatalf("another client after the guesser was throttled: %d", w.Code)
	}
}

// A creating route retried with the same Idempotency-Key returns the first
// result and records nothing twice; a route that takes no key says so.
func TestIdempotencyKeyHeader(t *testing.T) {
	srv, eng := newServer(t, nil)
	body := `{"kind":"message","content":"written once"}`
	first := do(t, srv, "POST", "/v1/observations", body, "Idempotency-Key", "req-7")
	var o1, o2 memory.Observation
	first.decode(t, &o1)
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	before := export(t, eng)
	second := do(t, srv, "POST", "/v1/observations", body, "Idempotency-Key", "req-7")
	second.decode(t, &o2)
	if second.status != 201 || o2.ID != o1.ID {
		t.Fatalf("retry: %d %s; want the first result %s", second.status, second.body, o1.ID)
	}
	if export(t, eng) != before {
		t.Fatal("the retry wrote again")
	}
	if r := do(t, srv, "POST", "/v1/observations", `{"kind":"message","content":"other"}`, "Idempotency-Key", "req-7"); r.status != 409 || r.code() != "conflict" {
		t.Fatalf("the key with another body: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/v1/observations", `{"kind":"message","content":"x","idempotencyKey":"a"}`, "Idempotency-Key", "b"); r.status != 400 {
		t.Fatalf("header and body disagree: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/v1/code/proposals", `{}`, "Idempotency-Key", "k"); r.status != 400 || !strings.Contains(string(r.body), "takes no Idempotency-Key") {
		t.Fatalf("a route without keys: %d %s", r.status, r.body)
	}
	if export(t, eng) != before {
		t.Fatal("refused requests changed the database")
	}
}
