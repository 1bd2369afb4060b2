package main

import (
	"runtime"
	"testing"
	"time"
)

func TestMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, minHeadroom},
		{100 << 20, 100<<20 + minHeadroom},
		{2 << 30, 2<<30 + 512<<20},
	} {
		if got := memoryLimit(c.live); got != c.want {
			t.Errorf("memoryLimit(%d MiB) = %d MiB; want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
}

func TestOnEveryGCRunsAfterEachCollection(t *testing.T) {
	calls := make(chan struct{}, 16)
	onEveryGC(func() {
		select {
		case calls <- struct{}{}:
		default:
		}
	})
	for i := range 3 {
		runtime.GC()
		select {
		case <-calls:
		case <-time.After(2 * time.Minute): // a safety net, not a measurement
			t.Fatalf("no call after collection %d", i+1)
		}
	}
}
