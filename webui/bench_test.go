package webui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/webui"
)

// BenchmarkSearchPage measures the search page on a generated memory of
// $CAIRN_UI_BENCH_SIZE records (default 100,000; the generator of cairn
// bench scale, seed 1): each iteration times the engine's retrieval alone,
// then the whole GET /search for the same question (the server's guards,
// the scope pickers, the same retrieval and the rendering) — the
// generator's questions, scoped to a repository, 50 candidates: the page's
// default. It reports both p50 and p95 in milliseconds, the median of the
// difference (what the page adds) and the page's size. The database is
// built once into $CAIRN_UI_BENCH_DIR when set (kept for later runs),
// else into a temporary directory.
//
//	go test ./webui -run '^$' -bench SearchPage -benchtime 400x
func BenchmarkSearchPage(b *testing.B) {
	size := 100_000
	if s := os.Getenv("CAIRN_UI_BENCH_SIZE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("CAIRN_UI_BENCH_SIZE=%q", s)
		}
		size = n
	}
	dir := os.Getenv("CAIRN_UI_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	db := filepath.Join(dir, "scale.db")
	if _, err := os.Stat(db); err != nil {
		b.Logf("building %d records into %s", size, dir)
		if _, err := bench.ScaleBuild(ctx, bench.BuildOptions{Dir: dir, Size: size, Seed: 1, Batch: 5000}); err != nil {
			b.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "questions.json"))
	if err != nil {
		b.Fatal(err)
	}
	var qf struct {
		NowMs    int64                   `json:"nowMs"`
		Retrieve []cairn.RetrieveRequest `json:"retrieve"`
	}
	if err := json.Unmarshal(raw, &qf); err != nil || len(qf.Retrieve) == 0 {
		b.Fatalf("questions: %v", err)
	}
	now := time.UnixMilli(qf.NowMs)
	eng, err := cairn.Open(db, &cairn.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	var page http.Handler
	api := httpapi.New(eng, &httpapi.Options{LoopbackOnly: true,
		Page: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { page.ServeHTTP(w, r) })})
	ui, err := webui.New(eng, &webui.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	page = ui
	qs := qf.Retrieve
	for i := range qs {
		qs[i].MaxCandidates = nil // the page asks for the default, 50
	}
	get := func(q cairn.RetrieveRequest) int {
		v := url.Values{"q": {q.Query}}
		if q.ScopeIDs.RepoID != "" {
			v.Set("repo", q.ScopeIDs.RepoID)
		}
		if q.ScopeIDs.SessionID != "" {
			v.Set("session", q.ScopeIDs.SessionID)
		}
		req := httptest.NewRequest("GET", "/search?"+v.Encode(), nil)
		req.Host = "127.0.0.1:4747"
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("GET %s: %d", req.URL, rec.Code)
		}
		return rec.Body.Len()
	}
	// Warm both paths (the index's files, the page cache, the templates).
	for _, q := range qs[:min(50, len(qs))] {
		if _, err := eng.Retrieve(ctx, q); err != nil {
			b.Fatal(err)
		}
		get(q)
	}
	pct := func(ds []time.Duration, p float64) float64 {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000
	}
	// Each iteration asks one question of the engine and then of the
	// page, so both see the same load from the machine's other work.
	b.Run("retrieve-then-page", func(b *testing.B) {
		var rs, ps, over []time.Duration
		var bytes int
		i := 0
		for b.Loop() {
			q := qs[i%len(qs)]
			t0 := time.Now()
			if _, err := eng.Retrieve(ctx, q); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			bytes += get(q)
			t2 := time.Now()
			rs, ps = append(rs, t1.Sub(t0)), append(ps, t2.Sub(t1))
			over = append(over, t2.Sub(t1)-t1.Sub(t0))
			i++
		}
		b.ReportMetric(pct(rs, 0.5), "retrieve-p50-ms")
		b.ReportMetric(pct(rs, 0.95), "retrieve-p95-ms")
		b.ReportMetric(pct(ps, 0.5), "page-p50-ms")
		b.ReportMetric(pct(ps, 0.95), "page-p95-ms")
		b.ReportMetric(pct(over, 0.5), "page-minus-retrieve-p50-ms")
		b.ReportMetric(float64(bytes)/float64(max(1, i))/1024, "KiB/page")
	})
}
