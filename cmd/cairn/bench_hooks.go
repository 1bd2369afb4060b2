package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newBenchHooksCmd(a *app) *cobra.Command {
	var size, jsonOut, dir string
	var keep bool
	o := bench.HooksOptions{Seed: 1, Calls: 300, Warmup: 20, SessionStarts: 20}
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Measure capture hooks as an agent runs them: one cairn process per event, at 100k memories",
		Long: `Generate --size records (as cairn bench scale does), embed and index them,
then run this cairn binary the way a coding agent runs its hooks: one process
per event with the event's JSON on standard input (Claude Code's payloads),
and time each from start to exit, as the agent waits for it:

  - process start alone (cairn hook --help), the floor under every hook;
  - tool-call hooks (PostToolUse: a shell command and 20 lines of output),
    with the time of each step inside the process (read, build: parse,
    redact and decide; spool; open the database; write: one transaction and
    its fsync; unspool; close);
  - prompt hooks (UserPromptSubmit) and session-start hooks, which render
    the repository's context.

At the end it checks that every timed hook's observation is in the database
and that nothing is left in the spool. The target is p95 ≤ 30 ms for a tool
call at 100k memories. Your own database is not touched.`,
		Example: `  cairn bench hooks
  cairn bench hooks --size 100k --calls 500 --json hooks.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			sizes, err := bench.ParseSizes(size)
			if err != nil || len(sizes) != 1 {
				return memory.Errorf(memory.CodeInvalidParams, "--size %q: want one record count such as 100k", size)
			}
			o.Size = sizes[0]
			if o.Binary, err = os.Executable(); err != nil {
				return memory.Wrap(memory.CodeInternal, err, "finding the cairn binary: %v", err)
			}
			tmp, err := os.MkdirTemp(dir, "cairn-bench-hooks-")
			if err != nil {
				return memory.Wrap(memory.CodeInternal, err, "creating a temporary directory: %v", err)
			}
			if keep {
				fmt.Fprintf(a.err, "keeping %s\n", tmp)
			} else {
				defer os.RemoveAll(tmp)
			}
			o.Dir, o.Progress = tmp, a.err
			rep, err := bench.Hooks(cmd.Context(), o)
			if err != nil {
				return err
			}
			if jsonOut != "" {
				b, _ := json.MarshalIndent(rep, "", "  ")
				if err := a.writeOutput(jsonOut, append(b, '\n')); err != nil {
					return err
				}
			}
			return a.show(rep, func() error {
				fmt.Fprintf(a.out, "cairn bench hooks: %d CPUs (%s), %s, %.0f s\n\n", rep.Machine.CPUs, rep.Machine.CPUModel, rep.Machine.GoVersion, rep.Seconds)
				bench.WriteHooksTable(a.out, rep)
				if want := rep.ToolHook.N + rep.ToolHookDirect.N + rep.PromptHook.N; rep.Spooled > 0 || rep.Written < want {
					return memory.Errorf(memory.CodeInternal, "%d hook writes missing, %d left in the spool", want-rep.Written, rep.Spooled)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&size, "size", "100k", "records in the database the hooks write to")
	f.IntVar(&o.Calls, "calls", o.Calls, "timed tool-call hooks (and process starts)")
	f.IntVar(&o.Warmup, "warmup", o.Warmup, "untimed tool-call hooks first")
	f.IntVar(&o.SessionStarts, "session-starts", o.SessionStarts, "timed session-start hooks")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "generator seed")
	f.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file (- for standard output)")
	f.StringVar(&dir, "dir", "", "directory for the temporary database (default the system's temporary directory)")
	f.BoolVar(&keep, "keep-tmp", false, "keep the temporary database")
	return cmd
}
