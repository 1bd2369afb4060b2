package embed_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/internal/embedtest"
	"github.com/cairnhq/cairn/memory"
)

// A failing provider gives embedder_unavailable with a message that says
// what went wrong and nothing of the provider's (address, path, answer) or
// of Go's error texts; the detail stays in the error's cause, for logs.
func TestRemoteFailuresAreTypedAndSafe(t *testing.T) {
	for _, tc := range []struct {
		mode embedtest.Mode
		says string
	}{
		{embedtest.Reset, "the connection was cut before it answered (4 attempts)"},
		{embedtest.Hang, "it did not answer within its timeout of 200ms (4 attempts)"},
		{embedtest.Fail, "it failed (HTTP 500) (4 attempts)"},
		{embedtest.Malformed, "its answer is not the expected JSON"},
		{embedtest.WrongDim, "ollama returned a vector of dimension 9; the space is 8"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			srv := embedtest.Start(t, tc.mode, 8)
			_, err := srv.Embedder().Embed(ctx, []string{"the deploy failed", "rollback"})
			if memory.CodeOf(err) != memory.CodeEmbedderUnavailable {
				t.Fatalf("%v; want embedder_unavailable", err)
			}
			msg := memory.Public(err).Message
			if !strings.Contains(msg, tc.says) {
				t.Errorf("message %q; want it to say %q", msg, tc.says)
			}
			if leaks := srv.Leaks(msg); len(leaks) > 0 {
				t.Errorf("message %q shows %q", msg, leaks)
			}
			if tc.mode == embedtest.WrongDim {
				return
			}
			// The operator's logs get the address and the cause.
			if d := memory.Detail(err); !strings.Contains(d, srv.URL+embedtest.Path) {
				t.Errorf("detail %q lacks the address", d)
			}
			if tc.mode == embedtest.Fail {
				if d := memory.Detail(err); !strings.Contains(d, embedtest.Secret) {
					t.Errorf("detail %q lacks the provider's answer", d)
				}
			}
		})
	}
}

// After a failure the provider is left alone for the cooldown: calls fail
// at once, with the same typed error, and the first call after it tries
// again. A caller giving up does not start a cooldown.
func TestRemoteCooldown(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	srv := embedtest.Start(t, embedtest.Fail, 4)
	e := embed.NewOllama(embed.Remote{BaseURL: srv.URL, Model: embedtest.Model, Dim: 4, Retries: -1, Cooldown: time.Minute, Now: clock})
	if _, err := e.Embed(ctx, []string{"x"}); memory.CodeOf(err) != memory.CodeEmbedderUnavailable || srv.Calls.Load() != 1 {
		t.Fatalf("first call: %v after %d requests", err, srv.Calls.Load())
	}
	advance(59 * time.Second)
	_, err := e.Embed(ctx, []string{"x"})
	if memory.CodeOf(err) != memory.CodeEmbedderUnavailable || srv.Calls.Load() != 1 {
		t.Fatalf("during the cooldown: %v after %d requests; want a failure without a request", err, srv.Calls.Load())
	}
	if msg := memory.Public(err).Message; !strings.Contains(msg, "HTTP 500") || !strings.Contains(msg, "not called again for 1s") || len(srv.Leaks(msg)) > 0 {
		t.Fatalf("during the cooldown: %q", msg)
	}
	advance(time.Second)
	if _, err := e.Embed(ctx, []string{"x"}); memory.CodeOf(err) != memory.CodeEmbedderUnavailable || srv.Calls.Load() != 2 {
		t.Fatalf("after the cooldown: %v after %d requests; want a new request", err, srv.Calls.Load())
	}

	// A working provider behind a canceled caller: the failure is the
	// caller's, the next call goes through.
	ok := embedtest.Start(t, embedtest.Working, 4)
	e = embed.NewOllama(embed.Remote{BaseURL: ok.URL, Model: embedtest.Model, Dim: 4, Now: clock})
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.Embed(canceled, []string{"x"})
	if memory.CodeOf(err) != memory.CodeEmbedderUnavailable || !strings.Contains(memory.Public(err).Message, "canceled") {
		t.Fatalf("canceled: %v", err)
	}
	if vs, err := e.Embed(ctx, []string{"x"}); err != nil || len(vs) != 1 {
		t.Fatalf("after a canceled call: %v", err)
	}
}

// CAIRN_EMBED_RETRIES sets how often a failed request is retried: 0 means
// one request.
func TestConfiguredRetries(t *testing.T) {
	for retries, requests := range map[string]int64{"0": 1, "1": 2} {
		srv := embedtest.Start(t, embedtest.Fail, 4)
		env := map[string]string{"CAIRN_EMBED_PROVIDER": "ollama", "CAIRN_EMBED_MODEL": embedtest.Model, "CAIRN_EMBED_DIM": "4",
			"CAIRN_EMBED_URL": srv.URL, "CAIRN_EMBED_RETRIES": retries}
		c, _, err := embed.ConfigFromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		e, err := c.New()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Embed(ctx, []string{"x"}); memory.CodeOf(err) != memory.CodeEmbedderUnavailable || srv.Calls.Load() != requests {
			t.Errorf("CAIRN_EMBED_RETRIES=%s: %v after %d requests; want embedder_unavailable after %d", retries, err, srv.Calls.Load(), requests)
		}
	}
}

// A caller whose deadline passes with no answer starts the cooldown too:
// the provider had all the time the caller could give.
func TestRemoteCooldownAfterDeadline(t *testing.T) {
	srv := embedtest.Start(t, embedtest.Hang, 4)
	e := embed.NewOllama(embed.Remote{BaseURL: srv.URL, Model: embedtest.Model, Dim: 4, Timeout: time.Hour})
	// The deadline passes once the provider holds the request, not after
	// a fixed time a loaded machine could spend before sending it.
	_, err := e.Embed(deadlineAt(srv.Received), []string{"x"})
	if memory.CodeOf(err) != memory.CodeEmbedderUnavailable || !strings.Contains(memory.Public(err).Message, "ran out of time") {
		t.Fatalf("past the deadline: %v", err)
	}
	if _, err := e.Embed(ctx, []string{"x"}); memory.CodeOf(err) != memory.CodeEmbedderUnavailable || srv.Calls.Load() != 1 {
		t.Fatalf("after a deadline passed: %v after %d requests; want a failure without a request", err, srv.Calls.Load())
	}
}

// deadlineContext is a context whose deadline passes when its channel
// closes: a caller that runs out of time at a moment the test chooses.
type deadlineContext struct {
	context.Context
	passed <-chan struct{}
}

// deadlineAt returns a context whose deadline passes when passed closes.
func deadlineAt(passed <-chan struct{}) context.Context {
	return deadlineContext{Context: context.Background(), passed: passed}
}

func (c deadlineContext) Done() <-chan struct{} { return c.passed }

func (c deadlineContext) Err() error {
	select {
	case <-c.passed:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
