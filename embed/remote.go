package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// Remote holds what every HTTP provider shares: where it is, how long a
// call may take, how often a failed call is retried, how many texts go in
// one call.
type Remote struct {
	// BaseURL is the provider's base URL.
	BaseURL string
	// Model is the model name the provider knows.
	Model string
	// Dim is the vectors' dimension.
	Dim int
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Timeout bounds one HTTP call (default 30s).
	Timeout time.Duration
	// Retries is how many times a failed call is retried (default 3):
	// network errors, 429 and 5xx are retried with jittered exponential
	// backoff; other 4xx are not.
	Retries int
	// Batch is how many texts go in one call (default 64).
	Batch int
	// Client is the HTTP client (default http.DefaultClient).
	Client *http.Client
	// Backoff is the first retry's delay (default 200ms).
	Backoff time.Duration
}

func (r Remote) withDefaults() Remote {
	if r.Timeout <= 0 {
		r.Timeout = 30 * time.Second
	}
	if r.Retries < 0 {
		r.Retries = 0
	} else if r.Retries == 0 {
		r.Retries = 3
	}
	if r.Batch <= 0 {
		r.Batch = 64
	}
	if r.Client == nil {
		r.Client = http.DefaultClient
	}
	if r.Backoff <= 0 {
		r.Backoff = 200 * time.Millisecond
	}
	r.BaseURL = strings.TrimRight(r.BaseURL, "/")
	return r
}

// errPermanent marks an answer not worth retrying.
type errPermanent struct{ error }

// post sends body as JSON to url and decodes the JSON answer into out,
// retrying what is worth retrying. Errors are embedder_unavailable.
func (r Remote) post(ctx context.Context, provider, url string, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return memory.Wrap(memory.CodeInternal, err, "encoding the %s request", provider)
	}
	delay := r.Backoff
	var last error
	for attempt := 0; attempt <= r.Retries; attempt++ {
		if attempt > 0 {
			wait := delay + time.Duration(rand.Int64N(int64(delay)))
			select {
			case <-ctx.Done():
				return memory.Wrap(memory.CodeEmbedderUnavailable, ctx.Err(), "%s: %v", provider, ctx.Err())
			case <-time.After(wait):
			}
			delay *= 2
		}
		last = r.once(ctx, url, payload, out)
		var perm errPermanent
		if last == nil || errors.As(last, &perm) || ctx.Err() != nil {
			break
		}
	}
	if last != nil {
		return memory.Wrap(memory.CodeEmbedderUnavailable, last, "%s embedder at %s: %v", provider, r.BaseURL, last)
	}
	return nil
}

func (r Remote) once(ctx context.Context, url string, payload []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return errPermanent{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.APIKey)
	}
	res, err := r.Client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
	if err != nil {
		return err
	}
	switch {
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		return fmt.Errorf("HTTP %d", res.StatusCode)
	case res.StatusCode != http.StatusOK:
		return errPermanent{fmt.Errorf("HTTP %d: %s", res.StatusCode, snippet(data))}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return errPermanent{fmt.Errorf("the answer is not the expected JSON")}
	}
	return nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// batches calls fn on texts in slices of at most n and joins the vectors.
func batches(ctx context.Context, texts []string, n int, fn func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += n {
		part := texts[i:min(i+n, len(texts))]
		vs, err := fn(ctx, part)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// Ollama embeds with an Ollama server's /api/embed endpoint.
type Ollama struct{ r Remote }

// NewOllama returns an Ollama embedder (default base URL
// http://127.0.0.1:11434).
func NewOllama(r Remote) *Ollama {
	if r.BaseURL == "" {
		r.BaseURL = "http://127.0.0.1:11434"
	}
	return &Ollama{r: r.withDefaults()}
}

// Space implements Embedder.
func (o *Ollama) Space() Space { return Space{Provider: "ollama", Model: o.r.Model, Dim: o.r.Dim} }

// Embed implements Embedder.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := batches(ctx, texts, o.r.Batch, func(ctx context.Context, part []string) ([][]float32, error) {
		var res struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		err := o.r.post(ctx, "ollama", o.r.BaseURL+"/api/embed", map[string]any{"model": o.r.Model, "input": part}, &res)
		return res.Embeddings, err
	})
	if err == nil {
		err = Check(o.Space(), texts, vs)
	}
	return vs, err
}

// OpenAI embeds with an OpenAI-compatible /embeddings endpoint (OpenAI,
// LM Studio, llama.cpp server, vLLM, TEI).
type OpenAI struct{ r Remote }

// NewOpenAI returns an OpenAI-compatible embedder (default base URL
// https://api.openai.com/v1).
func NewOpenAI(r Remote) *OpenAI {
	if r.BaseURL == "" {
		r.BaseURL = "https://api.openai.com/v1"
	}
	return &OpenAI{r: r.withDefaults()}
}

// Space implements Embedder.
func (o *OpenAI) Space() Space { return Space{Provider: "openai", Model: o.r.Model, Dim: o.r.Dim} }

// Embed implements Embedder.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := batches(ctx, texts, o.r.Batch, func(ctx context.Context, part []string) ([][]float32, error) {
		var res struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		body := map[string]any{"model": o.r.Model, "input": part, "encoding_format": "float"}
		if strings.HasPrefix(o.r.Model, "text-embedding-3") {
			body["dimensions"] = o.r.Dim
		}
		if err := o.r.post(ctx, "openai", o.r.BaseURL+"/embeddings", body, &res); err != nil {
			return nil, err
		}
		out := make([][]float32, len(part))
		for _, d := range res.Data {
			if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
				return nil, memory.Errorf(memory.CodeEmbedderUnavailable, "openai embedder returned a bad index %d", d.Index)
			}
			out[d.Index] = d.Embedding
		}
		return out, nil
	})
	if err == nil {
		err = Check(o.Space(), texts, vs)
	}
	return vs, err
}
