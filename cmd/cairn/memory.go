package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Collector settings. A small heap (query results, a small index) is
// collected rarely: GOGC 400 cuts request latency. A large index would let
// that heap grow to five times its size, so a soft memory limit follows
// the live heap: headroom over it of a quarter of its size, at least
// minHeadroom. Above 64 MiB of live heap the limit, not GOGC, decides, and
// the runtime returns freed memory to the system to stay under it.
const (
	gcPercent   = 400
	minHeadroom = 256 << 20
)

// tuneMemory applies the settings; GOGC or GOMEMLIMIT in the environment
// take precedence over the one each governs.
func tuneMemory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		setLimit()
		onEveryGC(setLimit)
	}
}

// memoryLimit is the soft limit for a live heap of live bytes.
func memoryLimit(live uint64) int64 {
	return int64(live + max(live/4, minHeadroom))
}

var liveHeap = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

func setLimit() {
	metrics.Read(liveHeap)
	if liveHeap[0].Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(memoryLimit(liveHeap[0].Value.Uint64()))
	}
}

// gcSentinel is an object whose only reference is dropped, so that its
// finalizer runs after the next collection.
type gcSentinel struct {
	_ *byte
	_ [16]byte
}

// onEveryGC runs f after each garbage collection, on the finalizer
// goroutine.
func onEveryGC(f func()) {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		f()
		onEveryGC(f)
	})
}
