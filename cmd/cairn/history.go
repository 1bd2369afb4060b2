package main

import (
	"fmt"
	"strings"

	"github.com/cairnhq/cairn"
	"github.com/spf13/cobra"
)

func newHistoryCmd(a *app) *cobra.Command {
	var req cairn.HistoryRequest
	var limit int
	cmd := &cobra.Command{
		Use:   "history ID",
		Short: "Show what was done to a record, and when, from the ledger",
		Long: `Show a record's history, oldest first: every write that created, imported,
edited (and which fields), closed, marked or unmarked, exported, staged,
approved or rejected, forgot or deleted it, with the time (UTC) by the
clock of the process that wrote it. ID is any record's id (an observation,
capsule, summary, pin, thought, entity, fact, edge, candidate or
inner_voice session), or a code artifact's hash.

The ledger keeps no content and no old values: a forgotten or deleted
record's history stays readable, and holds none of its text. Entries
logged before the ledger existed show as "unknown" with no time. An id
that names no record and no history is not_found.`,
		Example: `  cairn history th_01J...
  cairn history --limit 20 --after 1234 obs_01J...
  cairn --json history ent_01J...`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.ID = args[0]
			if cmd.Flags().Changed("limit") {
				req.Limit = &limit
			}
			return runEmit(a, func(eng *cairn.Engine) (cairn.RecordHistory, error) {
				return eng.RecordHistory(cmd.Context(), req)
			}, func(res cairn.RecordHistory) error {
				if len(res.Entries) == 0 {
					fmt.Fprintf(a.out, "no entries for %s after %d\n", res.ID, req.After)
					return nil
				}
				for _, e := range res.Entries {
					when := "(time unknown)  "
					if e.At > 0 {
						when = fmtTime(e.At)
					}
					line := fmt.Sprintf("%s  %-8s %s", when, e.Op, e.Kind)
					if len(e.Fields) > 0 {
						line += " (" + strings.Join(e.Fields, ", ") + ")"
					}
					fmt.Fprintf(a.out, "%s  #%d\n", line, e.Seq)
				}
				if res.NextAfter > 0 {
					fmt.Fprintf(a.out, "-- more: --after %d\n", res.NextAfter)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.Int64Var(&req.After, "after", 0, "show entries after this one (its #number)")
	f.IntVar(&limit, "limit", 100, "most entries to show (1 to 1000)")
	return cmd
}
