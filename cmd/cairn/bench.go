package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/cairnhq/cairn"

	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newBenchCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure cairn: protocol overhead and throughput",
	}
	cmd.AddCommand(newBenchProtocolCmd(a), newBenchLoCoMoCmd(a), newBenchScaleCmd(a), newBenchPeersCmd(a), newBenchHooksCmd(a), newBenchReliabilityCmd(a), newBenchReplicasCmd(a), newBenchImportsCmd(a),
		newBenchCodeSearchCmd(a))
	return cmd
}

func newBenchLoCoMoCmd(a *app) *cobra.Command {
	var dataset, queries, split, provider, golden, weights, embedder, embedModel, embedDim, pg string
	cmd := &cobra.Command{
		Use:   "locomo",
		Short: "Measure retrieval quality on the LoCoMo long-conversation benchmark",
		Long: `Load LoCoMo's conversations (--dataset, the locomo10.json file) into a
temporary database, one observation per turn, one capsule per session, one
repository per conversation, and ask every non-adversarial question scoped to
its conversation. Prints recall@1/5/10/20, hit@k and MRR, overall and per
category; --json prints the same as JSON; --golden writes the rank_stats
text kept in the repository so ranking changes show as diffs.`,
		Example: `  cairn bench locomo --dataset testdata/locomo/locomo10.json
  cairn bench locomo --dataset locomo10.json --provider local-fts --json
  cairn bench locomo --dataset testdata/locomo/locomo10.json --queries testdata/locomo/reworded.json --split test`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dataset == "" {
				return memory.Errorf(memory.CodeInvalidParams, "--dataset is required (the locomo10.json file)")
			}
			ds, err := bench.LoadLoCoMo(dataset)
			if err != nil {
				return err
			}
			cases := ds.Cases()
			if queries != "" {
				if cases, err = bench.LoadQueries(queries); err != nil {
					return err
				}
			}
			if cases, err = bench.OnlySplit(cases, split); err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "cairn-locomo-")
			if err != nil {
				return memory.Wrap(memory.CodeInternal, err, "temporary directory: %v", err)
			}
			defer os.RemoveAll(dir)
			eng, closeEng, err := a.locomoEngine(cmd, ds, dir, locomoSetup{embedder: embedder, embedModel: embedModel, embedDim: embedDim,
				weights: weights, pg: pg})
			if err != nil {
				return err
			}
			defer closeEng()
			o := bench.LoCoMoOptions{Engine: eng, Provider: provider, Cases: cases, Progress: a.progressTo()}
			rep, err := bench.RunLoCoMo(cmd.Context(), o)
			if err != nil {
				return err
			}
			if st, err := eng.Status(cmd.Context()); err == nil {
				rep.Embedder = st.Embedder.Space.String()
			}
			if golden != "" {
				if err := os.WriteFile(golden, []byte(bench.RankStats(rep)), 0o644); err != nil {
					return memory.Wrap(memory.CodeInvalidParams, err, "--golden: %v", err)
				}
			}
			return a.show(rep, func() error {
				fmt.Fprint(a.out, bench.RankStats(rep))
				fmt.Fprintf(a.out, "# embedder %s, %.1f s\n", rep.Embedder, rep.Seconds)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataset, "dataset", "", "the LoCoMo locomo10.json file")
	f.StringVar(&queries, "queries", "", `replace the questions with a file {"cases":[{"sample_id","query","evidence","category"}]}`)
	f.StringVar(&split, "split", "", "ask only one half of the questions, by a hash of their id: tune, test or all (the reworded set's halves)")
	f.StringVar(&provider, "provider", "", "retrieval provider (default the engine's)")
	f.StringVar(&golden, "golden", "", "also write the rank_stats text to this file")
	f.StringVar(&weights, "weights", "", "hybrid weights, e.g. lexical=0.6,semantic=0.5,recency=0.1,before=0.5,after=0.5,far=0.2,capsule=0.5")
	f.StringVar(&embedder, "embedder", "", "embedder: glove, ollama, openai or hash (default $CAIRN_EMBED_PROVIDER, else glove)")
	f.StringVar(&embedModel, "embed-model", "", "the embedder's model (default $CAIRN_EMBED_MODEL)")
	f.StringVar(&embedDim, "embed-dim", "", "the embedder's dimension (default $CAIRN_EMBED_DIM)")
	f.StringVar(&pg, "postgres", "", "load the dataset into this PostgreSQL database (postgres://...; a schema of its own, dropped afterwards) instead of a SQLite file")
	return cmd
}

func newBenchProtocolCmd(a *app) *cobra.Command {
	o := bench.ProtocolOptions{Size: 100_000, Clients: 8, Requests: 2000, Seed: 1}
	cmd := &cobra.Command{
		Use:   "protocol",
		Short: "Measure retrieve through the library, the HTTP API and MCP (stdio and streamable HTTP)",
		Long: `Build a temporary database of generated agent memory, start 'cairn serve' and
'cairn mcp' on it, and measure retrieve of natural-language questions:
through the library, the HTTP API and MCP over stdio with one caller (the
difference is each protocol's overhead), and through the library, the HTTP
API and MCP over streamable HTTP with --clients concurrent callers
(requests/s, p50, p95, p99). Your own database is not touched.`,
		Example: `  cairn bench protocol --size 100000 --clients 8 --requests 4000`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Size < 1 || o.Size > 10_000_000 || o.Clients < 1 || o.Clients > 256 || o.Requests < 1 {
				return memory.Errorf(memory.CodeInvalidParams, "--size 1..10000000, --clients 1..256 and --requests ≥ 1")
			}
			bin, err := os.Executable()
			if err != nil {
				return memory.Wrap(memory.CodeInternal, err, "finding the cairn binary: %v", err)
			}
			o.Binary, o.Progress = bin, a.progressTo()
			rep, err := bench.Protocol(cmd.Context(), o)
			if err != nil {
				return err
			}
			return a.show(rep, func() error {
				printProtocol(a.out, rep)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Size, "size", o.Size, "observations to generate")
	f.IntVar(&o.Clients, "clients", o.Clients, "concurrent callers")
	f.IntVar(&o.Requests, "requests", o.Requests, "calls per measured run")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "generator seed")
	f.StringVar(&o.Dir, "dir", "", "directory for the temporary database (default: a new temporary directory)")
	return cmd
}

func printProtocol(w io.Writer, rep bench.ProtocolReport) {
	fmt.Fprintf(w, "retrieve at %d observations, %d requests a run\n\n", rep.Size, rep.Requests)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path\trequests/s\tp50 ms\tp95 ms\tp99 ms\t")
	for _, r := range rep.Runs {
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t\n", r.Path, r.RPS, r.P50, r.P95, r.P99)
	}
	tw.Flush()
	fmt.Fprintf(w, "\noverhead over the library call, p50: HTTP API %.2f ms, MCP stdio %.2f ms (%.2f ms with the Go SDK client)\n",
		rep.HTTPOverheadP50Ms, rep.StdioOverheadP50Ms, rep.StdioSDKOverheadP50Ms)
}

// locomoSetup is how cairn bench locomo opens its engine.
type locomoSetup struct {
	embedder, embedModel, embedDim, weights, pg string
}

// locomoEngine opens an engine on a new database in dir (or, with
// --postgres, a schema of its own) with the flags' embedder and weights,
// and loads the dataset into it, embedded. closeEng closes it and drops
// the schema.
func (a *app) locomoEngine(cmd *cobra.Command, ds *bench.LoCoMo, dir string, f locomoSetup) (eng *cairn.Engine, closeEng func(), err error) {
	for k, v := range map[string]string{"CAIRN_EMBED_PROVIDER": f.embedder, "CAIRN_EMBED_MODEL": f.embedModel, "CAIRN_EMBED_DIM": f.embedDim} {
		if v != "" {
			a.setenv(k, v)
		}
	}
	opts, err := a.options()
	if err != nil {
		return nil, nil, err
	}
	if f.weights != "" {
		w, err := cairn.ParseHybridWeights(f.weights)
		if err != nil {
			return nil, nil, err
		}
		opts.HybridWeights = &w
	}
	if opts.Now == nil {
		latest := ds.Latest().Add(24 * time.Hour)
		opts.Now = func() time.Time { return latest }
	}
	db, drop := filepath.Join(dir, "locomo.db"), func() {}
	if f.pg != "" {
		// A schema of its own on the given database, dropped at the end;
		// the retrieval index in the temporary directory.
		if !cairn.IsPostgres(f.pg) {
			return nil, nil, memory.Errorf(memory.CodeInvalidParams, "--postgres %q is not a postgres:// URL", f.pg)
		}
		db = bench.WithSchema(f.pg, fmt.Sprintf("cairn_locomo_%d", os.Getpid()))
		opts.IndexDir = filepath.Join(dir, "index")
		drop = func() { bench.DropSchema(db) }
	}
	if eng, err = cairn.Open(db, opts); err != nil {
		drop()
		return nil, nil, err
	}
	closeEng = func() {
		eng.Close()
		drop()
	}
	if err := eng.ImportDump(cmd.Context(), ds.Dump()); err != nil {
		closeEng()
		return nil, nil, err
	}
	if _, err := eng.Reembed(cmd.Context(), cairn.ReembedRequest{}, a.progress("embedding turns")); err != nil {
		closeEng()
		return nil, nil, err
	}
	a.finishProgress()
	return eng, closeEng, nil
}
