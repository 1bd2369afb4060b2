package code_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

func goroot(b *testing.B) string {
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return runtime.GOROOT()
}

func benchMemory(b *testing.B, ttl time.Duration) (*code.Memory, memory.Store) {
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "cairn.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	g, err := embed.NewGloVe()
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	return code.New(db, code.Options{ETVTTL: ttl, Embedder: g, NewID: func(p string) string { n++; return fmt.Sprintf("%s_%d", p, n) }}), db
}

// BenchmarkIndexNetHTTP indexes $(go env GOROOT)/src/net/http into a
// fresh database (gates evaluated, entities promoted).
func BenchmarkIndexNetHTTP(b *testing.B) {
	dir := filepath.Join(goroot(b), "src", "net", "http")
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no Go source tree at %s", dir)
	}
	var ents, files int
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		m, _ := benchMemory(b, 0)
		b.StartTimer()
		start := time.Now()
		rep, err := m.Index(context.Background(), code.IndexRequest{Root: dir, RepoID: "nethttp"})
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		ents, files = rep.Proposed, rep.Files
	}
	b.ReportMetric(float64(ents), "entities")
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(ents)*float64(b.N)/total.Seconds(), "entities/s")
}

// synthRepo writes a repository of n Go files, each with eight functions
// and a type with two methods, in 50 packages.
func synthRepo(b *testing.B, n int) string {
	root := b.TempDir()
	words := []string{"cache", "token", "session", "route", "parse", "store", "retry", "limit", "queue", "auth", "index", "merge", "flush", "probe", "batch", "shard"}
	for i := range n {
		w1, w2 := words[i%len(words)], words[(i/len(words))%len(words)]
		var sb strings.Builder
		fmt.Fprintf(&sb, "package p%d\n\n", i%50)
		typ := strings.ToUpper(w1[:1]) + w1[1:] + strings.ToUpper(w2[:1]) + w2[1:] + fmt.Sprint(i)
		fmt.Fprintf(&sb, "// %s keeps the %s of a %s.\ntype %s struct{ n int }\n\n", typ, w1, w2, typ)
		for j := range 2 {
			fmt.Fprintf(&sb, "// M%d updates the %s.\nfunc (t *%s) M%d(x int) int {\n\tt.n += x * %d\n\treturn t.n\n}\n\n", j, w2, typ, j, j+1)
		}
		for j := range 8 {
			w := words[(i+j)%len(words)]
			fmt.Fprintf(&sb, "// %s%d handles %s for %s.\nfunc %s%s%d(in []string) []string {\n\tout := make([]string, 0, len(in))\n\tfor _, s := range in {\n\t\tif len(s) > %d {\n\t\t\tout = append(out, s)\n\t\t}\n\t}\n\treturn out\n}\n\n",
				strings.ToUpper(w[:1])+w[1:], j, w, w1, strings.ToUpper(w[:1])+w[1:], strings.ToUpper(w1[:1])+w1[1:], i*10+j, j)
		}
		p := filepath.Join(root, fmt.Sprintf("p%d", i%50), fmt.Sprintf("f%04d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkHydrate hydrates natural-language queries naming a file or a
// symbol in a 1,000-file repository (11,000 entities), each in a new
// episode of a new session, with a warm verification cache. p50-ms is the
// target's figure.
func BenchmarkHydrate(b *testing.B) {
	root := synthRepo(b, 1000)
	m, _ := benchMemory(b, time.Hour)
	ctx := context.Background()
	if _, err := m.Index(ctx, code.IndexRequest{Root: root, RepoID: "synth"}); err != nil {
		b.Fatal(err)
	}
	queries := []string{
		"why does f0042.go drop the session token",
		"retry the flush when the queue is full",
		"CacheToken17.M1 returns the wrong count",
		"limit parsing in p7/f0307.go and the shard probe",
		"merge batches before the index flush",
	}
	// Warm: builds the search index and fills the cache.
	for i, q := range queries {
		if _, err := m.Hydrate(ctx, code.HydrateRequest{Query: q, EpisodeID: fmt.Sprint("w", i), SessionID: fmt.Sprint("ws", i), BudgetTokens: 4000}); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		res, err := m.Hydrate(ctx, code.HydrateRequest{Query: queries[i%len(queries)], EpisodeID: fmt.Sprint("e", i), SessionID: fmt.Sprint("s", i), BudgetTokens: 4000})
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		if len(res.Blocks) == 0 {
			b.Fatal("no blocks")
		}
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	st := m.ETVStats()
	b.ReportMetric(st.HitRate, "etv-hit-rate")
}

// BenchmarkETV verifies every entity of a 200-file repository, with the
// cache warm (every file cached) and cold (no cache: each check reads,
// parses and hashes the file).
func BenchmarkETV(b *testing.B) {
	root := synthRepo(b, 200)
	real, err := code.CleanRoot(root)
	if err != nil {
		b.Fatal(err)
	}
	m, db := benchMemory(b, 0)
	if _, err := m.Index(context.Background(), code.IndexRequest{Root: root, RepoID: "synth"}); err != nil {
		b.Fatal(err)
	}
	ents, err := db.CodeEntities(context.Background(), memory.CodeEntityFilter{RepoID: "synth"})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{{"warm", time.Hour}, {"cold", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			v := code.NewVerifier(tc.ttl, nil, nil)
			for _, e := range ents {
				v.Check(real, e, 0)
			}
			n := 0
			for b.Loop() {
				if r := v.Check(real, ents[n%len(ents)], 0); r.IsStale {
					b.Fatalf("%s stale: %s", ents[n%len(ents)].Key, r.Reason)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "checks/s")
		})
	}
}
