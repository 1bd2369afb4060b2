package main

import (
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"strings"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newThinkCmd(a *app) *cobra.Command {
	var req cairn.ThinkRequest
	var origin string
	var significance float64
	cmd := &cobra.Command{
		Use:   "think [thought...]",
		Short: "Record a thought: a conclusion, decision, lesson or pattern",
		Long: `Record a thought worth keeping: a conclusion, a decision and its reason, a
lesson, a pattern noticed. The text is the arguments, or standard input when
there are none (or "-"). It is embedded for semantic recall by
'cairn inner-voice'.

--origin says who produced it and sets its trust tier there: human and logged
are green, tool amber, model (the default) red. --private keeps it out of
retrieval unless private thoughts are asked for.`,
		Example: `  cairn think --origin human --tag auth "Clock skew breaks session checks; allow 5s."
  cairn think --tag ops --private "The staging password rotates on Mondays."
  cairn thoughts --limit 20`,
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := a.readText(args, "thought")
			if err != nil {
				return err
			}
			req.Content = text
			req.Origin = memory.Origin(origin)
			if cmd.Flags().Changed("significance") {
				req.Significance = &significance
			}
			return runEmit(a, func(eng *cairn.Engine) (memory.Thought, error) {
				return eng.Think(cmd.Context(), req)
			}, func(th memory.Thought) error {
				fmt.Fprintf(a.out, "thought %s (%s%s%s)\n", th.ID, th.Origin, tagSuffix(th.Tags), scopeSuffix(th.Scope))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&origin, "origin", string(memory.OriginModel), "who produced it: human, tool, model or logged")
	f.StringSliceVar(&req.Tags, "tag", nil, "a tag (repeatable, or comma-separated)")
	f.BoolVar(&req.IsPrivate, "private", false, "keep it out of retrieval unless private thoughts are asked for")
	f.Float64Var(&significance, "significance", 0.5, "how much it matters, 0 to 1")
	f.BoolVar(&req.IsSummary, "summary", false, "it summarises the thoughts given with --summary-of")
	f.StringSliceVar(&req.SummaryOf, "summary-of", nil, "ids of the thoughts it summarises")
	f.StringVar(&req.Pipeline, "pipeline", "", "what produced it, e.g. inner_voice")
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "scope as session=..,repo=..,agent=..,user=.. (repeatable)")
	f.StringVar(&req.ID, "id", "", "id to use (default: a new th_ id)")
	f.StringVar(&req.IdempotencyKey, "idempotency-key", "", "key of this write: running the command again with the same key returns the first result instead of writing twice")
	return cmd
}

func newThoughtsCmd(a *app) *cobra.Command {
	var req cairn.ThoughtsRequest
	cmd := &cobra.Command{
		Use:   "thoughts",
		Short: "List thoughts, newest first",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (cairn.ThoughtList, error) {
				return eng.Thoughts(cmd.Context(), req)
			}, func(list cairn.ThoughtList) error {
				for _, t := range list.Thoughts {
					flags := ""
					if t.IsPrivate {
						flags += " private"
					}
					if t.Status != memory.StatusActive {
						flags += " " + t.Status
					}
					if t.Redacted {
						flags += " forgotten"
					}
					fmt.Fprintf(a.out, "%s  %s  %s%s%s  %s\n", t.ID, fmtTime(t.CreatedAt), t.Origin, flags, tagSuffix(t.Tags), text.Excerpt(t.Content, 80))
				}
				if len(list.Thoughts) == 0 {
					fmt.Fprintln(a.out, "no thoughts")
				}
				return nil
			})
		},
	}
	cmd.AddCommand(newThoughtsMarkCmd(a))
	f := cmd.Flags()
	f.IntVar(&req.Limit, "limit", 100, "most thoughts to list (1 to 1000)")
	f.BoolVar(&req.IncludePrivate, "private", false, "include private thoughts")
	f.StringVar(&req.Status, "status", "", "only thoughts with this status: active or removal")
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "only thoughts in this scope")
	return cmd
}

func newThoughtsMarkCmd(a *app) *cobra.Command {
	var status string
	cmd := &cobra.Command{
		Use:   "mark THOUGHT_ID...",
		Short: "Mark thoughts for removal (never retrieved again) or active",
		Long: `Set thoughts' status. A thought marked removal is left out of every
retrieval (cairn inner-voice skips it) but keeps its text and still lists
with cairn thoughts; marked active, it is retrieved again. To erase a
thought's text, use cairn forget.`,
		Example: `  cairn thoughts mark th_01J...
  cairn thoughts mark --status active th_01J...`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			// Every thought is checked before any is marked.
			for _, id := range args {
				if _, err := eng.Thought(cmd.Context(), id); err != nil {
					return err
				}
			}
			var out []memory.Thought
			for _, id := range args {
				th, err := eng.MarkThought(cmd.Context(), cairn.MarkThoughtRequest{ThoughtID: id, Status: status})
				if err != nil {
					return err
				}
				out = append(out, th)
				a.say("thought %s %s\n", th.ID, th.Status)
			}
			return a.show(oneOrAll(out), noText)
		},
	}
	cmd.Flags().StringVar(&status, "status", memory.StatusRemoval, "removal or active")
	return cmd
}

func tagSuffix(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return " #" + strings.Join(tags, " #")
}
