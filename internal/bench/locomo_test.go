package bench_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
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
// provider, and the reworded questions (testdata/locomo/reworded.json)
// by halves with the default one, and compares the figures with the
// golden rank_stats files, so a ranking change shows up as a diff in
// review. -update rewrites them.
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
	reworded, err := bench.LoadQueries("../../testdata/locomo/reworded.json")
	if err != nil {
		t.Fatal(err)
	}
	runs := []struct{ name, provider, split string }{
		{"hybrid", "hybrid", ""}, {"local-fts", "local-fts", ""},
		{"hybrid.reworded-tune", "hybrid", bench.SplitTune}, {"hybrid.reworded-test", "hybrid", bench.SplitTest},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			cases := ds.Cases()
			if run.split != "" {
				if cases, err = bench.OnlySplit(reworded, run.split); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := bench.RunLoCoMo(ctx, bench.LoCoMoOptions{Engine: eng, Provider: run.provider, Cases: cases})
			if err != nil {
				t.Fatal(err)
			}
			got := bench.RankStats(rep)
			path := filepath.Join("../../testdata/locomo", "rank_stats."+run.name+".txt")
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

// TestRewordedSet checks the reworded questions: each keeps its
// question's id, conversation, evidence and category, says it in other
// words, and lies in the half its id's hash gives; both halves hold
// enough questions to measure.
func TestRewordedSet(t *testing.T) {
	ds, err := bench.LoadLoCoMo("../../testdata/locomo/locomo10.json")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]bench.Case{}
	for _, c := range ds.Cases() {
		byID[c.ID] = c
	}
	set, err := bench.LoadQueries("../../testdata/locomo/reworded.json")
	if err != nil {
		t.Fatal(err)
	}
	halves := map[string]int{}
	for _, c := range set {
		orig, ok := byID[c.ID]
		switch {
		case !ok:
			t.Errorf("%s: no such LoCoMo question", c.ID)
		case c.Original != orig.Query || c.SampleID != orig.SampleID || c.Category != orig.Category || !slices.Equal(c.Evidence, orig.Evidence):
			t.Errorf("%s: does not keep its question's wording, conversation, category or evidence", c.ID)
		case c.Query == orig.Query || len(c.Rules) == 0:
			t.Errorf("%s: not reworded", c.ID)
		case c.Split != bench.SplitOf(c.ID):
			t.Errorf("%s: in the %s half; its hash puts it in %s", c.ID, c.Split, bench.SplitOf(c.ID))
		}
		halves[c.Split]++
	}
	if len(set) < 300 || halves[bench.SplitTune] < 150 || halves[bench.SplitTest] < 150 {
		t.Errorf("%d questions, halves %v: want at least 300, 150 in each half", len(set), halves)
	}
	if _, err := bench.OnlySplit(set, "half"); err == nil {
		t.Error("an unknown half was accepted")
	}
	if _, err := bench.OnlySplit([]bench.Case{{Query: "q"}}, bench.SplitTest); err == nil {
		t.Error("a split of questions without ids was accepted")
	}
}
