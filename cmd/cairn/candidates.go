package main

import (
	"fmt"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

// newKGCandidatesCmd is `cairn kg candidates`: knowledge-graph candidates
// and their moderation (kg_candidates, knowledgegraph_moderate).
func newKGCandidatesCmd(a *app) *cobra.Command {
	var req cairn.CandidatesRequest
	var minConf float64
	cmd := &cobra.Command{
		Use:   "candidates",
		Short: "List, approve or reject knowledge-graph candidates staged by 'cairn inner-voice ask --stage-kg'",
		Long: `Knowledge-graph candidates are entities and edges that 'cairn inner-voice ask
--stage-kg' found in thoughts. Nothing reaches the graph until approved:
'approve' promotes a candidate (creating the entity or edge, or merging into
an existing one of the same name, with its source thought recorded);
'reject' drops it, and with --block its name (or edge) is never staged again.
Without a subcommand, it lists candidates: pending ones by default, most
confident first. Candidates extracted from private thoughts quote them, so
they are listed only with --include-private.`,
		Example: `  cairn kg candidates
  cairn kg candidates --kind edge --min-confidence 0.8
  cairn kg candidates approve kgc_01J... kgc_01K...
  cairn kg candidates reject --block kgc_01J...
  cairn kg candidates blocklist`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("min-confidence") {
				req.MinConfidence = &minConf
			}
			return runEmit(a, func(eng *cairn.Engine) (cairn.CandidateList, error) {
				return eng.Candidates(cmd.Context(), req)
			}, func(list cairn.CandidateList) error {
				for _, c := range list.Candidates {
					what := fmt.Sprintf("entity %s (%s)", c.Name, c.EntityType)
					if c.Kind == memory.CandidateEdge {
						what = fmt.Sprintf("edge   %s -%s-> %s", c.SourceName, c.Relation, c.TargetName)
					}
					status := ""
					if c.Status != memory.CandidatePending {
						status = "  " + c.Status
						if c.PromotedID != "" {
							status += " as " + c.PromotedID
						}
					}
					fmt.Fprintf(a.out, "%s  %.2f  %s  from %s%s\n", c.ID, c.Confidence, what, c.SourceThoughtID, status)
				}
				if len(list.Candidates) == 0 {
					fmt.Fprintln(a.out, "no candidates")
				}
				if list.PrivateExcluded > 0 {
					fmt.Fprintf(a.out, "%d from private thoughts not shown (--include-private lists them)\n", list.PrivateExcluded)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Kind, "kind", "", "entity or edge (default both)")
	f.StringVar(&req.Status, "status", "", "pending (default), approved, rejected or all")
	f.Float64Var(&minConf, "min-confidence", 0, "only candidates at least this confident")
	f.StringVar(&req.SourceThoughtID, "source", "", "only candidates extracted from this thought")
	f.IntVar(&req.Limit, "limit", 100, "most candidates to list (1 to 1000)")
	f.IntVar(&req.Offset, "offset", 0, "skip this many")
	f.BoolVar(&req.IncludePrivate, "include-private", false, "list candidates extracted from private thoughts too (they quote them)")
	cmd.AddCommand(newDecideCmd(a, "approve"), newDecideCmd(a, "reject"), newBlocklistCmd(a), newUnblockCmd(a))
	return cmd
}

func newDecideCmd(a *app, decision string) *cobra.Command {
	var item cairn.ModerateItem
	var dry bool
	cmd := &cobra.Command{
		Use:  decision + " CANDIDATE_ID...",
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (out cairn.ModerateResult, err error) {
				req := cairn.ModerateRequest{Action: "decide", DryRun: dry}
				for _, id := range args {
					it := item
					it.ID, it.Decision = id, decision
					req.Items = append(req.Items, it)
				}
				return eng.Moderate(cmd.Context(), req)
			}, func(res cairn.ModerateResult) error {
				for _, o := range res.Results {
					line := fmt.Sprintf("%s %s %s", o.Kind, o.ID, o.Status)
					if o.Reason != "" {
						line += ": " + o.Reason
					}
					if o.PromotedID != "" {
						line += " as " + o.PromotedID
					}
					if o.Merged {
						line += " (merged)"
					}
					if len(o.Created) > 0 {
						line += fmt.Sprintf(" (created %v)", o.Created)
					}
					if o.Blocked {
						line += " (blocked)"
					}
					if o.MarkedForRemoval > 0 {
						line += " (source marked for removal)"
					}
					fmt.Fprintln(a.out, line)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&item.Feedback, "feedback", "", "a note kept with the decision")
	f.BoolVar(&dry, "dry-run", false, "say what would happen, write nothing")
	if decision == "approve" {
		cmd.Short = "Promote candidates into the knowledge graph"
		f.StringVar(&item.CanonicalID, "canonical", "", "merge an entity candidate into this entity (ent_ id)")
		f.BoolVar(&item.MarkSourceRemoval, "mark-source-removal", false, "mark each candidate's source thought for removal")
	} else {
		cmd.Short = "Reject candidates"
		f.BoolVar(&item.Block, "block", false, "never stage these names (or edges) again")
	}
	return cmd
}

func newBlocklistCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "blocklist",
		Short: "List the names and edges that are never staged again",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (cairn.ModerateResult, error) {
				return eng.Moderate(cmd.Context(), cairn.ModerateRequest{Action: "blocklist"})
			}, func(res cairn.ModerateResult) error {
				for _, b := range res.Blocklist {
					fmt.Fprintf(a.out, "%-6s  %s  (rejected %s, %s)\n", b.Kind, b.Key, b.CandidateID, fmtTime(b.CreatedAt))
				}
				if len(res.Blocklist) == 0 {
					fmt.Fprintln(a.out, "the blocklist is empty")
				}
				return nil
			})
		},
	}
}

func newUnblockCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "unblock entity|edge KEY",
		Short:   "Let a blocked name (or edge) be staged again",
		Example: `  cairn kg candidates unblock entity redis`,
		Args:    usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (cairn.ModerateResult, error) {
				return eng.Moderate(cmd.Context(), cairn.ModerateRequest{Action: "unblock", Items: []cairn.ModerateItem{{Kind: args[0], Key: args[1]}}})
			}, func(res cairn.ModerateResult) error {
				fmt.Fprintf(a.out, "unblocked %s %s\n", res.Results[0].Kind, res.Results[0].ID)
				return nil
			})
		},
	}
}
