package throttle

import (
	"fmt"
	"testing"
	"time"
)

// Failures are counted per client: one client guessing is throttled
// without locking out another, and the count ends with its window.
func TestPerClient(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	f := New(10, time.Minute, func() time.Time { return now })
	for i := range f.Max {
		if !f.Allow("203.0.113.9") {
			t.Fatalf("attempt %d refused", i)
		}
		f.Fail("203.0.113.9")
		now = now.Add(time.Second)
	}
	if f.Allow("203.0.113.9") {
		t.Fatal("the guessing client was not throttled")
	}
	if got := f.RetryAfter("203.0.113.9"); got != 50*time.Second {
		t.Fatalf("RetryAfter = %v, want 50s (the first failure's expiry)", got)
	}
	if !f.Allow("127.0.0.1") {
		t.Fatal("another client was locked out")
	}
	now = now.Add(time.Minute)
	if !f.Allow("203.0.113.9") {
		t.Fatal("the throttle outlived its window")
	}
	if n := f.Tracked(); n != 0 {
		t.Fatalf("expired failures kept: %d", n)
	}
}

// Past MaxClients tracked addresses, new ones share one count, so the
// throttle's memory stays bounded.
func TestBounded(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	f := New(10, time.Minute, func() time.Time { return now })
	for i := range MaxClients {
		f.Fail(fmt.Sprintf("client-%d", i))
	}
	for i := range f.Max {
		if !f.Allow(fmt.Sprintf("late-%d", i)) {
			t.Fatalf("late client %d refused before the shared count was spent", i)
		}
		f.Fail(fmt.Sprintf("late-%d", i))
	}
	if f.Allow("late-x") {
		t.Fatal("new clients past the bound are not throttled together")
	}
	if n := f.Tracked(); n > MaxClients+1 {
		t.Fatalf("tracking %d keys", n)
	}
}
