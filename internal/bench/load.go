package bench

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Stats summarises a load run. Latencies are in milliseconds.
type Stats struct {
	Clients  int     `json:"clients"`
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"requestsPerSecond"`
	P50      float64 `json:"p50Ms"`
	P95      float64 `json:"p95Ms"`
	P99      float64 `json:"p99Ms"`
}

// Load calls do total times from clients concurrent workers (worker w gets
// calls w, w+clients, ...) and measures each call.
func Load(ctx context.Context, clients, total int, do func(ctx context.Context, worker, i int) error) Stats {
	lat := make([]time.Duration, total)
	var errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < total; i += clients {
				if ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				if err := do(ctx, w, i); err != nil {
					errs.Add(1)
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	s := Stats{Clients: clients, Requests: total, Errors: int(errs.Load()), Seconds: elapsed.Seconds(), RPS: float64(total) / elapsed.Seconds()}
	s.P50, s.P95, s.P99 = Percentile(lat, 0.50), Percentile(lat, 0.95), Percentile(lat, 0.99)
	return s
}

// Percentile returns the p-th percentile of d in milliseconds (nearest
// rank); d is sorted in place.
func Percentile(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := min(len(d)-1, int(p*float64(len(d))))
	return float64(d[i].Microseconds()) / 1000
}
