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
		// batched embeds every record on write with the default embedder;
		// batched-store leaves embedding to cairn reembed, so it measures
		// the store alone.
		for _, mode := range []struct {
			name string
			opts cairn.Options
		}{{"batched", cairn.Options{}}, {"batched-store", cairn.Options{SkipEmbedOnWrite: true}}} {
			b.Run(fmt.Sprintf("%s/n=%d", mode.name, n), func(b *testing.B) {
				for b.Loop() {
					opts := mode.opts
					eng, err := cairn.Open(filepath.Join(b.TempDir(), "ingest.db"), &opts)
					if err != nil {
						b.Fatal(err)
					}
					ingest(b, eng, reqs, 1000)
					eng.Close()
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "obs/s")
			})
		}
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

// retrieveRuns are BenchmarkRetrieve's runs per size: each provider on the
// questions scoped to their repository (a twentieth of the records), then
// on the same questions over every repository.
var retrieveRuns = []struct {
	name, provider string
	unscoped       bool
}{
	{"hybrid", "hybrid", false},
	{"local-fts", "local-fts", false},
	{"hybrid-unscoped", "hybrid", true},
	{"local-fts-unscoped", "local-fts", true},
}

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

// openRetrieveFixture builds the database and opens it afresh, with the
// default options, as a server would.
func openRetrieveFixture(b *testing.B, dir string, n int) *retrieveFixture {
	b.Helper()
	path, now, qs := buildRetrieveDB(b, dir, n)
	eng, err := cairn.Open(path, &cairn.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	return &retrieveFixture{eng: eng, qs: qs, heapBefore: heapInUse()}
}

// BenchmarkRetrieve measures the tiered Retrieve of natural-language
// questions through each provider (hybrid, the default, with the GloVe
// query embedding included; and local-fts) at 10k and 100k observations,
// reporting latency percentiles. Sub-benchmarks are named provider/size
// (hybrid/100k, local-fts/100k) so the providers compare as ratios within
// one run; the questions are scoped to one of 20 repositories, as an agent
// asks them, and the -unscoped runs ask the same questions over every
// repository. The database of each size is built once (bulk-embedded) and
// shared by its sub-benchmarks; each run first asks every question once,
// untimed (the first hybrid question loads the in-memory index).
//
// The hybrid runs also report the process's memory with the index warm:
// heap-MiB (Go heap in use after a GC), index-MiB (how much of it the
// hybrid index added), and on Linux rss-MiB and hwm-MiB (VmRSS after
// returning freed memory to the system, and the peak VmHWM; both include
// the test binary, the mapped database pages and, for the peak, building
// the database) and rss-anon-MiB (RssAnon: without mapped files).
func BenchmarkRetrieve(b *testing.B) {
	dir := b.TempDir()
	for _, n := range benchSizes {
		var fix *retrieveFixture
		// The database is built by the first sub-benchmark that runs, so
		// -bench filters skip the sizes they do not select.
		fixture := func(b *testing.B) *retrieveFixture {
			if fix == nil {
				fix = openRetrieveFixture(b, dir, n)
			}
			return fix
		}
		for _, r := range retrieveRuns {
			b.Run(r.name+"/"+sizeName(n), func(b *testing.B) {
				f := fixture(b)
				qs := slices.Clone(f.qs)
				for i := range qs {
					qs[i].Provider = r.provider
					if r.unscoped {
						qs[i].ScopeIDs = memory.Scope{}
					}
				}
				for _, q := range qs {
					if _, err := f.eng.Retrieve(ctx, q); err != nil {
						b.Fatal(err)
					}
				}
				lat := make([]time.Duration, 0, 4096)
				i := 0
				for b.Loop() {
					t0 := time.Now()
					res, err := f.eng.Retrieve(ctx, qs[i%len(qs)])
					lat = append(lat, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					if res.Provenance.ProviderUsed != r.provider {
						b.Fatalf("provider used %q, want %q", res.Provenance.ProviderUsed, r.provider)
					}
					i++
				}
				reportPercentiles(b, lat)
				if r.name == "hybrid" {
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
