package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/httpstatus"
	"github.com/cairnhq/cairn/internal/metrics"
	"github.com/cairnhq/cairn/internal/text"
	"github.com/cairnhq/cairn/internal/throttle"
	"github.com/cairnhq/cairn/memory"
)

// Options configure an API. The zero value serves without a token.
type Options struct {
	// Token, when set, must come with every request except /healthz as
	// "Authorization: Bearer <token>".
	Token string
	// LoopbackOnly rejects requests whose Host is not a loopback name
	// (DNS-rebinding protection for a server bound to 127.0.0.1).
	LoopbackOnly bool
	// MaxBodyBytes bounds a request body (default 8 MiB); MaxImportBytes
	// bounds POST /v1/import (default 256 MiB).
	MaxBodyBytes, MaxImportBytes int64
	// MaxImports bounds the imports (POST /v1/import) running at once
	// (default DefaultMaxImports); one past it is answered 503, code
	// "busy", with Retry-After, without its body being read.
	MaxImports int
	// RequestTimeout bounds one /v1 request (default 30s).
	RequestTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers (default 5s) and
	// ReadTimeout the whole request, body included (default 60s), so slow
	// clients cannot hold connections; WriteTimeout bounds writing a
	// response (default 90s; GET /v1/export, which may stream for longer,
	// gets WriteTimeout for each write instead, so a client that stops
	// reading is still cut off); IdleTimeout bounds how long a kept-alive
	// connection waits for its next request (default 2m).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (default 64 KiB; over it
	// the answer is 431).
	MaxHeaderBytes int
	// Logger receives one line per request (never memory content).
	Logger *slog.Logger
	// Metrics receives request counts and latencies; the API adds store
	// and index size gauges. Default: a new registry.
	Metrics *metrics.Registry
	// Page, when set, serves every path no other route claims (the web
	// page), behind the host check and the cross-origin protection but
	// not the bearer token: a browser cannot send one, so the page asks
	// for the token itself (a login form checked with CheckToken) and
	// keeps the visitor's session in a cookie. Unset, such paths are
	// not_found.
	Page http.Handler
}

// API is the HTTP face of an Engine.
type API struct {
	eng     *cairn.Engine
	opts    Options
	mux     *http.ServeMux
	handler http.Handler

	cop  *http.CrossOriginProtection
	want [sha256.Size]byte
	// failures counts wrong bearer tokens per client: past
	// maxTokenFailures a minute, the client gets 429.
	failures *throttle.Failures

	requests *metrics.CounterVec
	latency  *metrics.HistogramVec

	statsMu   sync.Mutex
	statsAt   time.Time
	lastStats memory.Stats

	// imports holds a token for each import running (MaxImports).
	imports chan struct{}
	// importing, when set, is called once an import holds its slot and
	// before it reads its body (tests).
	importing func()
}

// DefaultMaxImports is how many imports run at once by default: an
// import is one write transaction as long as its body, and the database
// takes one write transaction at a time.
const DefaultMaxImports = 1

// importRetryAfter is the Retry-After of an import refused as busy, in
// seconds.
const importRetryAfter = "5"

// New returns the API over eng.
func New(eng *cairn.Engine, opts *Options) *API {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 8 << 20
	}
	if o.MaxImportBytes <= 0 {
		o.MaxImportBytes = 256 << 20
	}
	if o.MaxImports <= 0 {
		o.MaxImports = DefaultMaxImports
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = 5 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 60 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 90 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = metrics.New()
	}
	a := &API{eng: eng, opts: o, mux: http.NewServeMux(), imports: make(chan struct{}, o.MaxImports)}
	a.requests = o.Metrics.Counter("cairn_http_requests_total", "HTTP requests by route and status code.", "route", "code")
	a.latency = o.Metrics.Histogram("cairn_http_request_seconds", "HTTP request latency in seconds by route.", metrics.DefaultBuckets, "route")
	o.Metrics.GaugeFunc("cairn_store_rows", "Rows in the store by kind of record.", a.rowSamples, "kind")
	o.Metrics.GaugeFunc("cairn_store_bytes", "Size of the database file in bytes.", a.sizeSamples)
	o.Metrics.GaugeFunc("cairn_code_etv_cache_lookups", "Code memory verification cache lookups since start, by result (hit or miss).", a.etvSamples, "result")
	o.Metrics.CounterFunc("cairn_embeddings_healed_total", "Pending records this process embedded in the background since start.", a.healSamples(func(h cairn.HealStatus) int64 { return h.Healed }))
	o.Metrics.CounterFunc("cairn_embeddings_heal_failures_total", "Background embedding passes that failed (the embedder or the store), since start.", a.healSamples(func(h cairn.HealStatus) int64 { return h.Failures }))
	o.Metrics.GaugeFunc("cairn_embeddings_pending", "Records waiting for a vector of the active embedder after the last background pass.", a.healSamples(func(h cairn.HealStatus) int64 { return int64(h.Pending) }))
	a.innerVoiceMetrics(o.Metrics)
	a.codeJobMetrics(o.Metrics)
	o.Metrics.CounterFunc("cairn_retrieve_degraded_total", "Retrievals answered without a signal the provider normally uses, by reason (embedder_unavailable: ranked by words and recency alone).", a.degradedSamples, "reason")

	a.cop = http.NewCrossOriginProtection()
	a.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeErrorStatus(w, http.StatusForbidden, "forbidden", "cross-origin request refused")
	}))
	a.want = sha256.Sum256([]byte(o.Token))
	a.failures = throttle.New(maxTokenFailures, time.Minute, nil)
	for _, t := range cairn.Tools() {
		a.Mount(t.Method+" "+t.Path, a.toolHandler(t))
	}
	a.Mount("GET /v1/tools", http.HandlerFunc(a.listTools))
	a.Mount("GET /v1/export", http.HandlerFunc(a.export))
	a.Mount("POST /v1/import", http.HandlerFunc(a.importRecords))
	a.mux.Handle("GET /healthz", a.cop.Handler(http.HandlerFunc(a.health)))
	a.Mount("GET /metrics", http.HandlerFunc(a.metricsText))
	a.Mount("/v1/", http.HandlerFunc(a.noRoute))
	if o.Page != nil {
		a.mux.Handle("/", a.cop.Handler(o.Page))
	} else {
		a.Mount("/", http.HandlerFunc(a.noRoute))
	}
	a.handler = a.guard(a.mux)
	return a
}

func (a *API) noRoute(w http.ResponseWriter, r *http.Request) {
	writeError(w, memory.Errorf(memory.CodeNotFound, "no route %s %s (see GET /v1/tools)", r.Method, r.URL.Path))
}

// Mount serves h at pattern behind the API's guards (token, host check,
// cross-origin protection, metrics).
func (a *API) Mount(pattern string, h http.Handler) {
	a.mux.Handle(pattern, a.authorized(a.cop.Handler(h)))
}

// TokenRequired says requests must carry the token.
func (a *API) TokenRequired() bool { return a.opts.Token != "" }

// CheckToken reports, in constant time, whether got is the API's token
// (always true when none is set).
func (a *API) CheckToken(got string) bool {
	if a.opts.Token == "" {
		return true
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], a.want[:]) == 1
}

// authorized demands the bearer token, when one is set.
func (a *API) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.opts.Token != "" {
			client := throttle.Client(r)
			if !a.failures.Allow(client) {
				w.Header().Set("Retry-After", strconv.Itoa(int(a.failures.RetryAfter(client).Seconds())))
				writeErrorStatus(w, http.StatusTooManyRequests, "rate_limited", "too many wrong bearer tokens from this address in the last minute: wait and try again")
				return
			}
			got, ok := bearer(r.Header.Get("Authorization"))
			if !ok || !a.CheckToken(got) {
				a.failures.Fail(client)
				w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
				writeErrorStatus(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// maxTokenFailures is how many wrong bearer tokens a client may send in
// a minute before it is answered 429.
const maxTokenFailures = 10

// bearer reads the token of an Authorization header's Bearer scheme, whose
// name is case-insensitive (RFC 7235).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(token, " "), true
}

// HTTPServer returns an http.Server for the API with its timeouts and
// header limit set. Shutdown on it lets requests in flight finish.
func (a *API) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           a,
		ReadHeaderTimeout: a.opts.ReadHeaderTimeout,
		ReadTimeout:       a.opts.ReadTimeout,
		WriteTimeout:      a.opts.WriteTimeout,
		IdleTimeout:       a.opts.IdleTimeout,
		MaxHeaderBytes:    a.opts.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(a.opts.Logger.Handler(), slog.LevelWarn),
	}
}

// ServeHTTP implements http.Handler.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.handler.ServeHTTP(w, r) }

// statusRecorder remembers the status code written.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// guard applies, in order: metrics and logging, the host check; each
// route then applies the token (Mount) and cross-origin protection.
func (a *API) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			route := r.Pattern
			switch {
			case route == "/" && a.opts.Page != nil:
				route = "page"
			case route == "" || route == "/" || route == "/v1/":
				route = "unmatched"
			}
			code := strconv.Itoa(rec.code)
			a.requests.Inc(route, code)
			a.latency.Observe(time.Since(start).Seconds(), route)
			a.opts.Logger.Info("http request", "method", r.Method, "route", route, "code", rec.code,
				"ms", float64(time.Since(start).Microseconds())/1000)
		}()
		// No answer of this server is to be read as another type than
		// it says (exports and /metrics included; the page sets its own).
		w.Header().Set("X-Content-Type-Options", "nosniff")
		r = r.WithContext(cairn.ForRemoteCaller(r.Context()))
		if a.opts.LoopbackOnly && !loopbackHost(r.Host) {
			writeErrorStatus(rec, http.StatusForbidden, "forbidden", "this server only answers requests addressed to localhost")
			return
		}
		next.ServeHTTP(rec, r)
	})
}

// loopbackHost reports whether a Host header names this machine's loopback.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var pathParam = regexp.MustCompile(`\{(\w+)\}`)

// toolHandler serves one tool: the JSON body, with the path's parameters
// added as fields, is decoded by the tool and run by the engine.
func (a *API) toolHandler(t cairn.Tool) http.Handler {
	var params []string
	for _, m := range pathParam.FindAllStringSubmatch(t.Path, -1) {
		params = append(params, m[1])
	}
	fields := queryFields(t.In)
	success := http.StatusOK
	if t.Creates {
		success = http.StatusCreated
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), a.opts.RequestTimeout)
		defer cancel()
		body, err := readBody(w, r, a.opts.MaxBodyBytes)
		if err != nil {
			writeError(w, err)
			return
		}
		args, err := withPathParams(body, r, params)
		if err == nil && t.Creates {
			args, err = withIdempotencyKey(args, r, t)
		}
		if err == nil && r.URL.RawQuery != "" {
			if t.Method != http.MethodGet {
				err = memory.Errorf(memory.CodeInvalidParams, "query parameters are read on GET routes only; send %s arguments as a JSON body", t.Method)
			} else {
				args, err = withQuery(args, r.URL.Query(), fields)
			}
		}
		if err != nil {
			writeError(w, err)
			return
		}
		in, err := t.Decode(args)
		if err != nil {
			writeError(w, err)
			return
		}
		out, err := a.eng.Call(ctx, t, in)
		if err != nil {
			a.logFailure(t.Name, err)
			writeError(w, err)
			return
		}
		writeJSON(w, success, out)
	})
}

// logFailure logs a failed call for the operator: internal and database
// failures with their whole cause at error level; an unavailable embedder
// at warn level with the caller's message, and its cause (the embedder's
// address, the transport's error) at debug level only.
func (a *API) logFailure(tool string, err error) {
	switch memory.CodeOf(err) {
	case memory.CodeInternal, memory.CodeDBError:
		a.opts.Logger.Error("tool failed", "tool", tool, "err", memory.Detail(err))
	case memory.CodeEmbedderUnavailable:
		a.opts.Logger.Warn("tool failed", "tool", tool, "err", memory.Public(err).Message)
		a.opts.Logger.Debug("embedder failure", "tool", tool, "detail", memory.Detail(err))
	}
}

// readBody reads a request body within limit; over it is invalid_params
// (HTTP 413).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, &tooLarge{limit: limit}
	case err != nil:
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "reading the request body failed")
	}
	return b, nil
}

// tooLarge is the error of an oversized body.
type tooLarge struct{ limit int64 }

func (e *tooLarge) Error() string {
	return "invalid_params: request body over " + strconv.FormatInt(e.limit, 10) + " bytes"
}

// withPathParams adds the route's path values to the JSON body object. A
// body field that contradicts the path is invalid_params.
func withPathParams(body []byte, r *http.Request, params []string) ([]byte, error) {
	fields := map[string]string{}
	for _, p := range params {
		fields[p] = r.PathValue(p)
	}
	return withFields(body, fields, "the path")
}

// withIdempotencyKey adds the Idempotency-Key header, when sent, to the
// arguments of a creating tool that takes one (as idempotencyKey).
func withIdempotencyKey(body []byte, r *http.Request, t cairn.Tool) ([]byte, error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return body, nil
	}
	if _, ok := queryFields(t.In)["idempotencyKey"]; !ok {
		return nil, memory.Errorf(memory.CodeInvalidParams, "%s %s takes no Idempotency-Key", t.Method, t.Path)
	}
	return withFields(body, map[string]string{"idempotencyKey": key}, "the Idempotency-Key header")
}

// withFields sets string fields of the JSON object body; a field the body
// already holds with another value is invalid_params, naming from where
// the other came.
func withFields(body []byte, fields map[string]string, from string) ([]byte, error) {
	if len(fields) == 0 {
		return body, nil
	}
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
			return nil, memory.Errorf(memory.CodeInvalidParams, "the request body must be a JSON object")
		}
	}
	for p, v := range fields {
		enc, _ := json.Marshal(v)
		if prev, ok := obj[p]; ok {
			var s string
			if json.Unmarshal(prev, &s) != nil || s != v {
				return nil, memory.Errorf(memory.CodeInvalidParams, "%s in the body differs from %s", p, from)
			}
		}
		obj[p] = enc
	}
	return json.Marshal(obj)
}

// writeError writes {"error": {"code", "message"}} with the matching status.
func writeError(w http.ResponseWriter, err error) {
	var tl *tooLarge
	if errors.As(err, &tl) {
		writeErrorStatus(w, http.StatusRequestEntityTooLarge, string(memory.CodeInvalidParams), strings.TrimPrefix(tl.Error(), "invalid_params: "))
		return
	}
	pub := memory.Public(err)
	writeErrorStatus(w, httpstatus.Of(pub.Code), string(pub.Code), pub.Message)
}

func writeErrorStatus(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal_error","message":"encoding the result failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// toolInfo describes a route for GET /v1/tools.
type toolInfo struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	Description string `json:"description"`
}

func (a *API) listTools(w http.ResponseWriter, r *http.Request) {
	var out []toolInfo
	for _, t := range cairn.Tools() {
		out = append(out, toolInfo{t.Name, t.Title, t.Method, t.Path, t.Description})
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": out})
}

// health answers 200 when the database answers within two seconds, and
// 503 with the reason otherwise: a load balancer takes a server whose
// database is unreachable out of rotation.
func (a *API) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := a.eng.Ping(ctx); err != nil {
		a.opts.Logger.Warn("health check: the database does not answer", "err", memory.Detail(err))
		pub := memory.Public(err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "version": cairn.Version,
			"error": map[string]string{"code": string(pub.Code), "message": pub.Message}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": cairn.Version, "database": "ok"})
}

func (a *API) export(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	dw := &deadlineWriter{w: w, rc: http.NewResponseController(w), timeout: a.opts.WriteTimeout}
	if _, err := a.eng.Export(r.Context(), dw); err != nil {
		a.opts.Logger.Error("export failed", "err", memory.Detail(err))
	}
}

// deadlineWriter gives each write of a long response its own deadline,
// so a large export can take longer than the server's WriteTimeout while
// a client that stops reading is cut off after it.
type deadlineWriter struct {
	w       io.Writer
	rc      *http.ResponseController
	timeout time.Duration
	set     time.Time
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	// Moving the deadline costs a timer reset: do it at most every tenth
	// of the timeout.
	if now := time.Now(); now.Sub(d.set) > d.timeout/10 {
		if err := d.rc.SetWriteDeadline(now.Add(d.timeout)); err == nil {
			d.set = now
		}
	}
	return d.w.Write(p)
}

// importRecords reads the body as it arrives (never holding it whole)
// into one import. At most MaxImports run at once: one more is refused at
// once with 503 and Retry-After, its body unread.
func (a *API) importRecords(w http.ResponseWriter, r *http.Request) {
	select {
	case a.imports <- struct{}{}:
		defer func() { <-a.imports }()
	default:
		w.Header().Set("Retry-After", importRetryAfter)
		writeErrorStatus(w, http.StatusServiceUnavailable, "busy",
			fmt.Sprintf("%s at once is the most this server runs; try again in %s seconds", text.Plural(a.opts.MaxImports, "import"), importRetryAfter))
		return
	}
	if a.importing != nil {
		a.importing()
	}
	// The body is parsed as it arrives, so reading it lasts as long as
	// parsing: instead of ReadTimeout for the whole body, ReadTimeout
	// bounds each wait for more of it, and the whole body must arrive
	// within ReadTimeout plus a second per MiB of MaxImportBytes (so a
	// body trickled in holds the import's slot a bounded time). The
	// answer comes when the import has been written, which may be long
	// after WriteTimeout.
	rc := http.NewResponseController(w)
	body := &idleBody{r: http.MaxBytesReader(w, r.Body, a.opts.MaxImportBytes), rc: rc, idle: a.opts.ReadTimeout,
		end: time.Now().Add(a.opts.ReadTimeout + time.Duration(a.opts.MaxImportBytes>>20)*time.Second)}
	rep, err := a.eng.Import(r.Context(), body, cairn.ImportOptions{})
	_ = rc.SetWriteDeadline(time.Now().Add(a.opts.WriteTimeout))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			err = &tooLarge{limit: a.opts.MaxImportBytes}
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// idleBody reads a request body, giving each read idle to arrive, and
// all of it until end.
type idleBody struct {
	r    io.Reader
	rc   *http.ResponseController
	idle time.Duration
	end  time.Time
}

func (b *idleBody) Read(p []byte) (int, error) {
	deadline := time.Now().Add(b.idle)
	if deadline.After(b.end) {
		deadline = b.end
	}
	_ = b.rc.SetReadDeadline(deadline)
	return b.r.Read(p)
}

// stats reads the store's counts, at most once a second.
func (a *API) stats() memory.Stats {
	a.statsMu.Lock()
	defer a.statsMu.Unlock()
	if time.Since(a.statsAt) > time.Second {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if st, err := a.eng.Stats(ctx); err == nil {
			a.lastStats, a.statsAt = st, time.Now()
		}
	}
	return a.lastStats
}

func (a *API) rowSamples() []metrics.Sample {
	st := a.stats()
	return []metrics.Sample{
		{Labels: []string{"observations"}, Value: float64(st.Observations)},
		{Labels: []string{"observations_redacted"}, Value: float64(st.Redacted)},
		{Labels: []string{"observations_indexed"}, Value: float64(st.IndexedObservations)},
		{Labels: []string{"capsules"}, Value: float64(st.Capsules)},
		{Labels: []string{"capsules_open"}, Value: float64(st.OpenCapsules)},
		{Labels: []string{"summaries"}, Value: float64(st.Summaries)},
		{Labels: []string{"summaries_indexed"}, Value: float64(st.IndexedSummaries)},
		{Labels: []string{"pins"}, Value: float64(st.Pins)},
		{Labels: []string{"thoughts"}, Value: float64(st.Thoughts)},
		{Labels: []string{"kg_entities"}, Value: float64(st.Entities)},
		{Labels: []string{"kg_observations"}, Value: float64(st.EntityObservations)},
		{Labels: []string{"kg_edges"}, Value: float64(st.Edges)},
		{Labels: []string{"code_entities"}, Value: float64(st.CodeEntities)},
		{Labels: []string{"code_episodes"}, Value: float64(st.CodeEpisodes)},
	}
}

func (a *API) etvSamples() []metrics.Sample {
	st := a.eng.CodeVerification()
	return []metrics.Sample{{Labels: []string{"hit"}, Value: float64(st.Hits)}, {Labels: []string{"miss"}, Value: float64(st.Misses)}}
}

// healSamples reads one figure of the background healer (no sample when
// the engine does not heal).
func (a *API) healSamples(figure func(cairn.HealStatus) int64) func() []metrics.Sample {
	return func() []metrics.Sample {
		h := a.eng.Healing()
		if !h.Enabled {
			return nil
		}
		return []metrics.Sample{{Value: float64(figure(h))}}
	}
}

func (a *API) degradedSamples() []metrics.Sample {
	return []metrics.Sample{{Labels: []string{string(memory.CodeEmbedderUnavailable)}, Value: float64(a.eng.DegradedRetrievals())}}
}

func (a *API) sizeSamples() []metrics.Sample {
	return []metrics.Sample{{Value: float64(a.stats().SizeBytes)}}
}

func (a *API) metricsText(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	a.opts.Metrics.WriteText(w)
}
