package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newBenchPeersCmd(a *app) *cobra.Command {
	var dataset, ks, systems, jsonOut, svgOut, reuse string
	var keepTmp bool
	var limit int
	cmd := &cobra.Command{
		Use:   "peers",
		Short: "Compare cairn with mem0 and the official MCP memory server on LoCoMo, side by side",
		Long:  benchPeersLong,
		Example: `  cairn bench peers --dataset locomo10.json
  cairn bench peers --dataset locomo10.json --json peers.json --svg docs/img/peers-recall.svg
  cairn bench peers --dataset locomo10.json --systems cairn-hybrid,mem0 --k 1,5,10,20,50`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dataset == "" {
				return memory.Errorf(memory.CodeInvalidParams, "--dataset is required (the LoCoMo locomo10.json file)")
			}
			if st, err := os.Stat(dataset); err != nil || st.IsDir() {
				return memory.Errorf(memory.CodeInvalidParams, "--dataset %s: not a readable file (want the LoCoMo locomo10.json)", dataset)
			}
			cutoffs, err := bench.ParseKs(ks)
			if err != nil {
				return err
			}
			sys, err := bench.ParseSystems(systems)
			if err != nil {
				return err
			}
			if limit < 0 {
				return memory.Errorf(memory.CodeInvalidParams, "--limit must be ≥ 0")
			}
			ds, err := bench.LoadLoCoMo(dataset)
			if err != nil {
				return err
			}
			cases := ds.Cases()
			if limit > 0 && limit < len(cases) {
				cases = cases[:limit]
			}
			opts, err := a.options()
			if err != nil {
				return err
			}
			if opts.Now == nil {
				latest := ds.Latest().Add(24 * time.Hour)
				opts.Now = func() time.Time { return latest }
			}
			dir, err := os.MkdirTemp("", "cairn-peers-")
			if err != nil {
				return memory.Wrap(memory.CodeInternal, err, "temporary directory: %v", err)
			}
			if keepTmp {
				fmt.Fprintf(a.err, "keeping the working folder %s\n", dir)
			} else {
				defer os.RemoveAll(dir)
			}
			rep, err := bench.RunPeers(cmd.Context(), bench.PeersOptions{Data: ds, Cases: cases, Systems: sys, Ks: cutoffs,
				Options: opts, Dir: dir, Reuse: reuse, Progress: a.err})
			rep.Dataset = dataset
			if err != nil {
				return err
			}
			if err := writePeersFiles(a, rep, jsonOut, svgOut); err != nil {
				return err
			}
			if jsonOut == "-" {
				return nil
			}
			m := rep.Machine
			fmt.Fprintf(a.out, "LoCoMo, %d turns, %d questions; %s/%s, %d CPUs (%s), %s, node %s; embedder %s\n\n",
				rep.Turns, rep.Questions, m.OS, m.Arch, m.CPUs, m.CPU, m.Go, m.Node, rep.Embedder)
			fmt.Fprint(a.out, bench.PeersTable(rep))
			fmt.Fprintf(a.out, "\nlatency: %s\nload average before and after the questions: %s / %s\n", rep.Latency, rep.LoadBefore, rep.LoadAfter)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataset, "dataset", "", "the LoCoMo locomo10.json file (required)")
	f.StringVar(&ks, "k", "1,5,10,20", "recall cut-offs; every system returns the largest k turns a question")
	f.StringVar(&systems, "systems", "all", "systems to measure, comma-separated: cairn-hybrid, cairn-local-fts, mem0, mcp-memory, mcp-memory-kw")
	f.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file (- for standard output, instead of the table)")
	f.StringVar(&svgOut, "svg", "", "write the recall@k curves (SVG), one line per system, to this file")
	f.BoolVar(&keepTmp, "keep-tmp", false, "keep the temporary folder (installed peers, their data and logs) for debugging")
	f.StringVar(&reuse, "reuse", "", "use the peers installed in a folder kept by an earlier --keep-tmp run instead of installing them again")
	f.IntVar(&limit, "limit", 0, "ask only the first N questions (0 for all), for a quick try")
	return cmd
}

// writePeersOutput writes b to path, or to standard output for "-".
func writePeersOutput(a *app, path string, b []byte) error {
	if path == "-" {
		_, err := a.out.Write(b)
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return memory.Wrap(memory.CodeInvalidParams, err, "writing %s: %v", path, err)
	}
	return nil
}

// benchPeersLong is `cairn bench peers --help`.
const benchPeersLong = `Run the LoCoMo retrieval protocol of 'cairn bench locomo' (one memory per
turn, every non-adversarial question scoped to its conversation) against,
in one run on this machine:

  cairn-hybrid, cairn-local-fts  cairn's two providers, through the library
  mem0             mem0's open-source SDK (npm mem0ai, pinned), infer:false,
                   its built-in "memory" vector store, telemetry off, ranking
                   with cairn's own embedder's vectors (so the comparison is
                   about the engine, not the model)
  mcp-memory       the official MCP memory server (npm
                   @modelcontextprotocol/server-memory, pinned) over its
                   stdio protocol: speakers are entities, turns their
                   observations, search_nodes asked the question; it returns
                   whole entities unranked, scored in the order returned
  mcp-memory-kw    the same server asked once per keyword of the question

The peers are installed with npm (network to the npm registry needed) into
a temporary folder removed at the end, also on error and on Ctrl-C
(--keep-tmp keeps it). Every system is loaded first; then each question is
asked of every system in turn, so other work on the machine weighs on all
alike. Prints recall@k, MRR, query latency p50/p99 (wall time per question
seen from this process, measured the same way for every system), ingest
time and the mean number of turns returned per system, with versions.`

// writePeersFiles writes the report as JSON and its recall curves as
// SVG, to the files given (none when empty; "-" is standard output).
func writePeersFiles(a *app, rep bench.PeersReport, jsonOut, svgOut string) error {
	if jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := writePeersOutput(a, jsonOut, append(b, '\n')); err != nil {
			return err
		}
	}
	if svgOut != "" {
		var buf bytes.Buffer
		if err := bench.PeersChart(rep).WriteSVG(&buf); err != nil {
			return err
		}
		if err := writePeersOutput(a, svgOut, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
