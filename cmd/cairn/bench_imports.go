package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newBenchImportsCmd(a *app) *cobra.Command {
	var size string
	o := bench.ImportsOptions{Clients: 6, Retry: true}
	cmd := &cobra.Command{
		Use:   "imports",
		Short: "Measure the memory of 'cairn serve' under concurrent large imports",
		Long: `Start 'cairn serve' on a new database in a temporary directory, send
--clients imports (POST /v1/import) of --size each at once, JSON Lines of
about 2 KiB a line made as they are sent, and report how the server
answered and its peak resident memory (from the operating system, after it
stops). The server runs at most a few imports at once and answers the rest
503 with Retry-After; with --retry (the default) such a client waits as told
and sends its import again, until every import is written. Then one search
makes the retrieval index catch up on what the imports wrote, before the
server stops.`,
		Example: `  cairn bench imports
  cairn bench imports --clients 6 --size 250MiB --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := parseMiB(size)
			if err != nil {
				return err
			}
			o.Bytes = n
			if o.Binary, err = os.Executable(); err != nil {
				return memory.Wrap(memory.CodeInternal, err, "finding the cairn binary: %v", err)
			}
			o.Progress = a.err
			rep, err := bench.RunImports(cmd.Context(), o)
			if err != nil {
				return err
			}
			return a.show(rep, func() error {
				fmt.Fprintf(a.out, "%d imports of %d MiB sent at once: %d written (%d records), %d failed, %d busy answers, %.1f s; a search after them %.1f s\n",
					rep.Clients, rep.BodyBytes>>20, rep.Accepted, rep.Records, rep.Failed, rep.Busy, rep.Seconds, rep.SearchSeconds)
				fmt.Fprintf(a.out, "server resident memory: %.0f MiB at start, %.0f MiB at peak (sampled peaks: %.0f MiB anonymous, %.0f MiB file-backed)\n",
					rep.StartRSSMiB, rep.PeakRSSMiB, rep.PeakAnonMiB, rep.PeakFileMiB)
				for _, e := range rep.Errors {
					fmt.Fprintf(a.out, "  failed: %s\n", e)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Clients, "clients", o.Clients, "imports sent at once")
	f.StringVar(&size, "size", "250MiB", "size of each import (MiB)")
	f.BoolVar(&o.Retry, "retry", o.Retry, "send an import refused as busy again after its Retry-After")
	return cmd
}

// parseMiB reads a size in MiB ("250MiB", "250").
func parseMiB(s string) (int64, error) {
	var n int64
	if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimSpace(s), "MiB"), "%d", &n); err != nil || n <= 0 {
		return 0, memory.Errorf(memory.CodeInvalidParams, "--size %q: want a number of MiB such as 250MiB", s)
	}
	return n << 20, nil
}
