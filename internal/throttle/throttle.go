// Package throttle counts failed attempts (wrong tokens) per client, so a
// stranger guessing is slowed down without locking out anyone else: the
// web page's sign-in and the HTTP API's bearer token share it.
package throttle

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// MaxClients bounds the client addresses a Failures tracks; past it, new
// clients share one count until old entries expire.
const MaxClients = 10000

// overflowClient is the key new clients share past MaxClients.
const overflowClient = "\x00overflow"

// Failures allows at most Max failed attempts per Window from one client.
// Its zero value is not usable: make one with New.
type Failures struct {
	// Max is how many failures a client may have within Window.
	Max int
	// Window is how long a failure counts.
	Window time.Duration

	now      func() time.Time
	mu       sync.Mutex
	failures map[string][]time.Time
}

// New returns a Failures allowing max failures per window, on the clock
// now (time.Now when nil).
func New(max int, window time.Duration, now func() time.Time) *Failures {
	if now == nil {
		now = time.Now
	}
	return &Failures{Max: max, Window: window, now: now, failures: map[string][]time.Time{}}
}

// Allow reports whether client may make another attempt now.
func (f *Failures) Allow(client string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.recent(f.key(client))) < f.Max
}

// RetryAfter is how long until client's oldest counted failure expires
// (at least a second): what a refused client is told to wait.
func (f *Failures) RetryAfter(client string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.recent(f.key(client))
	if len(r) == 0 {
		return time.Second
	}
	return max(time.Second, r[0].Add(f.Window).Sub(f.now()).Round(time.Second))
}

// Fail records a failed attempt by client.
func (f *Failures) Fail(client string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := f.key(client)
	f.failures[k] = append(f.recent(k), f.now())
}

// Tracked is how many keys hold recent failures.
func (f *Failures) Tracked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.failures {
		f.recent(k)
	}
	return len(f.failures)
}

// recent drops k's failures older than the window and returns the rest.
// f.mu is held.
func (f *Failures) recent(k string) []time.Time {
	cut := f.now().Add(-f.Window)
	kept := f.failures[k][:0]
	for _, t := range f.failures[k] {
		if t.After(cut) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		delete(f.failures, k)
		return nil
	}
	f.failures[k] = kept
	return kept
}

// key is the count client's failures go to: its own, or, when MaxClients
// others have recent failures, one shared count. f.mu is held.
func (f *Failures) key(client string) string {
	if _, ok := f.failures[client]; ok || len(f.failures) < MaxClients {
		return client
	}
	for k := range f.failures {
		f.recent(k)
	}
	if len(f.failures) < MaxClients {
		return client
	}
	return overflowClient
}

// Client is the address a request came from, without its port: the key
// failures are counted by.
func Client(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
