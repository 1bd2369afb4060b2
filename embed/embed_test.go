package embed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

var ctx = context.Background()

func vec(dim int, seed float32) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = seed + float32(i)
	}
	return v
}

func TestOllamaRequestsAndBatches(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != "POST" || r.URL.Path != "/api/embed" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		var body struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if body.Model != "nomic-embed-text" || len(body.Input) == 0 || len(body.Input) > 2 {
			t.Errorf("body %+v", body)
		}
		var out [][]float32
		for i := range body.Input {
			out = append(out, vec(4, float32(i+1)))
		}
		json.NewEncoder(w).Encode(map[string]any{"embeddings": out})
	}))
	defer srv.Close()
	e := embed.NewOllama(embed.Remote{BaseURL: srv.URL, Model: "nomic-embed-text", Dim: 4, Batch: 2})
	vs, err := e.Embed(ctx, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 || calls.Load() != 2 {
		t.Fatalf("%d vectors in %d calls; want 3 in 2 batches", len(vs), calls.Load())
	}
	var n float64
	for _, x := range vs[0] {
		n += float64(x * x)
	}
	if math.Abs(n-1) > 1e-5 {
		t.Fatalf("vectors are normalised: norm² %v", n)
	}
	if s := e.Space(); s.Provider != "ollama" || s.Model != "nomic-embed-text" || s.Dim != 4 {
		t.Fatalf("space %+v", s)
	}
}

func TestOpenAIRequestsAuthAndIndexOrder(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer sk-test" {
			t.Errorf("request %s auth %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["model"] != "text-embedding-3-small" || body["dimensions"] != float64(3) || body["encoding_format"] != "float" {
			t.Errorf("body %v", body)
		}
		// Answer out of order: the client must place by index.
		json.NewEncoder(w).Encode(map[string]any{"data": []map[string]any{
			{"index": 1, "embedding": []float32{0, 1, 0}},
			{"index": 0, "embedding": []float32{1, 0, 0}},
		}})
	}))
	defer srv.Close()
	e := embed.NewOpenAI(embed.Remote{BaseURL: srv.URL + "/v1/", Model: "text-embedding-3-small", Dim: 3, APIKey: "sk-test"})
	vs, err := e.Embed(ctx, []string{"first", "second"})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0][0] != 1 || vs[1][1] != 1 {
		t.Fatalf("vectors out of order: %v", vs)
	}
}

func TestRetriesWhatIsWorthRetrying(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			json.NewEncoder(w).Encode(map[string]any{"embeddings": [][]float32{{1, 0}}})
		}
	}))
	defer srv.Close()
	e := embed.NewOllama(embed.Remote{BaseURL: srv.URL, Model: "m", Dim: 2, Backoff: time.Millisecond})
	if _, err := e.Embed(ctx, []string{"x"}); err != nil || calls.Load() != 3 {
		t.Fatalf("after a 503 and a 429: %v in %d calls", err, calls.Load())
	}
	calls.Store(0)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `{"error":"model not found"}`, http.StatusNotFound)
	}))
	defer bad.Close()
	e = embed.NewOllama(embed.Remote{BaseURL: bad.URL, Model: "m", Dim: 2, Backoff: time.Millisecond})
	_, err := e.Embed(ctx, []string{"x"})
	if memory.CodeOf(err) != memory.CodeEmbedderUnavailable || calls.Load() != 1 || !strings.Contains(err.Error(), "404") {
		t.Fatalf("a 404 is not retried: %v after %d calls", err, calls.Load())
	}
}

func TestGarbageIsRefused(t *testing.T) {
	for name, answer := range map[string]string{
		"wrong dimension": `{"embeddings": [[1, 0, 0]]}`,
		"NaN":             `{"embeddings": [[1, "NaN"]]}`,
		"too few":         `{"embeddings": []}`,
		"not JSON":        `<html>oops</html>`,
		"wrong shape":     `{"embeddings": "yes"}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, answer) }))
		e := embed.NewOllama(embed.Remote{BaseURL: srv.URL, Model: "m", Dim: 2, Retries: -1})
		_, err := e.Embed(ctx, []string{"x"})
		if memory.CodeOf(err) != memory.CodeEmbedderUnavailable {
			t.Errorf("%s: %v; want embedder_unavailable", name, err)
		}
		srv.Close()
	}
	// NaN through a Go-side check too.
	if err := embed.Check(embed.Space{Provider: "p", Dim: 2}, []string{"x"}, [][]float32{{float32(math.Inf(1)), 0}}); memory.CodeOf(err) != memory.CodeEmbedderUnavailable {
		t.Errorf("Inf: %v", err)
	}
}

// A provider that never answers is cut off by the client's timeout on
// every attempt. It holds each request until the test ends, so only the
// timeout can end the call; the bound on the wait is a safety net for a
// timeout that does not work, not a measurement.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release) // before Close, which waits for the handlers
	e := embed.NewOllama(embed.Remote{BaseURL: srv.URL, Model: "m", Dim: 2, Timeout: 50 * time.Millisecond, Retries: 1, Backoff: time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := e.Embed(ctx, []string{"x"})
		done <- err
	}()
	select {
	case err := <-done:
		if memory.CodeOf(err) != memory.CodeEmbedderUnavailable || !strings.Contains(memory.Public(err).Message, "did not answer within its timeout of 50ms (2 attempts)") {
			t.Fatalf("timeout: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the client's timeout did not end a call to a provider that never answers")
	}
	down := embed.NewOllama(embed.Remote{BaseURL: "http://127.0.0.1:1", Model: "m", Dim: 2, Retries: -1})
	if _, err := down.Embed(ctx, []string{"x"}); memory.CodeOf(err) != memory.CodeEmbedderUnavailable {
		t.Fatalf("connection refused: %v", err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, _, err := embed.ConfigFromEnv(env())
	if err != nil || c.Provider != "glove" || c.Dim != 100 {
		t.Fatalf("default %+v %v", c, err)
	}
	c, notes, err := embed.ConfigFromEnv(env("SURR_EMBED_PROVIDER", "openai", "SURR_EMBED_MODEL", "text-embedding-3-small", "OPENAI_API_KEY", "k"))
	if err != nil || c.Dim != 1536 || c.APIKey != "k" || len(notes) == 0 {
		t.Fatalf("seed names: %+v %v %v", c, notes, err)
	}
	c, notes, err = embed.ConfigFromEnv(env("SURR_EMBED_PROVIDER", "hash", "CAIRN_EMBED_PROVIDER", "ollama", "CAIRN_EMBED_MODEL", "mymodel", "CAIRN_EMBED_DIM", "512"))
	if err != nil || c.Provider != "ollama" || c.Dim != 512 || !strings.Contains(strings.Join(notes, ";"), "overrides") {
		t.Fatalf("CAIRN_ wins: %+v %v %v", c, notes, err)
	}
	for name, e := range map[string]func(string) string{
		"unknown provider":   env("CAIRN_EMBED_PROVIDER", "word2vec"),
		"bad dim":            env("SURR_EMBED_DIM", "-3"),
		"glove wrong dim":    env("SURR_EMBED_DIM", "1536"),
		"remote no model":    env("CAIRN_EMBED_PROVIDER", "ollama"),
		"remote unknown dim": env("CAIRN_EMBED_PROVIDER", "ollama", "CAIRN_EMBED_MODEL", "mystery"),
		"bad timeout":        env("CAIRN_EMBED_TIMEOUT", "soon"),
		"negative retries":   env("CAIRN_EMBED_RETRIES", "-1"),
		"too many retries":   env("CAIRN_EMBED_RETRIES", "11"),
	} {
		if _, _, err := embed.ConfigFromEnv(e); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestHashIsDeterministic(t *testing.T) {
	h := embed.Hash{Dim: 64}
	a, _ := h.Embed(ctx, []string{"Deploy failed on staging", "deploy failed", "the cat sat"})
	b, _ := h.Embed(ctx, []string{"Deploy failed on staging"})
	for i := range a[0] {
		if a[0][i] != b[0][i] {
			t.Fatal("not deterministic")
		}
	}
	if embed.Cosine(a[0], a[1]) <= embed.Cosine(a[0], a[2]) {
		t.Fatal("texts sharing words should be closer")
	}
}
