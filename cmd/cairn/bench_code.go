package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newBenchCodeSearchCmd(a *app) *cobra.Command {
	var goSrc, pySrc, corpora, dir, keep, weights string
	o := bench.CodeSearchOptions{Split: "test", Max: 1000}
	cmd := &cobra.Command{
		Use:   "code-search",
		Short: "Measure code search on questions taken from Go's and Python's standard libraries",
		Long: `Each documented function of Go's standard library ($(go env GOROOT)/src, tests,
testdata, vendor and cmd left out) and of Python's (--python) gives a
question: the first sentence of its doc comment or docstring, the function's
own name dropped. Every function's doc is removed from the tree that is
indexed, so the question's words are not in its answer. Questions are split
tune/test by a hash of their id; --split test (the default) asks the half
no ranking was tuned on. Each question is asked through code_hydrate (a new
session, 10 entities) and through plain BM25 over the same entities, and
recall@1/5/10 and MRR are printed for both.`,
		Example: `  cairn bench code-search
  cairn bench code-search --corpus python --split tune --max 0 --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, name := range strings.Split(corpora, ",") {
				switch name {
				case "go":
					root := goSrc
					if root == "" {
						out, err := exec.Command("go", "env", "GOROOT").Output()
						if err != nil {
							return memory.Errorf(memory.CodeInvalidParams, "--go is required when the go command is not on PATH")
						}
						root = filepath.Join(strings.TrimSpace(string(out)), "src")
					}
					o.Corpora = append(o.Corpora, bench.CodeCorpus{Name: "go", Root: root})
				case "python":
					o.Corpora = append(o.Corpora, bench.CodeCorpus{Name: "python", Root: pySrc})
				default:
					return memory.Errorf(memory.CodeInvalidParams, "--corpus %q: go, python or go,python", name)
				}
			}
			if weights != "" {
				r, err := bench.ParseRanking(weights)
				if err != nil {
					return err
				}
				o.Ranking = r
			}
			if o.Max < 0 {
				return memory.Errorf(memory.CodeInvalidParams, "--max must be 0 (every question) or more")
			}
			o.Dir = keep
			if keep == "" {
				work, err := os.MkdirTemp(dir, "cairn-codesearch-")
				if err != nil {
					return memory.Wrap(memory.CodeInvalidParams, err, "temporary directory: %v", err)
				}
				defer os.RemoveAll(work)
				o.Dir = work
			} else if err := os.MkdirAll(keep, 0o755); err != nil {
				return memory.Wrap(memory.CodeInvalidParams, err, "--keep: %v", err)
			}
			if w := a.progressTo(); w != nil {
				o.Progress = func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
			}
			rep, err := bench.RunCodeSearch(cmd.Context(), o)
			if err != nil {
				return err
			}
			return a.show(rep, func() error {
				tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "corpus\tfiles\tentities\tquestions\tasked\tranker\tR@1\tR@5\tR@10\tMRR\n")
				for _, c := range rep.Corpora {
					for _, r := range []struct {
						name string
						s    bench.CodeSearchScores
					}{{"hydrate", c.Hydrate}, {"bm25", c.BM25}} {
						fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%.3f\t%.3f\t%.3f\t%.3f\n", c.Corpus, c.Files, c.Entities, c.Questions, c.Asked,
							r.name, r.s.R1, r.s.R5, r.s.R10, r.s.MRR)
					}
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(a.out, "# split %s, %.1f s\n", rep.Split, rep.Seconds)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&corpora, "corpus", "go,python", "the corpora: go, python or go,python")
	f.StringVar(&goSrc, "go", "", "Go's source tree (default $(go env GOROOT)/src)")
	f.StringVar(&pySrc, "python", "/usr/lib/python3.11", "Python's standard library")
	f.StringVar(&o.Split, "split", o.Split, "the half asked: test, tune or all")
	f.IntVar(&o.Max, "max", o.Max, "questions asked per corpus, a sample by hash (0: every one)")
	f.StringVar(&dir, "dir", "", "directory for the temporary trees and databases")
	f.StringVar(&weights, "weights", "", "ranking weights, e.g. name=1,signature=1,body=1,lexical=0.6,semantic=0.4 (default code memory's)")
	f.StringVar(&keep, "keep", "", "keep the trees and databases in this directory, and reuse them on the next run (only changed files are indexed again)")
	return cmd
}
