package main

import (
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"strconv"

	"github.com/cairnhq/cairn"
	"github.com/spf13/cobra"
)

// newMaintenanceCmd is `cairn maintenance`: the maintenance_ops tool.
func newMaintenanceCmd(a *app) *cobra.Command {
	var archiveDir string
	var retention int
	cmd := &cobra.Command{
		Use:   "maintenance",
		Short: "Archive and remove thoughts marked for removal",
		Long: `The removal lifecycle of thoughts (the MCP tool maintenance_ops). Thoughts are
marked for removal by 'cairn thoughts mark', by 'cairn inner-voice ask
--auto-mark-removal' or by 'cairn maintenance mark'. 'list' shows them with
whether each can be finalized; 'export' writes those not yet exported to a new
archive file (Parquet by default, or JSON lines) in the archive directory
(SURR_ARCHIVE_DIR, default ./archive/, or --archive-dir); 'finalize' deletes,
erasing their text, those exported to an archive that is still intact and
marked at least the retention period ago (SURR_RETENTION_DAYS, default 30, or
--retention-days), and says why it leaves the others.`,
		Example: `  cairn maintenance list
  cairn maintenance export --format jsonl
  cairn maintenance finalize --dry-run
  cairn maintenance mark th_01J...`,
		Args: usageArgs(cobra.NoArgs),
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			a.started = true
			if cmd.Flags().Changed("archive-dir") {
				a.setenv("SURR_ARCHIVE_DIR", archiveDir)
			}
			if cmd.Flags().Changed("retention-days") {
				a.setenv("SURR_RETENTION_DAYS", strconv.Itoa(retention))
			}
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&archiveDir, "archive-dir", "", "where archives are written (default SURR_ARCHIVE_DIR or ./archive/)")
	pf.IntVar(&retention, "retention-days", 30, "days a thought stays after its marking (default SURR_RETENTION_DAYS)")
	cmd.AddCommand(
		newMaintenanceOpCmd(a, cairn.OpListRemovalCandidates, "list", "List thoughts marked for removal, oldest mark first"),
		newMaintenanceOpCmd(a, cairn.OpExportRemovals, "export", "Write the marked thoughts not yet exported to a new archive file"),
		newMaintenanceOpCmd(a, cairn.OpFinalizeRemoval, "finalize [THOUGHT_ID...]", "Delete the exported thoughts whose retention has passed"),
		newMaintenanceOpCmd(a, cairn.OpMarkRemoval, "mark THOUGHT_ID...", "Mark thoughts for removal"))
	return cmd
}

func newMaintenanceOpCmd(a *app, op, use, short string) *cobra.Command {
	var req cairn.MaintenanceRequest
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Subcommand, req.ThoughtIDs = op, args
			return runEmit(a, func(eng *cairn.Engine) (cairn.MaintenanceResult, error) {
				return eng.Maintenance(cmd.Context(), req)
			}, func(res cairn.MaintenanceResult) error {
				printMaintenance(a, res)
				return nil
			})
		},
	}
	switch op {
	case cairn.OpListRemovalCandidates, cairn.OpExportRemovals:
		cmd.Args = usageArgs(cobra.NoArgs)
	case cairn.OpMarkRemoval:
		cmd.Args = usageArgs(cobra.MinimumNArgs(1))
	}
	f := cmd.Flags()
	if op != cairn.OpListRemovalCandidates {
		f.BoolVar(&req.DryRun, "dry-run", false, "say what would happen, write nothing")
	}
	if op != cairn.OpMarkRemoval {
		f.IntVar(&req.Limit, "limit", 100, "most thoughts to handle (1 to 10000)")
		f.IntVar(&req.Offset, "offset", 0, "skip this many, oldest mark first")
	}
	if op == cairn.OpExportRemovals {
		f.StringVar(&req.Format, "format", "", "parquet or jsonl (default SURR_ARCHIVE_FORMAT or parquet)")
		f.StringVar(&req.OutputDir, "output-dir", "", "a folder inside the archive directory")
		f.BoolVar(&req.All, "all", false, "export thoughts already exported too")
	}
	return cmd
}

func printMaintenance(a *app, res cairn.MaintenanceResult) {
	dry := ""
	if res.DryRun {
		dry = " (dry run: nothing written)"
	}
	switch {
	case res.Export != nil:
		if e := res.Export; e.Archive != nil {
			fmt.Fprintf(a.out, "exported %s to %s (%s, %d bytes, sha256 %s)\n", text.Plural(e.Exported, "thought"), e.Archive.Path,
				e.Archive.Format, e.Archive.Bytes, e.Archive.SHA256[:16])
		} else if len(e.ThoughtIDs) > 0 {
			fmt.Fprintf(a.out, "would export %s%s\n", text.Plural(len(e.ThoughtIDs), "thought"), dry)
		} else {
			fmt.Fprintln(a.out, "nothing to export")
		}
	case res.Finalize != nil:
		verb := "deleted"
		if res.DryRun {
			verb = "would delete"
		}
		fmt.Fprintf(a.out, "%s %s%s\n", verb, text.Plural(len(res.Finalize.Finalized), "thought"), dry)
		for _, id := range res.Finalize.Finalized {
			fmt.Fprintf(a.out, "  %s\n", id)
		}
		for _, r := range res.Finalize.Refused {
			fmt.Fprintf(a.out, "kept %s: %s\n", r.ThoughtID, r.Reason)
		}
	case res.Marked != nil:
		fmt.Fprintf(a.out, "marked %s for removal%s\n", text.Plural(*res.Marked, "thought"), dry)
	case res.Candidates != nil:
		for _, c := range *res.Candidates {
			state := "finalizable"
			if !c.Finalizable {
				state = c.Reason
			}
			marked := c.MarkedAt
			if marked == "" {
				marked = "mark time unknown"
			}
			fmt.Fprintf(a.out, "%s  marked %s  %s\n   %s\n", c.ThoughtID, marked, text.Excerpt(c.Excerpt, 70), state)
		}
		if len(*res.Candidates) == 0 {
			fmt.Fprintln(a.out, "no thoughts are marked for removal")
		}
		fmt.Fprintf(a.out, "-- retention %d days, archive %s (%s)\n", res.RetentionDays, res.ArchiveDir, res.Format)
	}
}
