package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/internal/metrics"
	"github.com/cairnhq/cairn/mcpserver"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/webui"
	"github.com/spf13/cobra"
)

// Environment variables of the servers.
const (
	envToken = "CAIRN_TOKEN"
	envAddr  = "CAIRN_ADDR"
	envLog   = "CAIRN_LOG"
	envNoLog = "MCP_NO_LOG"
)

// logger writes to stderr at the level $CAIRN_LOG names (debug, info, warn,
// error, off; default def); MCP_NO_LOG=1 silences it.
func (a *app) logger(def slog.Level) (*slog.Logger, error) {
	h, err := a.logHandler(def)
	if err != nil {
		return nil, err
	}
	if a.errlog != nil {
		h = a.errlog.Handler(h)
	}
	return slog.New(h), nil
}

// logHandler is the handler logger wraps (a server also keeps its recent
// warnings and errors for the web page's health view, even when logs are
// off).
func (a *app) logHandler(def slog.Level) (slog.Handler, error) {
	if v := os.Getenv(envNoLog); v != "" && v != "0" {
		return slog.DiscardHandler, nil
	}
	level := def
	switch v := strings.ToLower(os.Getenv(envLog)); v {
	case "":
	case "off", "none":
		return slog.DiscardHandler, nil
	default:
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return nil, memory.Errorf(memory.CodeInvalidParams, "%s=%q: want debug, info, warn, error or off", envLog, v)
		}
	}
	return slog.NewTextHandler(a.err, &slog.HandlerOptions{Level: level}), nil
}

func newMCPCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve cairn's tools over MCP on standard input and output",
		Long: `Serve cairn's tools to one MCP client over stdio: this is the command an agent
(Claude Code, Claude Desktop, Cursor, ...) starts. Logs go to standard error
($CAIRN_LOG: debug, info, warn, error or off; default warn; MCP_NO_LOG=1
silences them). Several 'cairn mcp' processes may share one database.

While it runs it embeds, in the background, records left without a vector
(written while the embedder was down, or by a process killed before storing
the vector): at start, then every minute, backing off while the embedder
fails; info-level logs say how many.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := a.logger(slog.LevelWarn)
			if err != nil {
				return err
			}
			a.longRunning = true
			eng, err := a.engine()
			if err != nil {
				return err
			}
			srv, err := mcpserver.New(eng, &mcpserver.Options{Logger: log})
			if err != nil {
				return memory.Wrap(memory.CodeInternal, err, "building the MCP server")
			}
			if err := mcpserver.ServeStdio(cmd.Context(), srv, a.in, a.out, 8<<20); err != nil && !errors.Is(err, context.Canceled) {
				log.Debug("mcp session ended", "err", err)
			}
			return nil
		},
	}
}

func newServeCmd(a *app) *cobra.Command {
	var addr string
	var limits httpapi.Options
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the web page (/), the HTTP API (/v1) and MCP over streamable HTTP (/mcp)",
		Long: `Serve the web page at /, the HTTP API under /v1/, MCP over streamable HTTP at
/mcp, /healthz and /metrics (Prometheus text format).

It binds to 127.0.0.1:4747 by default ($CAIRN_ADDR or --addr). Binding to any
other address requires a bearer token in $CAIRN_TOKEN; when it is set, every
request but /healthz must carry "Authorization: Bearer <token>", and the web
page asks for the token in a sign-in form. SIGINT or SIGTERM stops accepting
requests and lets the ones in flight finish.

While it runs it embeds, in the background, records left without a vector
(written while the embedder was down, or by a process killed before storing
the vector): at start, then every minute, backing off while the embedder
fails. Each healing is logged and counted in /metrics.

Slow or stuck clients cannot hold the server: a request's headers must
arrive within --read-header-timeout and the whole request within
--read-timeout; an answer must be taken within --write-timeout (each
write, for GET /v1/export); a kept-alive connection is closed after
--idle-timeout without a request; one /v1 call runs at most
--request-timeout. Headers over 64 KiB get 431, bodies over 8 MiB 413
(256 MiB for /v1/import). One import runs at a time: another sent meanwhile
gets 503 (code busy) with Retry-After. An import's body is parsed as it
arrives, so --read-timeout bounds each wait for more of it.`,
		Example: `  cairn serve
  CAIRN_TOKEN=$(openssl rand -hex 32) cairn serve --addr 0.0.0.0:4747`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("addr") {
				if env := os.Getenv(envAddr); env != "" {
					addr = env
				}
			}
			for name, d := range map[string]time.Duration{"--read-header-timeout": limits.ReadHeaderTimeout, "--read-timeout": limits.ReadTimeout,
				"--write-timeout": limits.WriteTimeout, "--idle-timeout": limits.IdleTimeout, "--request-timeout": limits.RequestTimeout} {
				if d <= 0 {
					return memory.Errorf(memory.CodeInvalidParams, "%s %v: want a positive duration such as 5s or 2m", name, d)
				}
			}
			return a.serveHTTP(cmd.Context(), addr, limits, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:4747", "address to listen on ($"+envAddr+")")
	f.DurationVar(&limits.ReadHeaderTimeout, "read-header-timeout", 5*time.Second, "time a client has to send a request's headers")
	f.DurationVar(&limits.ReadTimeout, "read-timeout", 60*time.Second, "time a client has to send a whole request, body included")
	f.DurationVar(&limits.WriteTimeout, "write-timeout", 90*time.Second, "time a client has to take an answer (each write, for an export)")
	f.DurationVar(&limits.IdleTimeout, "idle-timeout", 2*time.Minute, "how long a kept-alive connection may wait for its next request")
	f.DurationVar(&limits.RequestTimeout, "request-timeout", 30*time.Second, "how long one /v1 call may run")
	return cmd
}

// serveHTTP serves the web page, the API and MCP on addr until ctx ends,
// with the timeouts and limits of limits (zero fields take httpapi's
// defaults); listening, when set, is told the page's address once the
// server listens.
func (a *app) serveHTTP(ctx context.Context, addr string, limits httpapi.Options, listening func(url string)) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return memory.Errorf(memory.CodeInvalidParams, "--addr %q: want host:port", addr)
	}
	token := os.Getenv(envToken)
	loopback := host != "" && (host == "localhost" || isLoopbackIP(host))
	if !loopback && token == "" {
		return memory.Errorf(memory.CodeInvalidParams,
			"binding to %s would expose your memories to the network without a password: set %s (or bind to 127.0.0.1)", addr, envToken)
	}
	if err := checkToken(token, loopback); err != nil {
		return err
	}
	a.errlog = webui.NewErrorLog(50)
	log, err := a.logger(slog.LevelInfo)
	if err != nil {
		return err
	}
	a.longRunning, a.logInfo, a.network = true, true, true
	eng, err := a.engine()
	if err != nil {
		return err
	}
	reg := metrics.New()
	srv, err := mcpserver.New(eng, &mcpserver.Options{Logger: log, Metrics: reg})
	if err != nil {
		return memory.Wrap(memory.CodeInternal, err, "building the MCP server")
	}
	// The page checks the token with the API's own check, so the API is
	// built first and the page handed to it through a late-bound handler.
	var page http.Handler
	limits.Token, limits.LoopbackOnly, limits.Logger, limits.Metrics = token, loopback, log, reg
	limits.Page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { page.ServeHTTP(w, r) })
	api := httpapi.New(eng, &limits)
	// The page's moderation is the engine's own knowledgegraph_moderate
	// and maintenance_ops.
	uo := &webui.Options{TokenRequired: api.TokenRequired(), CheckToken: api.CheckToken, Moderation: eng, Errors: a.errlog, Logger: log}
	if a.nowFlag != "" {
		// The page shows times against the engine's fixed clock.
		if t, err := parseTime(a.nowFlag); err == nil {
			uo.Now = func() time.Time { return t }
		}
	}
	ui, err := webui.New(eng, uo)
	if err != nil {
		return err
	}
	page = ui
	api.Mount("/mcp", mcpserver.HTTPHandler(srv, &mcpserver.Options{Logger: log}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return memory.Wrap(memory.CodeInvalidParams, err, "cannot listen on %s: %s", addr, listenProblem(err))
	}
	hs := api.HTTPServer()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(a.err, "cairn %s listening on http://%s (web page /, REST /v1, MCP /mcp, database %s)\n", cairn.Version, ln.Addr(), eng.Path())
	if listening != nil {
		listening("http://" + ln.Addr().String() + "/")
	}
	select {
	case err := <-served:
		return memory.Wrap(memory.CodeInternal, err, "serving stopped unexpectedly")
	case <-ctx.Done():
	}
	fmt.Fprintln(a.err, "cairn: shutting down; finishing requests in flight")
	// Index jobs stop first (nothing of an unfinished one is written), so
	// a request waiting on one answers now rather than hold the shutdown.
	eng.StopCodeIndexJobs()
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		return memory.Wrap(memory.CodeInternal, err, "requests in flight did not finish in time; closed them")
	}
	return nil
}

// listenProblem says why a listen failed, without Go's error text.
func listenProblem(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "the address is already in use"
	case errors.Is(err, syscall.EACCES), errors.Is(err, os.ErrPermission):
		return "permission denied (ports below 1024 need privileges)"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "no network interface has that address"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "the host name does not resolve"
	}
	return "the address cannot be used"
}

func isLoopbackIP(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// tokenBits is the strength a token must have to serve off loopback.
const tokenBits = 128

// checkToken refuses a token that guards nothing: blank, with white space
// (a quoting slip), or, off loopback, weaker than tokenBits: its length
// times the bits of its alphabet (4 a character for hex, 6 for anything
// else: 32 hex or 22 base64 characters), and at least 8 distinct
// characters ("aaaa…" is no secret).
func checkToken(token string, loopback bool) error {
	if token == "" {
		return nil
	}
	if strings.ContainsFunc(token, unicode.IsSpace) {
		return memory.Errorf(memory.CodeInvalidParams, "%s holds white space: set it to a random string, e.g. $(openssl rand -hex 32)", envToken)
	}
	if loopback {
		return nil
	}
	distinct := map[rune]bool{}
	hex := true
	for _, r := range token {
		distinct[r] = true
		hex = hex && strings.ContainsRune("0123456789abcdefABCDEF", r)
	}
	perChar := 6
	if hex {
		perChar = 4
	}
	if utf8.RuneCountInString(token)*perChar < tokenBits || len(distinct) < 8 {
		return memory.Errorf(memory.CodeInvalidParams,
			"%s is too weak to serve off loopback: use %d random bits (32 hex or 22 base64 characters), e.g. $(openssl rand -hex 32)", envToken, tokenBits)
	}
	return nil
}
