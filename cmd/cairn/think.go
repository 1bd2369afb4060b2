package main

import (
	"fmt"
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
			eng, err := a.engine()
			if err != nil {
				return err
			}
			th, err := eng.Think(cmd.Context(), req)
			if err != nil {
				return err
			}
			if a.json {
				return a.emit(th)
			}
			fmt.Fprintf(a.out, "thought %s (%s%s%s)\n", th.ID, th.Origin, tagSuffix(th.Tags), scopeSuffix(th.Scope))
			return nil
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
	return cmd
}

func newThoughtsCmd(a *app) *cobra.Command {
	var req cairn.ThoughtsRequest
	cmd := &cobra.Command{
		Use:   "thoughts",
		Short: "List thoughts, newest first",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			list, err := eng.Thoughts(cmd.Context(), req)
			if err != nil {
				return err
			}
			if a.json {
				return a.emit(list)
			}
			for _, t := range list.Thoughts {
				priv := ""
				if t.IsPrivate {
					priv = " private"
				}
				fmt.Fprintf(a.out, "%s  %s  %s%s%s  %s\n", t.ID, fmtTime(t.CreatedAt), t.Origin, priv, tagSuffix(t.Tags), oneLine(t.Content, 80))
			}
			if len(list.Thoughts) == 0 {
				fmt.Fprintln(a.out, "no thoughts")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&req.Limit, "limit", 100, "most thoughts to list (1 to 1000)")
	f.BoolVar(&req.IncludePrivate, "private", false, "include private thoughts")
	f.StringVar(&req.Status, "status", "", "only thoughts with this status: active or removal")
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "only thoughts in this scope")
	return cmd
}

func tagSuffix(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return " #" + strings.Join(tags, " #")
}
