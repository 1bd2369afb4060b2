package cairn_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/corpus"
	"github.com/cairnhq/cairn/memory"
)

// Run with: go test -run '^$' -bench . -benchtime 20x .
// or, for retrieval only: go test -run '^$' -bench Retrieve -benchtime 2000x .
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

// retrieveProviders are the ranking providers BenchmarkRetrieve compares.
var retrieveProviders = []string{"hybrid", "local-fts"}

// sizeName names a corpus size in sub-benchmark names: 10k, 100k.
func sizeName(n int) string { return fmt.Sprintf("%dk", n/1000) }

// buildRetrieveDB writes n generated observations into a new database in
// dir, embeds them in bulk with the default (GloVe) embedder, and returns
// the database's path, the clock just after the last observation, and 200
// natural-language questions scoped to one repository.
func buildRetrieveDB(b *testing.B, dir string, n int) (string, time.Time, []cairn.RetrieveRequest) {
	b.Helper()
	g := corpus.New(7)
	obs := g.Observations(n)
	now := time.UnixMilli(obs[len(obs)-1].TS + 60_000)
	path := filepath.Join(dir, fmt.Sprintf("retrieve-%s.db", sizeName(n)))
	eng, err := cairn.Open(path, &cairn.Options{Now: func() time.Time { return now }, SkipEmbedOnWrite: true})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	ingest(b, eng, logRequests(obs), 5000)
	rep, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if rep.Embedded < n || rep.Pending != 0 {
		b.Fatalf("reembed: %+v, want %d embedded and none pending", rep, n)
	}
	var qs []cairn.RetrieveRequest
	for i := range 200 {
		q, scope := g.Question(obs[(i*7919)%n])
		qs = append(qs, cairn.RetrieveRequest{Query: q, ScopeIDs: scope, MaxCandidates: ptr(10)})
	}
	return path, now, qs
}

// retrieveFixture is one size's database, open with the default options
// (GloVe embedder, hybrid provider), shared by the providers' runs.
type retrieveFixture struct {
	eng *cairn.Engine
	qs  []cairn.RetrieveRequest
	// heapBefore is the Go heap in use after opening, before the hybrid
	// index loaded.
	heapBefore uint64
}

// openRetrieveFixture builds the database and opens it afresh, as a server
// would, then warms it: every question once through each provider (the
// first hybrid one loads the in-memory index).
func openRetrieveFixture(b *testing.B, dir string, n int) *retrieveFixture {
	b.Helper()
	path, now, qs := buildRetrieveDB(b, dir, n)
	eng, err := cairn.Open(path, &cairn.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	f := &retrieveFixture{eng: eng, qs: qs, heapBefore: heapInUse()}
	for _, p := range retrieveProviders {
		for _, q := range qs {
			q.Provider = p
			if _, err := eng.Retrieve(ctx, q); err != nil {
				eng.Close()
				b.Fatal(err)
			}
		}
	}
	return f
}

// BenchmarkRetrieve measures the tiered Retrieve of natural-language
// questions scoped to one of 20 repositories, through each provider
// (hybrid, the default, with the GloVe query embedding included; and
// local-fts) at 10k and 100k observations, reporting latency percentiles.
// Sub-benchmarks are named provider/size (hybrid/100k, local-fts/100k) so
// the providers compare as ratios within one run. The database of each size
// is built once (bulk-embedded) and shared by its sub-benchmarks. The
// hybrid runs also report the process's memory after the index is warm:
// rss-MiB and hwm-MiB (VmRSS and VmHWM, Linux only; they include the test
// binary and the generator's corpus high-water mark), rss-anon-MiB
// (RssAnon: heaps, without mapped files such as the database), heap-MiB
// (Go heap in use after a GC) and index-MiB (how much of it the hybrid
// index added).
func BenchmarkRetrieve(b *testing.B) {
	dir := b.TempDir()
	for _, n := range benchSizes {
		var fix *retrieveFixture
		// The database is built on the first sub-benchmark that runs, so
		// -bench filters skip sizes they do not select.
		fixture := func(b *testing.B) *retrieveFixture {
			if fix == nil {
				fix = openRetrieveFixture(b, dir, n)
			}
			return fix
		}
		for _, p := range retrieveProviders {
			b.Run(p+"/"+sizeName(n), func(b *testing.B) {
				f := fixture(b)
				lat := make([]time.Duration, 0, 4096)
				i := 0
				for b.Loop() {
					q := f.qs[i%len(f.qs)]
					q.Provider = p
					t0 := time.Now()
					res, err := f.eng.Retrieve(ctx, q)
					lat = append(lat, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					if res.Provenance.ProviderUsed != p {
						b.Fatalf("provider used %q, want %q", res.Provenance.ProviderUsed, p)
					}
					i++
				}
				reportPercentiles(b, lat)
				if p == "hybrid" {
					// After the loop: b.Loop's first call drops metrics
					// reported before it.
					reportMemory(b, f.heapBefore)
				}
			})
		}
		if fix != nil {
			fix.eng.Close()
		}
	}
}

// heapInUse is the Go heap in use after a collection, in bytes.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// reportMemory reports the process's memory in MiB: the Go heap in use
// and what it grew by since heapBefore, and, on Linux, the resident set
// from /proc/self/status after returning freed memory to the system.
func reportMemory(b *testing.B, heapBefore uint64) {
	const mib = 1 << 20
	debug.FreeOSMemory()
	heap := heapInUse()
	b.ReportMetric(float64(heap)/mib, "heap-MiB")
	b.ReportMetric((float64(heap)-float64(heapBefore))/mib, "index-MiB")
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return // not Linux: no resident-set figures
	}
	for _, line := range strings.Split(string(status), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		name := map[string]string{"VmRSS": "rss-MiB", "VmHWM": "hwm-MiB", "RssAnon": "rss-anon-MiB"}[key]
		fields := strings.Fields(val)
		if name == "" || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		if kb, err := strconv.ParseFloat(fields[0], 64); err == nil {
			b.ReportMetric(kb/1024, name)
		}
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

func BenchmarkZZScratch(b *testing.B) {
	f := openRetrieveFixture(b, b.TempDir(), 100_000)
	defer f.eng.Close()
	semPos, cands, zero := 0, 0, 0
	for _, q := range f.qs {
		res, err := f.eng.Retrieve(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range res.Candidates {
			cands++
			for _, ch := range c.Explanation.Children {
				if ch.Name == "semantic" && ch.Value > 0 {
					semPos++
				}
			}
		}
		if res.Provenance.Scoring.Params["candidates"] == 0 {
			zero++
		}
	}
	b.Logf("candidates %d with semantic>0 %d; queries with no candidates %d; q0=%q", cands, semPos, zero, f.qs[0].Query)
	for _, p := range retrieveProviders {
		b.Run("unscoped-"+p, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := f.qs[i%len(f.qs)]
				q.Provider = p
				q.ScopeIDs = memory.Scope{}
				t0 := time.Now()
				if _, err := f.eng.Retrieve(ctx, q); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				i++
			}
			reportPercentiles(b, lat)
		})
	}
}
