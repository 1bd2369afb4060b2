package bench_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/internal/pgtest"
)

var update = flag.Bool("update", false, "rewrite the golden rank_stats files")

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestLoCoMoRankStats pins retrieval quality: it runs the LoCoMo protocol
// (testdata/locomo/locomo10.json, CC BY-NC 4.0, evaluation only) with each
// provider and compares the figures with the golden rank_stats files, so a
// ranking change shows up as a diff in review. -update rewrites them.
func TestLoCoMoRankStats(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the LoCoMo run takes a few seconds per provider")
	}
	runLoCoMo(t, filepath.Join(t.TempDir(), "locomo.db"), "", *update)
}

// TestLoCoMoRankStatsPostgres runs the same protocol on PostgreSQL, with
// the same embedder, and requires the same golden figures: the records,
// the change log each server's index is fed from, and local-fts's FTS5
// bm25 computed in SQL must rank exactly as on SQLite.
func TestLoCoMoRankStatsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the LoCoMo run on PostgreSQL takes tens of seconds")
	}
	srv := pgtest.Shared(t)
	runLoCoMo(t, srv.NewDatabase(t)+"&cairn_schema=locomo", filepath.Join(t.TempDir(), "index"), false)
}

// runLoCoMo loads the dataset into the database at db, embeds it, and
// compares each provider's figures with the goldens (or rewrites them).
func runLoCoMo(t *testing.T, db, indexDir string, rewrite bool) {
	ds, err := bench.LoadLoCoMo("../../testdata/locomo/locomo10.json")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ds.Cases()); n != 1535 {
		t.Fatalf("%d questions after cleaning; want 1535", n)
	}
	latest := ds.Latest().Add(24 * time.Hour)
	eng, err := cairn.Open(db, &cairn.Options{Now: func() time.Time { return latest }, IndexDir: indexDir})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	store := "SQLite"
	if cairn.IsPostgres(db) {
		store = "PostgreSQL"
	}
	if err := eng.ImportDump(ctx, ds.Dump()); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	for _, provider := range []string{"hybrid", "local-fts"} {
		t.Run(provider, func(t *testing.T) {
			rep, err := bench.RunLoCoMo(ctx, bench.LoCoMoOptions{Engine: eng, Provider: provider, Cases: ds.Cases()})
			if err != nil {
				t.Fatal(err)
			}
			got := bench.RankStats(rep)
			path := filepath.Join("../../testdata/locomo", "rank_stats."+provider+".txt")
			if rewrite {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("LoCoMo figures on %s changed (review, then go test ./internal/bench -run RankStats -update):\n--- %s\n%s--- now\n%s",
					store, path, want, got)
			}
		})
	}
}
