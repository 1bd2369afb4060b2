// Package embedtest serves embedding providers that fail the ways real ones
// do, for tests: an httptest server speaking Ollama's /api/embed that
// resets connections, hangs, answers 500 with a body, answers malformed
// JSON or vectors of the wrong dimension, or works. Leaks checks what a
// caller was shown for anything of the provider's that must stay inside
// cairn: its address, its path, what it answered, and Go's error texts.
package embedtest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn/embed"
)

// Mode is how a server behaves.
type Mode string

// The modes.
const (
	// Reset takes over every connection and closes it without answering.
	Reset Mode = "reset"
	// Hang never answers: the handler returns only when the request's
	// context ends (the client gave up) or the server is cleaned up.
	Hang Mode = "hang"
	// Fail answers HTTP 500 with a body holding Secret.
	Fail Mode = "500"
	// Malformed answers HTTP 200 with a body that is not JSON, holding
	// Secret.
	Malformed Mode = "malformed"
	// WrongDim answers HTTP 200 with one vector per text, one dimension
	// too many.
	WrongDim Mode = "wrongdim"
	// Working answers correctly, with the hash embedder's vectors.
	Working Mode = "working"
)

// Failing lists the modes that fail.
var Failing = []Mode{Reset, Hang, Fail, Malformed, WrongDim}

// Secret is what a failing server puts in its answers; no caller may see it.
const Secret = "upstream-secret-7f3a9c"

// Model is the model name the servers expect.
const Model = "test-model"

// Path is the route the servers serve (Ollama's).
const Path = "/api/embed"

// Server is a running fake provider.
type Server struct {
	*httptest.Server
	Mode Mode
	Dim  int
	// Calls counts the requests received.
	Calls atomic.Int64
	// Received is closed when the first request has arrived (and been
	// counted), for a test that must act once the server holds a request
	// rather than after a guessed time.
	Received chan struct{}
	received sync.Once
}

// Start runs a server in mode for vectors of dim dimensions; it stops when
// the test ends.
func Start(t testing.TB, mode Mode, dim int) *Server {
	t.Helper()
	s := &Server{Mode: mode, Dim: dim, Received: make(chan struct{})}
	release := make(chan struct{})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Calls.Add(1)
		s.received.Do(func() { close(s.Received) })
		s.serve(w, r, release)
	}))
	// Cleanups run last first: release hanging handlers, then close.
	t.Cleanup(s.Server.Close)
	t.Cleanup(func() { close(release) })
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, release chan struct{}) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if r.URL.Path != Path || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != Model {
		http.Error(w, "bad request to the fake provider", http.StatusBadRequest)
		return
	}
	switch s.Mode {
	case Reset:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // a reset, not a clean close
			}
			conn.Close()
		}
	case Hang:
		select {
		case <-r.Context().Done():
		case <-release:
		}
	case Fail:
		http.Error(w, `{"error":"model runner crashed: `+Secret+` at /srv/models/`+Model+`"}`, http.StatusInternalServerError)
	case Malformed:
		fmt.Fprintf(w, `{"embeddings": [[0.1, 0.2 <html>%s`, Secret)
	case WrongDim, Working:
		dim := s.Dim
		if s.Mode == WrongDim {
			dim++
		}
		vs, _ := embed.Hash{Dim: dim}.Embed(r.Context(), req.Input)
		json.NewEncoder(w).Encode(map[string]any{"model": Model, "embeddings": vs})
	}
}

// Timeout is the client timeout of the embedders Embedder and Env make for
// a hanging server: short, so a server that never answers costs little.
// Every other server gets 30s, so that a loaded machine never makes an
// answer late: a failing server must fail the way its mode says (a 500, a
// reset, a malformed answer), never by a timeout because the test process
// waited for a core. Only the Hang server, which never answers, can miss
// the short timeout.
const Timeout = 200 * time.Millisecond

func (s *Server) timeout() time.Duration {
	if s.Mode == Hang {
		return Timeout
	}
	return 30 * time.Second
}

// Embedder returns an Ollama embedder of the server, with the default
// retries and cooldown and a backoff of a millisecond.
func (s *Server) Embedder() embed.Embedder {
	return embed.NewOllama(embed.Remote{BaseURL: s.URL, Model: Model, Dim: s.Dim, Timeout: s.timeout(), Backoff: time.Millisecond})
}

// Env returns the environment that points cairn's settings at the
// server, with no retries (each process makes its own embedder, and would
// wait out the retries' backoff every time).
func (s *Server) Env() map[string]string {
	return map[string]string{
		"CAIRN_EMBED_PROVIDER": "ollama",
		"CAIRN_EMBED_MODEL":    Model,
		"CAIRN_EMBED_DIM":      fmt.Sprint(s.Dim),
		"CAIRN_EMBED_URL":      s.URL,
		"CAIRN_EMBED_TIMEOUT":  s.timeout().String(),
		"CAIRN_EMBED_RETRIES":  "0",
	}
}

// internals are texts of Go's, the network's and the database's errors
// that no caller may see.
var internals = []string{
	"dial tcp", "connection reset", "connection refused", "broken pipe", "EOF", "i/o timeout",
	"context deadline exceeded", "context canceled", "Client.Timeout", "net/http", "Post \"",
	"invalid character", "json: ", "cannot unmarshal", "sql:", "SQLITE_", "sqlite",
	"goroutine ",
}

// goSource is a Go source position, as in a stack trace.
var goSource = regexp.MustCompile(`\.go:[0-9]`)

// Leaks returns what text shows that it must not: the server's URL, host
// and port, its path, its Secret, or Go's error texts.
func (s *Server) Leaks(text string) []string {
	addr := s.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	var found []string
	for _, x := range append([]string{s.URL, addr, Path, Secret, "/srv/models", "127.0.0.1", "http://"}, internals...) {
		if strings.Contains(text, x) {
			found = append(found, x)
		}
	}
	if regexp.MustCompile(`:` + port + `\b`).MatchString(text) {
		found = append(found, ":"+port)
	}
	if goSource.MatchString(text) {
		found = append(found, "a Go source position")
	}
	return found
}

// The scenario the faces' tests run: Birds are written in the repository
// Repo; Query shares words with the first three (Matching) and none with
// the last, so a retrieval without the embedder finds exactly Matching.
const (
	Repo     = "/src/birds"
	Query    = "albatross migration"
	Matching = 3
)

// Birds are the scenario's records.
var Birds = []string{
	"the albatross migration script timed out on the replica",
	"albatross: retry the migration with a longer statement timeout",
	"albatross migration finished in 41 minutes",
	"the pelican queue overflowed at 10k messages",
}
