package cairn_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/corpus"
	"github.com/cairnhq/cairn/memory"
)

// Run with: go test -run '^$' -bench . -benchtime 20x .
// Figures are in docs/BENCHMARKS.md.

var benchSizes = []int{10_000, 100_000}

func logRequests(obs []memory.Observation) []cairn.LogRequest {
	reqs := make([]cairn.LogRequest, len(obs))
	for i, o := range obs {
		ts := o.TS
		reqs[i] = cairn.LogRequest{ID: o.ID, Kind: o.Kind, Content: o.Content, Provenance: o.Provenance, TS: &ts, ScopeIDs: o.Scope}
	}
	return reqs
}

func ingest(tb testing.TB, eng *cairn.Engine, reqs []cairn.LogRequest, batch int) {
	for i := 0; i < len(reqs); i += batch {
		if _, err := eng.LogBatch(ctx, reqs[i:min(i+batch, len(reqs))]); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkIngest measures observations written per second: in batches of
// 1,000 (one transaction each), and one by one (a transaction each).
func BenchmarkIngest(b *testing.B) {
	for _, n := range benchSizes {
		reqs := logRequests(corpus.New(1).Observations(n))
		b.Run(fmt.Sprintf("batched/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				eng, err := cairn.Open(filepath.Join(b.TempDir(), "ingest.db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				ingest(b, eng, reqs, 1000)
				eng.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "obs/s")
		})
	}
	reqs := logRequests(corpus.New(1).Observations(2000))
	b.Run("one-by-one/n=2000", func(b *testing.B) {
		for b.Loop() {
			eng, err := cairn.Open(filepath.Join(b.TempDir(), "ingest.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			ingest(b, eng, reqs, 1)
			eng.Close()
		}
		b.ReportMetric(float64(len(reqs))*float64(b.N)/b.Elapsed().Seconds(), "obs/s")
	})
}

// benchDB builds a database of n generated observations and returns an
// engine on it with a clock just after the last one, and questions.
func benchDB(b *testing.B, n int) (*cairn.Engine, []cairn.RetrieveRequest) {
	b.Helper()
	g := corpus.New(7)
	obs := g.Observations(n)
	now := time.UnixMilli(obs[len(obs)-1].TS + 60_000)
	eng, err := cairn.Open(filepath.Join(b.TempDir(), "retrieve.db"), &cairn.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	ingest(b, eng, logRequests(obs), 5000)
	var qs []cairn.RetrieveRequest
	for i := range 200 {
		q, scope := g.Question(obs[(i*7919)%n])
		qs = append(qs, cairn.RetrieveRequest{Query: q, ScopeIDs: scope, MaxCandidates: ptr(10)})
	}
	return eng, qs
}

// BenchmarkRetrieve measures the tiered Retrieve of natural-language
// questions scoped to one of 20 repositories, reporting latency
// percentiles.
func BenchmarkRetrieve(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("local-fts/n=%d", n), func(b *testing.B) {
			eng, qs := benchDB(b, n)
			var lat []time.Duration
			i := 0
			for b.Loop() {
				t0 := time.Now()
				if _, err := eng.Retrieve(ctx, qs[i%len(qs)]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				i++
			}
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
