package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// transport is what every client shares: where the provider is, how a
// call is bounded and retried, and how its failures are told.
type transport struct {
	provider string
	model    string
	key      Secret
	// auth sets the key's header on a request.
	auth func(h http.Header, key string)
	// headers are sent with every request (an API version).
	headers map[string]string

	timeout       time.Duration
	retries       int
	maxRetryAfter time.Duration
	backoff       func(attempt int) time.Duration
	sleep         func(ctx context.Context, d time.Duration) error
	client        *http.Client
	log           *slog.Logger
}

// callError is one failed request: reason is what a caller may be told
// (no address, no transport or Go error text, nothing the provider
// answered); err is the detail for the operator's logs (the address
// without its query, the provider's words with the key scrubbed).
type callError struct {
	reason string
	err    error
	// retry says another attempt may succeed; wait, when positive, is how
	// long the provider asked to be left alone first.
	retry bool
	wait  time.Duration
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// post sends body as JSON to url, retrying what is worth retrying, and
// decodes the answer into out. It returns how many requests it made.
func (t *transport) post(ctx context.Context, url string, body, out any) (int, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return 0, memory.Wrap(memory.CodeInternal, err, "encoding the %s request failed", t.provider)
	}
	var last *callError
	attempts := 0
	for attempt := 0; attempt <= t.retries; attempt++ {
		if attempt > 0 {
			wait := t.backoff(attempt)
			if last.wait > 0 {
				wait = last.wait
			}
			t.log.Debug("llm retry", "provider", t.provider, "attempt", attempt+1, "wait", wait, "reason", last.reason)
			if err := t.sleep(ctx, wait); err != nil {
				return attempts, t.unavailable(url, attempts, &callError{reason: ended(ctx), err: fmt.Errorf("waiting to retry: %w (last failure: %w)", err, last)})
			}
		}
		attempts++
		last = t.once(ctx, url, payload, out)
		if last == nil {
			return attempts, nil
		}
		if !last.retry || ctx.Err() != nil {
			break
		}
		if last.wait > t.maxRetryAfter {
			last.reason += fmt.Sprintf("; it asks to wait %s, longer than cairn waits (%s)", last.wait.Round(time.Second), t.maxRetryAfter)
			break
		}
	}
	if ctx.Err() != nil {
		last = &callError{reason: ended(ctx), err: fmt.Errorf("%w (last failure: %w)", ctx.Err(), last)}
	}
	return attempts, t.unavailable(url, attempts, last)
}

// unavailable is the typed error of a failed call.
func (t *transport) unavailable(url string, attempts int, e *callError) error {
	reason := e.reason
	if attempts > 1 {
		reason += fmt.Sprintf(" (%d attempts)", attempts)
	}
	return memory.Wrap(CodeUnavailable, fmt.Errorf("%s model %s, POST %s: %w", t.provider, t.model, redactURL(url), e),
		"the %s model is unavailable: %s", t.provider, reason)
}

// ended says why a caller's context ended.
func ended(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the request ran out of time before the model answered"
	}
	return "the request was canceled before the model answered"
}

// redactURL is u without credentials, query or fragment.
func redactURL(u string) string {
	p, err := neturl.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

// once makes one request. Its error, if any, is a *callError.
func (t *transport) once(ctx context.Context, url string, payload []byte, out any) *callError {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return &callError{reason: "its configured base URL is not a valid URL", err: errors.New("building the request: the URL does not parse")}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	if t.key.Set() && t.auth != nil {
		t.auth(req.Header, string(t.key))
	}
	res, err := t.client.Do(req)
	if err != nil {
		return &callError{reason: t.transportReason(err), err: t.scrubbed(err), retry: true}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return &callError{reason: t.transportReason(err), err: fmt.Errorf("reading the answer: %w", t.scrubbed(err)), retry: true}
	}
	status := res.StatusCode
	detail := func() error { return fmt.Errorf("HTTP %d: %s", status, t.snip(data)) }
	switch {
	case status == http.StatusTooManyRequests:
		return &callError{reason: "it is turning requests away (HTTP 429, too many requests)", err: detail(), retry: true, wait: retryAfter(res.Header, data, time.Now())}
	case status >= 500:
		return &callError{reason: fmt.Sprintf("it failed (HTTP %d)", status), err: detail(), retry: true, wait: retryAfter(res.Header, data, time.Now())}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &callError{reason: fmt.Sprintf("it refused the request (HTTP %d; check the API key)", status), err: detail()}
	case status == http.StatusNotFound:
		return &callError{reason: "it refused the request (HTTP 404; check the model name and the base URL)", err: detail()}
	case status < 200 || status > 299:
		return &callError{reason: fmt.Sprintf("it refused the request (HTTP %d; check the model name and the settings)", status), err: detail()}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &callError{reason: "its answer is not the JSON its API promises", err: fmt.Errorf("decoding the answer: %w (%s)", err, t.snip(data))}
	}
	return nil
}

// scrubbed is err with the key scrubbed from its text (a transport error
// quotes the URL, which holds no key, but a proxy's error may).
func (t *transport) scrubbed(err error) error {
	if !t.key.Set() || !strings.Contains(err.Error(), string(t.key)) {
		return err
	}
	return errors.New(t.key.scrub(err.Error()))
}

// transportReason says in plain words why a request got no answer.
func (t *transport) transportReason(err error) string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("it did not answer within its timeout of %s", t.timeout)
	case errors.Is(err, context.Canceled):
		return "the request was canceled before the model answered"
	case errors.As(err, &dns):
		return "its host name does not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing accepts connections at its address (is it running?)"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was cut before it answered"
	}
	return "it could not be reached"
}

// retryAfter is how long a 429 or 5xx answer asks the client to wait:
// the Retry-After header (seconds or an HTTP date), retry-after-ms, or a
// Google RetryInfo's retryDelay ("13s") in the body; 0 when none says.
func retryAfter(h http.Header, body []byte, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(at.Sub(now), 0)
		}
	}
	var g struct {
		Error struct {
			Details []struct {
				Type       string `json:"@type"`
				RetryDelay string `json:"retryDelay"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &g) == nil {
		for _, d := range g.Error.Details {
			if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
				if w, err := time.ParseDuration(d.RetryDelay); err == nil && w >= 0 {
					return w
				}
			}
		}
	}
	return 0
}

// DefaultBackoff is the wait before retry attempt (1 for the first
// retry): 500 ms doubled per attempt, capped at 8 s, with up to 50% more
// at random so that clients started together do not retry together.
func DefaultBackoff(attempt int) time.Duration {
	d := 500 * time.Millisecond << min(max(attempt-1, 0), 4)
	return d + time.Duration(rand.Int64N(int64(d/2)+1))
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// snip is the start of a provider's answer for the operator's logs, with
// the key scrubbed before it is cut (a cut could leave part of it).
func (t *transport) snip(b []byte) string {
	s := strings.TrimSpace(t.key.scrub(string(b)))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
