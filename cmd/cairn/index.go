package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/spf13/cobra"
)

func newIndexCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Inspect, verify, rebuild or optimize the retrieval index",
		Long: `The retrieval index is what the hybrid provider and inner_voice search: the
records' terms, scopes, times, capsule places and vectors. It lives beside the
database (DATABASE-index/, or $CAIRN_INDEX_DIR) as immutable segment files
that every cairn process maps, so a new process answers in milliseconds
instead of rebuilding it. Writes made since the files were written are
replayed from the database at each search; long-running processes (cairn
serve, cairn mcp) write them out and merge files in the background.

The index is derived data: deleting its directory loses nothing, and any
damage is repaired by rebuilding it from the database.`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newIndexStatusCmd(a), newIndexRebuildCmd(a), newIndexVerifyCmd(a), newIndexOptimizeCmd(a))
	return cmd
}

func newIndexStatusCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show where the index lives, what it holds and how far behind it is",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (cairn.IndexStatus, error) {
				return eng.IndexStatus(cmd.Context())
			}, func(st cairn.IndexStatus) error {
				printIndexStatus(a, st)
				return nil
			})
		},
	}
}

func printIndexStatus(a *app, st cairn.IndexStatus) {
	w := a.out
	if st.InMemory {
		fmt.Fprintf(w, "in memory   %s\n", st.Reason)
	} else {
		fmt.Fprintf(w, "directory   %s\n", st.Dir)
	}
	fmt.Fprintf(w, "format      %d (generation %d)\n", st.Format, st.Generation)
	fmt.Fprintf(w, "segments    %d, %d documents (%d deleted), %s\n", st.Segments, st.Docs, st.Deleted, st.SizeText())
	fmt.Fprintf(w, "behind      %d changes of the database (replayed by each new process until written out)\n", st.Behind)
	fmt.Fprintf(w, "merges      %s\n", map[bool]string{true: "pending", false: "none pending"}[st.PendingMerges])
	if len(st.Approximate) > 0 {
		fmt.Fprintf(w, "approximate %v\n", st.Approximate)
	}
	if !st.Written.IsZero() {
		fmt.Fprintf(w, "written     %s\n", st.Written.Format(time.RFC3339))
	}
	if st.LastError != "" {
		fmt.Fprintf(w, "last error  %s\n", st.LastError)
	}
}

func newIndexRebuildCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild",
		Short: "Write the index anew from the database",
		Long: `Write the retrieval index anew from the database, whatever its files hold
(a progress bar shows on a terminal). Other processes move to the new files
at their next search. Needed only after damage cairn doctor reports; cairn
rebuilds by itself an index that is missing, damaged, of an older format or
of another embedder.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			t0 := time.Now()
			st, err := eng.RebuildIndex(cmd.Context())
			a.finishProgress()
			if err != nil {
				return err
			}
			return a.show(st, func() error {
				fmt.Fprintf(a.out, "rebuilt in %.1f s\n", time.Since(t0).Seconds())
				printIndexStatus(a, st)
				return nil
			})
		},
	}
}

func newIndexVerifyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Read every file of the index and check every checksum",
		Long: `Read every block of every file of the retrieval index and check its checksum
(searches check the blocks they read; this checks all). Exits 1 when a file
is damaged; cairn index rebuild (or cairn doctor --fix) repairs it.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			if err := eng.VerifyIndex(cmd.Context()); err != nil {
				return err
			}
			return a.show(map[string]bool{"ok": true}, func() error {
				fmt.Fprintln(a.out, "ok: every block of the retrieval index verifies")
				return nil
			})
		},
	}
}

func newIndexOptimizeCmd(a *app) *cobra.Command {
	var background bool
	cmd := &cobra.Command{
		Use:   "optimize",
		Short: "Write out recent records and run every merge that is due",
		Long: `Write out the records the index's files do not hold yet and run every merge
that is due, however large. A command exits after short merges only; cairn
serve and cairn mcp merge in the background; a command that leaves a large
merge due starts cairn index optimize --background, which does nothing if
another process is at it.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.background = background
			eng, err := a.engine()
			if err != nil {
				return err
			}
			st, err := eng.OptimizeIndex(cmd.Context(), !background)
			if err != nil || background {
				return err
			}
			return a.show(st, func() error {
				printIndexStatus(a, st)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&background, "background", false, "run quietly, and do nothing while another process maintains the index")
	cmd.Flags().MarkHidden("background")
	return cmd
}

// startBackgroundOptimize starts cairn index optimize --background,
// detached, when this command leaves the index work it did not do: a large
// merge, or more writes than a new process should replay (a hook that
// logs does not open the index; this keeps the next retrieve fast).
// Errors are ignored: the work is left for later.
func (a *app) startBackgroundOptimize(ctx context.Context) {
	if a.eng == nil || a.longRunning || a.background || !a.eng.IndexMaintenanceDue(ctx) {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	args := []string{"--db", a.eng.ConnString(), "index", "optimize", "--background"}
	if cairn.IsPostgres(a.eng.ConnString()) {
		// A connection string may hold a password: it goes to the child
		// in its environment, not on its command line where ps shows it.
		// (This process is about to exit.)
		os.Setenv(cairn.EnvDB, a.eng.ConnString())
		args = args[2:]
	}
	_ = startDetached(exe, args)
}
