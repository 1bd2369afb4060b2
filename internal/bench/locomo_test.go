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
)

var update = flag.Bool("update", false, "rewrite the golden rank_stats files")

// TestLoCoMoRankStats pins retrieval quality: it runs the LoCoMo protocol
// (testdata/locomo/locomo10.json, CC BY-NC 4.0, evaluation only) with each
// provider and compares the figures with the golden rank_stats files, so a
// ranking change shows up as a diff in review. -update rewrites them.
func TestLoCoMoRankStats(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the LoCoMo run takes a few seconds per provider")
	}
	ds, err := bench.LoadLoCoMo("../../testdata/locomo/locomo10.json")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ds.Cases()); n != 1535 {
		t.Fatalf("%d questions after cleaning; want 1535", n)
	}
	latest := ds.Latest().Add(24 * time.Hour)
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "locomo.db"), &cairn.Options{Now: func() time.Time { return latest }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
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
			if *update {
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
				t.Errorf("LoCoMo figures changed (review, then go test ./internal/bench -run RankStats -update):\n--- %s\n%s--- now\n%s", path, want, got)
			}
		})
	}
}
