package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newBenchReliabilityCmd(a *app) *cobra.Command {
	var parts, jsonOut string
	o := bench.ReliabilityOptions{Trials: 30, Processes: 8, Writes: 20, Seed: 1}
	cmd := &cobra.Command{
		Use:   "reliability",
		Short: "Kill writers at random, run processes at once, send slow clients and bad bodies, back up and restore",
		Long: `Run cairn's reliability suite against this binary, in a temporary directory
(your own database is not touched):

  kill        kill -9 writers at random moments, --trials times in all, in turn
              a 'cairn log' process, a 'cairn mcp' session (tools/call log) and
              a 'cairn serve' (POST /v1/observations) with three clients; after
              each kill a new process checks that every acknowledged write is
              there and whole, every write in flight whole or absent, the
              capsule holds exactly what was written, the doctor passes, and
              the retrieval index's files verify and find the newest record;
  concurrent  --processes processes at once (cairn mcp, cairn serve with a
              client, and 'cairn log'/'cairn retrieve' one after another) on one
              database, --writes writes each, each reading the newest write
              another process acknowledged: nothing lost, no error;
  slow        slow and stuck clients against 'cairn serve' run with short
              timeouts: headers trickled (64 at once), headers over the limit,
              a body trickled, an answer never read, an idle connection;
  bodies      oversized and deeply nested bodies over HTTP, /mcp and stdio:
              typed errors, the processes keep serving, nothing written;
  backup      'cairn backup' while 'cairn serve' and 'cairn mcp' write; each copy
              checked with 'cairn doctor'; retrievals on a copy and on a copy
              restored in place answer byte for byte as the database did.

Prints each part's figures; exits 1 when a check fails (the work directory
is then kept and named). --json also writes the report as JSON.`,
		Example: `  cairn bench reliability
  cairn bench reliability --trials 1002 --writes 100 --json reliability.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Trials < 3 || o.Processes < 2 || o.Processes > 64 || o.Writes < 3 {
				return memory.Errorf(memory.CodeInvalidParams, "--trials ≥ 3, --processes 2..64 and --writes ≥ 3")
			}
			if parts != "" {
				o.Parts = strings.Split(parts, ",")
			}
			bin, err := os.Executable()
			if err != nil {
				return memory.Wrap(memory.CodeInternal, err, "finding the cairn binary: %v", err)
			}
			o.Binary = bin
			keep := o.Dir != ""
			if o.Dir == "" {
				if o.Dir, err = os.MkdirTemp("", "cairn-reliability-"); err != nil {
					return memory.Wrap(memory.CodeInternal, err, "temporary directory: %v", err)
				}
			} else if err := os.MkdirAll(o.Dir, 0o700); err != nil {
				return memory.Wrap(memory.CodeInvalidParams, err, "--dir %s: %v", o.Dir, pathless(err))
			}
			o.Progress = a.err
			rep, err := bench.RunReliability(cmd.Context(), o)
			if jsonOut != "" {
				b, _ := json.MarshalIndent(rep, "", "  ")
				if werr := a.writeOutput(jsonOut, append(b, '\n')); werr != nil && err == nil {
					err = werr
				}
			}
			if err != nil {
				fmt.Fprintf(a.err, "cairn bench reliability: work directory kept: %s\n", o.Dir)
				return err
			}
			if jsonOut != "-" {
				bench.WriteReliability(a.out, rep, o)
			}
			if len(rep.Failures) > 0 {
				fmt.Fprintf(a.err, "work directory kept: %s\n", o.Dir)
				return memory.Errorf(memory.CodeInternal, "%d reliability checks failed", len(rep.Failures))
			}
			if !keep {
				os.RemoveAll(o.Dir)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Trials, "trials", o.Trials, "kill -9 trials in all, shared by the CLI, MCP and HTTP writers")
	f.IntVar(&o.Processes, "processes", o.Processes, "concurrent processes on one database")
	f.IntVar(&o.Writes, "writes", o.Writes, "writes per concurrent process")
	f.StringVar(&parts, "parts", "", "parts to run, comma-separated: "+strings.Join(bench.ReliabilityParts, ", ")+" (default all)")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the writes' contents and sizes and of the kill moments")
	f.StringVar(&o.Dir, "dir", "", "work directory, kept afterwards (default a temporary one, removed when every check passes)")
	f.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file (- for standard output)")
	return cmd
}
