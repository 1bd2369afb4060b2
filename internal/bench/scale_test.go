package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/internal/pgtest"
	"github.com/cairnhq/cairn/memory"
)

func TestMemoryGenDeterministicAndComplete(t *testing.T) {
	const total = 300
	a, b := bench.NewMemoryGen(7, total), bench.NewMemoryGen(7, total)
	var da, db []memory.Dump
	for !a.Done() {
		da = append(da, a.Next(64))
	}
	for !b.Done() {
		db = append(db, b.Next(64))
	}
	if !reflect.DeepEqual(da, db) {
		t.Fatal("the same seed gave different streams")
	}
	if other := bench.NewMemoryGen(8, total).Next(total); reflect.DeepEqual(other.Observations, da[0].Observations) {
		t.Fatal("another seed gave the same observations")
	}
	n := 0
	for _, d := range da {
		n += d.Len()
	}
	if n != total {
		t.Fatalf("%d records, want %d", n, total)
	}
	counts := a.Counts()
	for _, s := range []memory.Section{memory.SectionObservations, memory.SectionCapsules, memory.SectionSummaries, memory.SectionPins,
		memory.SectionThoughts, memory.SectionEntities, memory.SectionKGObservations, memory.SectionEdges} {
		if counts[s] == 0 {
			t.Errorf("no %s generated: %v", s, counts)
		}
	}
	kinds := map[memory.Kind]bool{}
	for _, d := range da {
		for _, o := range d.Observations {
			kinds[o.Kind] = true
		}
	}
	if len(kinds) != len(memory.Kinds) {
		t.Errorf("observation kinds %v, want all %d", kinds, len(memory.Kinds))
	}
	rs, ivs := a.Questions(20)
	if len(rs) != 20 || len(ivs) != 20 || rs[0].Query == "" || rs[0].ScopeIDs.RepoID == "" || ivs[0].Query == "" {
		t.Fatalf("questions %+v / %+v", rs, ivs)
	}
}

func TestScaleReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a database")
	}
	dir := t.TempDir()
	rep, err := bench.Scale(context.Background(), bench.ScaleOptions{Sizes: []int{300}, Queries: 20, Concurrency: []int{1, 2},
		Seed: 3, Batch: 100, OneByOne: 30, Dir: dir, ApproximateFrom: 60})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sizes) != 1 || rep.Machine.CPUs < 1 || rep.Isolated {
		t.Fatalf("report %+v", rep)
	}
	s := rep.Sizes[0]
	b, v := s.Build, s.Serve
	if b.Total != 300 || len(b.Records) != 8 || b.IngestPerSec <= 0 || b.OneByOnePerSec <= 0 || b.EmbedPerSec <= 0 ||
		b.ReembedPerSec <= 0 || b.DBBytes <= 0 || b.EmbedSample == 0 || b.OneByOneP50Ms <= 0 || b.OneByOneP99Ms < b.OneByOneP50Ms {
		t.Errorf("build %+v", b)
	}
	if v.OpenMs <= 0 || v.ColdStartMs < v.OpenMs || v.InnerVoiceFirstMs <= 0 {
		t.Errorf("serve %+v", v)
	}
	if _, err := os.Stat("/proc/self/status"); err == nil && (v.RSSMiB <= 0 || v.PeakRSSMiB < v.RSSMiB || b.PeakRSSMiB <= 0) {
		t.Errorf("memory figures %+v", v)
	}
	// 2 providers × 2 concurrencies, and inner_voice × 2.
	if len(v.Runs) != 6 {
		t.Fatalf("%d runs: %+v", len(v.Runs), v.Runs)
	}
	for _, r := range v.Runs {
		if r.Requests != 20 || r.Errors != 0 || r.P50 <= 0 || r.P50 > r.P95 || r.P95 > r.P99 || r.RPS <= 0 {
			t.Errorf("run %+v", r)
		}
	}
	// The approximate search was measured too, and compared with the exact.
	if ap := s.ServeApproximate; ap == nil || len(ap.Runs) != 6 || ap.ApproximateFrom != 60 || ap.Compared == 0 || ap.SameAsExact > ap.SameCandidates || ap.SameCandidates > ap.Compared || v.Compared != 0 {
		t.Fatalf("approximate serve %+v", ap)
	}
	var out bytes.Buffer
	if err := bench.WriteScaleTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"retrieve hybrid", "retrieve local-fts", "inner_voice.retrieve", "cold start ms", "300", "(approximate)", "byte-identical to the exact", "write p50 ms", "write p99 ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := bench.ScaleChart(rep).WriteSVG(&out); err != nil || !strings.Contains(out.String(), "<svg") {
		t.Errorf("chart: %v", err)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	// The temporary databases are gone.
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// With --postgres every size is measured on SQLite and then on
// PostgreSQL, each with its one-by-one write rate and latency.
func TestScaleReportPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds databases")
	}
	pg := pgtest.Shared(t).NewDatabase(t)
	rep, err := bench.Scale(context.Background(), bench.ScaleOptions{Sizes: []int{300}, Queries: 10, Concurrency: []int{1},
		Providers: []string{"hybrid"}, Seed: 3, Batch: 100, OneByOne: 30, Dir: t.TempDir(), Postgres: pg})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sizes) != 2 || rep.Sizes[0].Store != "sqlite" || rep.Sizes[1].Store != "postgres" {
		t.Fatalf("sizes %+v; want 300 on sqlite, then on postgres", rep.Sizes)
	}
	for _, s := range rep.Sizes {
		b := s.Build
		if b.Total != 300 || b.OneByOne != 30 || b.OneByOnePerSec <= 0 || b.OneByOneP50Ms <= 0 || b.OneByOneP99Ms < b.OneByOneP50Ms {
			t.Errorf("%s build %+v", s.Store, b)
		}
		if len(s.Serve.Runs) == 0 {
			t.Errorf("%s: nothing measured", s.Store)
		}
	}
	var out bytes.Buffer
	if err := bench.WriteScaleTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "300 pg") || !strings.Contains(out.String(), "write p99 ms") {
		t.Errorf("table:\n%s", out.String())
	}
}

func TestScaleCancelled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := bench.Scale(ctx, bench.ScaleOptions{Sizes: []int{300}, Queries: 5, Dir: dir}); err == nil {
		t.Fatal("a cancelled run succeeded")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestScaleFlags(t *testing.T) {
	sizes, err := bench.ParseSizes("300, 10k,100K,1M,2.5m,10_000")
	if err != nil || !reflect.DeepEqual(sizes, []int{300, 10_000, 100_000, 1_000_000, 2_500_000, 10_000}) {
		t.Fatalf("ParseSizes: %v %v", sizes, err)
	}
	for _, bad := range []string{"", "10k,", "0", "-5", "abc", "1.5", "11M", "1e", "k"} {
		if _, err := bench.ParseSizes(bad); !memory.IsCode(err, memory.CodeInvalidParams) {
			t.Errorf("ParseSizes(%q): %v, want invalid_params", bad, err)
		}
	}
	if c, err := bench.ParseConcurrency("1,8"); err != nil || !reflect.DeepEqual(c, []int{1, 8}) {
		t.Errorf("ParseConcurrency: %v %v", c, err)
	}
	for _, bad := range []string{"0", "1,-2", "x", "257", ""} {
		if _, err := bench.ParseConcurrency(bad); !memory.IsCode(err, memory.CodeInvalidParams) {
			t.Errorf("ParseConcurrency(%q): %v, want invalid_params", bad, err)
		}
	}
	if p, err := bench.ParseProviders("hybrid,local-fts"); err != nil || len(p) != 2 {
		t.Errorf("ParseProviders: %v %v", p, err)
	}
	for _, bad := range []string{"bm25", "", "hybrid,"} {
		if _, err := bench.ParseProviders(bad); !memory.IsCode(err, memory.CodeInvalidParams) {
			t.Errorf("ParseProviders(%q): %v, want invalid_params", bad, err)
		}
	}
	for _, o := range []bench.ScaleOptions{
		{Sizes: []int{0}, Queries: 1},
		{Sizes: []int{10}, Queries: 0},
		{Sizes: []int{10}, Queries: 1, Concurrency: []int{0}},
		{Sizes: []int{10}, Queries: 1, Providers: []string{"nope"}},
		{Sizes: []int{10}, Queries: 1, Dir: "/does/not/exist"},
		{Queries: 1},
	} {
		if _, err := bench.Scale(context.Background(), o); !memory.IsCode(err, memory.CodeInvalidParams) {
			t.Errorf("Scale(%+v): %v, want invalid_params", o, err)
		}
	}
	for n, want := range map[int]string{300: "300", 10_000: "10k", 1_000_000: "1M", 1500: "1500"} {
		if got := bench.SizeName(n); got != want {
			t.Errorf("SizeName(%d) = %q, want %q", n, got, want)
		}
	}
}
