package main

import (
	"fmt"
	"github.com/cairnhq/cairn/internal/text"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newCapsuleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "capsule",
		Short: "Open, summarise and close session capsules",
		Long: `A capsule groups the observations of one session or episode, in order, with
one summary. A session has at most one open capsule; observations logged with
its session id join it. While it is open its summary is the "current summary"
retrieval returns for that session.`,
	}
	cmd.AddCommand(newCapsuleOpenCmd(a), newCapsuleSummarizeCmd(a), newCapsuleCloseCmd(a), newCapsuleShowCmd(a))
	return cmd
}

func newCapsuleOpenCmd(a *app) *cobra.Command {
	var req cairn.OpenCapsuleRequest
	cmd := &cobra.Command{
		Use:     "open",
		Short:   "Open a capsule",
		Example: `  cairn capsule open --scope session=s1,repo=/src/shop --intent "fix the checkout bug"`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (memory.Capsule, error) {
				return eng.OpenCapsule(cmd.Context(), req)
			}, func(c memory.Capsule) error {
				fmt.Fprintf(a.out, "opened %s (%s%s)\n", c.ID, c.Type, scopeSuffix(c.Scope))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "scope as session=..,repo=..,agent=..,user=.. (repeatable)")
	f.StringVar(&req.Intent, "intent", "", "what the session is for")
	f.StringVar(&req.Type, "type", memory.CapsuleTypeSession, "capsule type (session, episode, ...)")
	f.StringVar(&req.ID, "id", "", "id to use (default: a new cap_ id)")
	f.StringVar(&req.IdempotencyKey, "idempotency-key", "", "key of this write: running the command again with the same key returns the first result instead of writing twice")
	return cmd
}

// summaryFlags are the flags of a summary.
type summaryFlags struct {
	text       string
	confidence float64
	evidence   []string
}

func (s *summaryFlags) add(cmd *cobra.Command, textFlag bool) {
	f := cmd.Flags()
	if textFlag {
		f.StringVar(&s.text, "summary", "", "summary of the capsule")
	}
	f.Float64Var(&s.confidence, "confidence", 1, "confidence in the summary, 0 to 1")
	f.StringSliceVar(&s.evidence, "evidence", nil, "ids of the records the summary rests on (comma-separated)")
}

func (s *summaryFlags) input(text string) *cairn.SummaryInput {
	c := s.confidence
	return &cairn.SummaryInput{Content: text, Confidence: &c, EvidenceRefs: s.evidence}
}

func newCapsuleCloseCmd(a *app) *cobra.Command {
	var sf summaryFlags
	cmd := &cobra.Command{
		Use:     "close CAPSULE_ID",
		Short:   "Close a capsule, optionally with its summary",
		Example: `  cairn capsule close cap_01J... --summary "Fixed the clock-skew bug; PR #412" --confidence 0.9`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := cairn.CloseCapsuleRequest{CapsuleID: args[0]}
			if cmd.Flags().Changed("summary") {
				req.Summary = sf.input(sf.text)
			}
			return runEmit(a, func(eng *cairn.Engine) (cairn.CloseCapsuleResult, error) {
				return eng.CloseCapsule(cmd.Context(), req)
			}, func(res cairn.CloseCapsuleResult) error {
				fmt.Fprintf(a.out, "closed %s (%d observations)\n", res.Capsule.ID, len(res.Capsule.ObservationIDs))
				if res.Summary != nil {
					fmt.Fprintf(a.out, "summary %s (confidence %.2f)\n", res.Summary.ID, res.Summary.Confidence)
				}
				return nil
			})
		},
	}
	sf.add(cmd, true)
	return cmd
}

func newCapsuleSummarizeCmd(a *app) *cobra.Command {
	var sf summaryFlags
	cmd := &cobra.Command{
		Use:   "summarize CAPSULE_ID [summary...]",
		Short: "Write or replace a capsule's summary (a running summary while it is open)",
		Long: `Write the summary of a capsule, replacing any earlier one (the summary keeps
its id, so pins on it stay). The text is the arguments, or standard input.`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := a.readText(args[1:], "summary")
			if err != nil {
				return err
			}
			return runEmit(a, func(eng *cairn.Engine) (memory.Summary, error) {
				return eng.SetSummary(cmd.Context(), cairn.SummaryRequest{CapsuleID: args[0], SummaryInput: *sf.input(text)})
			}, func(s memory.Summary) error {
				fmt.Fprintf(a.out, "summary %s of %s (confidence %.2f)\n", s.ID, s.CapsuleID, s.Confidence)
				return nil
			})
		},
	}
	sf.add(cmd, false)
	return cmd
}

func newCapsuleShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show CAPSULE_ID",
		Short: "Show a capsule, its observations and its summary",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (memory.Capsule, error) {
				return eng.Capsule(cmd.Context(), args[0])
			}, func(c memory.Capsule) error {
				closed := "open"
				if c.ClosedAt != nil {
					closed = "closed " + fmtTime(*c.ClosedAt)
				}
				fmt.Fprintf(a.out, "%s  %s  %s  opened %s, %s\n", c.ID, c.Type, c.Scope, fmtTime(c.OpenedAt), closed)
				if c.Intent != "" {
					fmt.Fprintf(a.out, "intent: %s\n", c.Intent)
				}
				if c.SummaryID != "" {
					s, err := a.eng.Summary(cmd.Context(), c.SummaryID)
					if err != nil {
						return err
					}
					fmt.Fprintf(a.out, "summary %s (confidence %.2f):\n", s.ID, s.Confidence)
					fmt.Fprintln(a.out, indent(s.Content, "  "))
				}
				fmt.Fprintf(a.out, "observations (%d):\n", len(c.ObservationIDs))
				for _, id := range c.ObservationIDs {
					o, err := a.eng.Observation(cmd.Context(), id)
					if err != nil {
						return err
					}
					fmt.Fprintf(a.out, "  %s  %-11s %s  %s\n", fmtTime(o.TS), o.Kind, o.ID, text.Excerpt(o.Content, 80))
				}
				return nil
			})
		},
	}
}
