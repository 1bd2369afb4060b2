// Command gen writes the reworded LoCoMo questions
// (testdata/locomo/reworded.json): every non-adversarial question of
// LoCoMo that the rules of package reword can say in other words, with its
// evidence, category and half (tune or test, by a hash of its id). It
// reads WordNet 3.0 as Debian's wordnet-base installs it and the built-in
// GloVe table's word frequencies:
//
//	go run ./internal/bench/reword/gen -dataset testdata/locomo/locomo10.json \
//	    -wordnet /usr/share/wordnet -out testdata/locomo/reworded.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/cairnhq/cairn/embed/glove"
	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/internal/bench/reword"
)

func main() {
	dataset := flag.String("dataset", "testdata/locomo/locomo10.json", "LoCoMo's locomo10.json")
	wn := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0's database directory (Debian: wordnet-base)")
	out := flag.String("out", "testdata/locomo/reworded.json", "the file to write")
	flag.Parse()
	if err := run(*dataset, *wn, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dataset, wnDir, out string) error {
	ds, err := bench.LoadLoCoMo(dataset)
	if err != nil {
		return err
	}
	wn, err := reword.Load(os.DirFS(wnDir))
	if err != nil {
		return err
	}
	vecs, err := glove.Load()
	if err != nil {
		return err
	}
	rw := &reword.Rewriter{WordNet: wn, Rank: vecs.Rank}
	set := bench.QuerySet{About: about}
	for _, c := range ds.Cases() {
		res, ok := rw.Reword(c.ID, c.Query)
		if !ok {
			continue
		}
		c.Original, c.Query, c.Rules, c.Split = c.Query, res.Text, res.Rules, bench.SplitOf(c.ID)
		set.Cases = append(set.Cases, c)
	}
	b, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

var about = []string{
	"LoCoMo's questions (snap-research/LoCoMo, data/locomo10.json; CC BY-NC 4.0: for evaluation, not for anything sold), reworded by rules.",
	"Written by internal/bench/reword/gen from WordNet 3.0 (Princeton University; the WordNet licence, BSD-like) and the built-in GloVe table's word frequencies.",
	"Each question keeps its id (conversation:place in its list), evidence and category; split is its half, by FNV-1a of the id (odd: test).",
	"Run with: cairn bench locomo --dataset testdata/locomo/locomo10.json --queries testdata/locomo/reworded.json --split test",
}
