package heal

import (
	"testing"
	"time"
)

// The wait after failed passes doubles from 5 s up to 10 min; a pass that
// succeeds waits the interval.
func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		failures int
		want     time.Duration
	}{{0, time.Minute}, {1, 5 * time.Second}, {2, 10 * time.Second}, {3, 20 * time.Second}, {8, 10 * time.Minute}, {50, 10 * time.Minute}} {
		if got := Backoff(tc.failures, time.Minute); got != tc.want {
			t.Errorf("Backoff(%d) = %s; want %s", tc.failures, got, tc.want)
		}
	}
}
