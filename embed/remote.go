package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
	"syscall"
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
	// Cooldown is how long, after a call fails (its retries spent, or its
	// caller's deadline passed before an answer; not when the caller
	// cancels), later calls fail at once without contacting the provider
	// (default 30s; negative: no cooldown). While a provider is down,
	// writes (whose records are left pending) and queries (which degrade)
	// do not each wait out its timeouts and retries; the first call after
	// the cooldown tries again.
	Cooldown time.Duration
	// Now is the clock the cooldown reads (default time.Now).
	Now func() time.Time

	// down is the cooldown's state, shared by the copies of r.
	down *downState
}

// downState remembers a provider's last failure while its cooldown runs.
type downState struct {
	mu     sync.Mutex
	until  time.Time
	reason string
	err    error
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
	if r.Cooldown == 0 {
		r.Cooldown = 30 * time.Second
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.down == nil {
		r.down = &downState{}
	}
	r.BaseURL = strings.TrimRight(r.BaseURL, "/")
	return r
}

// callError is one failed call to a provider: Reason is what a caller may
// be told (no address, no transport or Go error text, nothing the provider
// answered), Err the detail, kept for the operator's logs.
type callError struct {
	Reason string
	Err    error
	// Retry says the failure is worth another attempt (network errors,
	// timeouts, 429 and 5xx).
	Retry bool
}

func (e *callError) Error() string { return e.Err.Error() }
func (e *callError) Unwrap() error { return e.Err }

// post sends body as JSON to url and decodes the JSON answer into out,
// retrying what is worth retrying. Errors are embedder_unavailable; their
// message says what went wrong in words fit for a caller, and the error
// they wrap (for logs) holds the address and the transport's own words.
func (r Remote) post(ctx context.Context, provider, url string, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return memory.Wrap(memory.CodeInternal, err, "encoding the %s request failed", provider)
	}
	if err := r.cooling(); err != nil {
		return err
	}
	delay := r.Backoff
	var last *callError
	attempts := 0
	for attempt := 0; attempt <= r.Retries; attempt++ {
		if attempt > 0 {
			wait := delay + time.Duration(rand.Int64N(int64(delay)))
			select {
			case <-ctx.Done():
				return r.callerEnded(ctx, provider, url, attempts, fmt.Errorf("waiting to retry: %w (last failure: %w)", ctx.Err(), last))
			case <-time.After(wait):
			}
			delay *= 2
		}
		attempts++
		last = r.once(ctx, url, payload, out)
		if last == nil {
			r.down.mu.Lock()
			r.down.until, r.down.reason, r.down.err = time.Time{}, "", nil
			r.down.mu.Unlock()
			return nil
		}
		if !last.Retry || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return r.callerEnded(ctx, provider, url, attempts, last)
	}
	err = r.unavailable(provider, url, attempts, last)
	r.trip(err)
	return err
}

// callerEnded is the error of a call whose caller's context ended first.
// A caller that canceled says nothing of the provider; one whose deadline
// passed gave the provider all the time it had, and got no answer: the
// cooldown starts as after any failure.
func (r Remote) callerEnded(ctx context.Context, provider, url string, attempts int, cause error) error {
	err := r.unavailable(provider, url, attempts, &callError{Reason: ended(ctx), Err: cause})
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.trip(err)
	}
	return err
}

// trip starts the cooldown after err.
func (r Remote) trip(err error) {
	if r.Cooldown <= 0 {
		return
	}
	r.down.mu.Lock()
	r.down.until, r.down.reason, r.down.err = r.Now().Add(r.Cooldown), memory.Public(err).Message, err
	r.down.mu.Unlock()
}

// cooling returns the error of the last failure while its cooldown runs,
// and nil when the provider may be called.
func (r Remote) cooling() error {
	r.down.mu.Lock()
	defer r.down.mu.Unlock()
	left := r.down.until.Sub(r.Now())
	if r.down.err == nil || left <= 0 {
		return nil
	}
	return memory.Wrap(memory.CodeEmbedderUnavailable, r.down.err, "%s; not called again for %s",
		r.down.reason, max(left.Round(time.Second), time.Second))
}

// unavailable is the embedder_unavailable error for a failed call.
func (r Remote) unavailable(provider, url string, attempts int, e *callError) error {
	reason := e.Reason
	if attempts > 1 {
		reason += fmt.Sprintf(" (%d attempts)", attempts)
	}
	return memory.Wrap(memory.CodeEmbedderUnavailable, fmt.Errorf("%s embedder, POST %s: %w", provider, redactURL(url), e),
		"the %s embedder is unavailable: %s", provider, reason)
}

// ended says why a caller's context ended.
func ended(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the request ran out of time before the embedder answered"
	}
	return "the request was canceled before the embedder answered"
}

// redactURL is u without credentials or query (which may hold a key).
func redactURL(u string) string {
	p, err := neturl.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

// once makes one call. Its error, if any, is a *callError.
func (r Remote) once(ctx context.Context, url string, payload []byte, out any) *callError {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return &callError{Reason: "its configured base URL is not a valid URL", Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.APIKey)
	}
	res, err := r.Client.Do(req)
	if err != nil {
		return &callError{Reason: r.transportReason(err), Err: err, Retry: true}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
	if err != nil {
		return &callError{Reason: r.transportReason(err), Err: fmt.Errorf("reading the answer: %w", err), Retry: true}
	}
	switch {
	case res.StatusCode == http.StatusTooManyRequests:
		return &callError{Reason: "it is turning requests away (HTTP 429, too many requests)",
			Err: fmt.Errorf("HTTP %d: %s", res.StatusCode, snippet(data)), Retry: true}
	case res.StatusCode >= 500:
		return &callError{Reason: fmt.Sprintf("it failed (HTTP %d)", res.StatusCode),
			Err: fmt.Errorf("HTTP %d: %s", res.StatusCode, snippet(data)), Retry: true}
	case res.StatusCode != http.StatusOK:
		return &callError{Reason: fmt.Sprintf("it refused the request (HTTP %d; check the model name, the URL and the API key)", res.StatusCode),
			Err: fmt.Errorf("HTTP %d: %s", res.StatusCode, snippet(data))}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &callError{Reason: "its answer is not the expected JSON", Err: fmt.Errorf("decoding the answer: %w (%s)", err, snippet(data))}
	}
	return nil
}

// transportReason says in plain words why a call got no answer.
func (r Remote) transportReason(err error) string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("it did not answer within its timeout of %s", r.Timeout)
	case errors.Is(err, context.Canceled):
		return "the request was canceled before the embedder answered"
	case errors.As(err, &dns):
		return "its host name does not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing accepts connections at its address (is it running?)"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was cut before it answered"
	}
	return "it could not be reached"
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
