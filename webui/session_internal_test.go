package webui

import (
	"fmt"
	"testing"
	"time"
)

// Wrong tokens are counted per client: one client guessing is throttled
// without locking out another, and the count ends with its window.
func TestSignInThrottleIsPerClient(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newSessions(time.Hour, func() time.Time { return now })
	for i := range s.maxFailures {
		if !s.allowAttempt("203.0.113.9") {
			t.Fatalf("attempt %d refused", i)
		}
		s.failed("203.0.113.9")
	}
	if s.allowAttempt("203.0.113.9") {
		t.Fatal("the guessing client was not throttled")
	}
	if !s.allowAttempt("127.0.0.1") {
		t.Fatal("another client was locked out")
	}
	now = now.Add(failureWindow + time.Second)
	if !s.allowAttempt("203.0.113.9") {
		t.Fatal("the throttle outlived its window")
	}
	if len(s.failures) != 0 {
		t.Fatalf("expired failures kept: %d", len(s.failures))
	}
}

// Past maxClients tracked addresses, new ones share one count, so the
// throttle's memory stays bounded.
func TestSignInThrottleIsBounded(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newSessions(time.Hour, func() time.Time { return now })
	for i := range maxClients {
		s.failed(fmt.Sprintf("client-%d", i))
	}
	for i := range s.maxFailures {
		if !s.allowAttempt(fmt.Sprintf("late-%d", i)) {
			t.Fatalf("late client %d refused before the shared count was spent", i)
		}
		s.failed(fmt.Sprintf("late-%d", i))
	}
	if s.allowAttempt("late-x") {
		t.Fatal("new clients past the bound are not throttled together")
	}
	if len(s.failures) > maxClients+1 {
		t.Fatalf("tracking %d keys", len(s.failures))
	}
}
