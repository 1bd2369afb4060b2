package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newBenchScaleCmd(a *app) *cobra.Command {
	var sizes, concurrency, providers, jsonOut, svgOut, child, pg string
	var size int
	o := bench.ScaleOptions{Queries: bench.DefaultScaleQueries, Seed: 1, Batch: bench.DefaultScaleBatch, OneByOne: bench.DefaultScaleOneByOne}
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Measure ingest, size, memory, cold start and latency at 10k, 100k and 1M memories",
		Long:  benchScaleLong,
		Example: `  cairn bench scale
  cairn bench scale --sizes 10k,100k,1M --json scale.json --svg docs/img/scale-latency.svg`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Concurrency, err = bench.ParseConcurrency(concurrency); err != nil {
				return err
			}
			if o.Providers, err = bench.ParseProviders(providers); err != nil {
				return err
			}
			progress := a.stagedProgress()
			if child != "" {
				return a.benchScaleChild(cmd, child, o, size, pg, progress)
			}
			if o.Sizes, err = bench.ParseSizes(sizes); err != nil {
				return err
			}
			if o.Binary, err = os.Executable(); err != nil {
				return memory.Wrap(memory.CodeInternal, err, "finding the cairn binary: %v", err)
			}
			o.Log, o.Stderr, o.Progress = a.err, a.err, progress
			if pg != "" && !cairn.IsPostgres(pg) {
				return memory.Errorf(memory.CodeInvalidParams, "--postgres %q is not a postgres:// URL", pg)
			}
			o.Postgres = pg
			rep, err := bench.Scale(cmd.Context(), o)
			if err != nil {
				if jsonOut != "" && len(rep.Sizes) > 0 {
					// Keep what was measured before the failure.
					b, _ := json.MarshalIndent(rep, "", "  ")
					a.writeOutput(jsonOut, append(b, '\n'))
				}
				return err
			}
			if err := a.writeScaleFiles(rep, jsonOut, svgOut); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "cairn bench scale: %d CPUs (%s), %d MiB, %s, seed %d, %d calls a run, %.0f s\n\n",
				rep.Machine.CPUs, rep.Machine.CPUModel, rep.Machine.MemTotalMiB, rep.Machine.GoVersion, rep.Seed, rep.Queries, rep.Seconds)
			return bench.WriteScaleTable(a.out, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&sizes, "sizes", "10k,100k", "record counts to measure, comma-separated (k and M suffixes)")
	f.IntVar(&o.Queries, "queries", o.Queries, "measured calls per latency run")
	f.StringVar(&concurrency, "concurrency", "1,8", "concurrent callers per latency run, comma-separated")
	f.StringVar(&providers, "provider", "hybrid,local-fts", "retrieval providers to measure: hybrid, local-fts or both")
	f.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file (- for standard output)")
	f.StringVar(&svgOut, "svg", "", "write the latency-against-memory-count plot (SVG) to this file")
	f.StringVar(&o.Dir, "dir", "", "directory for the temporary databases (default the system's temporary directory)")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "generator seed")
	f.IntVar(&o.Batch, "batch", o.Batch, "records per transaction in the batched ingest")
	f.IntVar(&o.OneByOne, "one-by-one", o.OneByOne, "records written one per transaction (0 skips)")
	f.IntVar(&o.ApproximateFrom, "approximate-from", cairn.SuggestedApproximateFrom, "also measure sizes of at least this many records with the semantic side approximate from this many vectors (0 skips)")
	f.StringVar(&pg, "postgres", "", "also measure every size on this PostgreSQL database (postgres://...; a schema per size, dropped afterwards)")
	f.StringVar(&child, "child", "", "internal: run one phase (build or serve) and print its JSON")
	f.IntVar(&size, "size", 0, "internal: the records of the build phase")
	f.MarkHidden("child")
	f.MarkHidden("size")
	return cmd
}

// childPostgres is the connection string a child phase works on: its
// parent passes it in the environment.
func childPostgres(flag string) string {
	if flag == "" {
		return ""
	}
	return os.Getenv(bench.ScalePostgresEnv)
}

// writeOutput writes b to path, or to standard output for "-".
func (a *app) writeOutput(path string, b []byte) error {
	if path == "-" {
		_, err := a.out.Write(b)
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return memory.Wrap(memory.CodeInvalidParams, err, "writing %s: %v", path, err)
	}
	return nil
}

// stagedProgress returns a progress callback that draws one bar per stage
// on a terminal (nil otherwise).
func (a *app) stagedProgress() func(stage string, done, total int) {
	current := ""
	var bar func(done, total int)
	return func(stage string, done, total int) {
		if stage != current {
			a.finishProgress()
			current, bar = stage, a.progress(stage)
		}
		if bar != nil {
			bar(done, total)
		}
	}
}

// benchScaleLong is `cairn bench scale --help`.
const benchScaleLong = `Generate agent memory from a seed (observations of all nine kinds, capsules
with summaries, pins, thoughts, knowledge-graph entities, facts and edges,
over sessions in 20 repositories, with a long-tail vocabulary) at each of
--sizes records, into a temporary database per size, and measure:

  - ingest: records per second batched (--batch per transaction, embedding
    excluded) and one by one (--one-by-one records, a transaction each),
    with the latency (p50/p99) of each one-by-one write;
  - embedding: the built-in GloVe embedder alone, and cairn reembed
    (embedding plus storing the vectors), in records per second;
  - the database's size on disk;
  - in a fresh process: open to the first hybrid Retrieve answer (cold
    start), RSS once the index is warm, and the latency (p50/p95/p99) of
    Retrieve per provider and of inner_voice.retrieve under each
    --concurrency;
  - from --approximate-from records (default 250k), the same again in
    another fresh process with the semantic side approximate from that
    many vectors (CAIRN_INDEX_APPROXIMATE_FROM), and how many answers are
    byte-identical to the default exact search's.

With --postgres URL every size is measured a second time, right after, on
that PostgreSQL database (in a schema of its own, dropped afterwards), from
the same seed: the same records, questions and figures, side by side.

Each size is built by one child process and measured by another, so memory
figures belong to that size alone. Temporary databases are removed at the
end, on error and on Ctrl-C; your own database is not touched.`

// benchScaleChild runs one phase of a size in a child process (build or
// serve) and prints its report as JSON for the parent.
func (a *app) benchScaleChild(cmd *cobra.Command, child string, o bench.ScaleOptions, size int, pg string, progress func(string, int, int)) error {
	switch child {
	case "build":
		rep, err := bench.ScaleBuild(cmd.Context(), bench.BuildOptions{Dir: o.Dir, Size: size, Seed: o.Seed,
			Batch: o.Batch, OneByOne: o.OneByOne, Progress: progress, Postgres: childPostgres(pg)})
		a.finishProgress()
		if err != nil {
			return err
		}
		return a.emit(rep)
	case "serve":
		// The child is approximate only when told to.
		approxChild := 0
		if cmd.Flags().Changed("approximate-from") {
			approxChild = o.ApproximateFrom
		}
		rep, err := bench.ScaleServe(cmd.Context(), bench.ServeOptions{Dir: o.Dir, Queries: o.Queries,
			Concurrency: o.Concurrency, Providers: o.Providers, Progress: a.err, ApproximateFrom: approxChild,
			Postgres: childPostgres(pg)})
		if err != nil {
			return err
		}
		return a.emit(rep)
	}
	return memory.Errorf(memory.CodeInvalidParams, "--child %q: want build or serve", child)
}

// writeScaleFiles writes the report as JSON and its plot as SVG, to the
// files given (none when empty).
func (a *app) writeScaleFiles(rep bench.ScaleReport, jsonOut, svgOut string) error {
	if jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := a.writeOutput(jsonOut, append(b, '\n')); err != nil {
			return err
		}
	}
	if svgOut != "" {
		var buf bytes.Buffer
		if err := bench.ScaleChart(rep).WriteSVG(&buf); err != nil {
			return memory.Wrap(memory.CodeInternal, err, "drawing the plot: %v", err)
		}
		if err := a.writeOutput(svgOut, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
