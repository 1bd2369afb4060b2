package main

import (
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newRetrieveCmd(a *app) *cobra.Command {
	var req cairn.RetrieveRequest
	var maxCand, budget int
	var syntax string
	var explain bool
	cmd := &cobra.Command{
		Use:     "retrieve QUERY...",
		Aliases: []string{"recall", "search"},
		Short:   "Retrieve the memories that matter for a query",
		Long: `Retrieve, for a query and a scope, three tiers:

  pins             active pins in scope, newest first (never cut by a budget)
  current summary  the summary of the session's open capsule (never cut)
  candidates       observations and summaries ranked by
                   by the hybrid provider: BM25 with the context of neighbouring
                   records and the session, semantic similarity, recency

The query is plain text: any string is safe, its words are OR'ed and records
holding more of them rank higher. --provider local-fts ranks by the
contract's FTS5 bm25 and recency instead; --syntax fts passes FTS5 query
syntax (space = AND, OR, NOT, "phrases", prefix*, NEAR(...)) to local-fts.

When the embedder is unavailable, hybrid still answers, from words and
recency, and says "degraded" (embedder_unavailable).

Ties break by score, then id. With --now and the same data the output is
byte-identical.`,
		Example: `  cairn retrieve --scope repo=/src/shop "why did checkout say session expired?"
  cairn retrieve --syntax fts '"session expired" OR skew' --max-candidates 5 --json`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Query = strings.Join(args, " ")
			req.Syntax = memory.Syntax(syntax)
			if cmd.Flags().Changed("max-candidates") {
				req.MaxCandidates = &maxCand
			}
			if cmd.Flags().Changed("token-budget") {
				req.TokenBudget = &budget
			}
			return runEmit(a, func(eng *cairn.Engine) (cairn.RetrieveResult, error) {
				return eng.Retrieve(cmd.Context(), req)
			}, func(res cairn.RetrieveResult) error {
				printRetrieval(a.out, res, explain)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "scope as session=..,repo=..,agent=..,user=.. (repeatable)")
	f.IntVar(&maxCand, "max-candidates", 50, "most candidates to return (0 to 1000)")
	f.IntVar(&budget, "token-budget", 0, "token budget for everything returned (default: none)")
	f.BoolVar(&req.IncludeRedacted, "include-redacted", false, "also return pins whose target was forgotten")
	f.StringVar(&syntax, "syntax", string(memory.SyntaxText), "query syntax: text or fts (fts implies --provider local-fts)")
	f.StringVar(&req.Provider, "provider", "", "ranking provider: hybrid (default) or local-fts")
	f.BoolVar(&explain, "explain", false, "show how each score was computed")
	return cmd
}

// printRetrieval renders a retrieval for people.
func printRetrieval(w io.Writer, res cairn.RetrieveResult, explain bool) {
	p := res.Provenance
	scope := p.ScopeIDs.String()
	if scope == "" {
		scope = "everything"
	}
	fmt.Fprintf(w, "query %q  scope %s  provider %s  syntax %s  at %s\n", p.Query, scope, p.ProviderUsed, p.Syntax, fmtTime(p.Now))
	if len(p.SearchTerms) > 0 {
		fmt.Fprintf(w, "searched for: %s\n", strings.Join(p.SearchTerms, " "))
	}
	if p.Degraded == memory.CodeEmbedderUnavailable {
		fmt.Fprintf(w, "degraded (%s): the query could not be embedded; ranked by words and recency only\n", p.Degraded)
	} else if p.Degraded != "" {
		fmt.Fprintf(w, "degraded (%s)\n", p.Degraded)
	}
	budget := "no token budget"
	if p.TokenBudget != nil {
		budget = fmt.Sprintf("token budget %d", *p.TokenBudget)
		if p.TruncatedDueToTokenBudget {
			budget += " (cut)"
		}
	}
	fmt.Fprintf(w, "%d of %d candidates, %s, %s summary; ~%d tokens, %s\n",
		p.ReturnedCandidates, p.TotalCandidates, text.Plural(len(res.Pins), "pin"), map[bool]string{true: "a", false: "no"}[res.CurrentSummary != nil], p.TokensUsed, budget)

	if len(res.Pins) > 0 {
		fmt.Fprintf(w, "\nPINS\n")
		for _, pt := range res.Pins {
			exp := ""
			if pt.Pin.ExpiresAt != nil {
				exp = ", expires " + fmtTime(*pt.Pin.ExpiresAt)
			}
			fmt.Fprintf(w, "  %s  %s %s  pinned %s%s\n", pt.Pin.ID, pt.TargetType, pt.Target.ID(), fmtTime(pt.Pin.CreatedAt), exp)
			if pt.Pin.Reason != "" {
				fmt.Fprintf(w, "    reason: %s\n", pt.Pin.Reason)
			}
			fmt.Fprintln(w, wrap(pt.Target.Content(), 88, "    "))
		}
	}
	if s := res.CurrentSummary; s != nil {
		fmt.Fprintf(w, "\nCURRENT SUMMARY\n  %s  of %s  confidence %.2f  %s\n", s.ID, s.CapsuleID, s.Confidence, fmtTime(s.CreatedAt))
		fmt.Fprintln(w, wrap(s.Content, 88, "    "))
	}
	if len(res.Candidates) == 0 {
		fmt.Fprintf(w, "\nno candidates\n")
		return
	}
	fmt.Fprintf(w, "\nCANDIDATES\n")
	if explain {
		fmt.Fprintln(w, wrap(p.Scoring.Formula, 88, "  "))
		var params []string
		for _, k := range slices.Sorted(maps.Keys(p.Scoring.Params)) {
			params = append(params, fmt.Sprintf("%s %.6g", k, p.Scoring.Params[k]))
		}
		fmt.Fprintf(w, "  with %s\n\n", strings.Join(params, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "  #\tscore\t"
	for _, ch := range res.Candidates[0].Explanation.Children {
		header += ch.Name + "\t"
	}
	fmt.Fprintln(tw, header+"type\tid\ttime\t")
	for i, c := range res.Candidates {
		row := fmt.Sprintf("  %d\t%.4f\t", i+1, c.Score)
		for _, ch := range c.Explanation.Children {
			row += fmt.Sprintf("%.3f\t", ch.Value)
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t\n", row, c.EntityType, c.Entity.ID(), fmtTime(c.Entity.Time()))
	}
	tw.Flush()
	fmt.Fprintln(w)
	for i, c := range res.Candidates {
		fmt.Fprintf(w, "  %d. %s\n", i+1, c.Entity.ID())
		fmt.Fprintln(w, wrap(c.Entity.Content(), 88, "     "))
		if explain {
			printExplanation(w, c.Explanation, "     ")
		}
	}
}

func printExplanation(w io.Writer, e memory.Explanation, prefix string) {
	detail := ""
	if e.Detail != "" {
		detail = "  (" + e.Detail + ")"
	}
	fmt.Fprintf(w, "%s%s = %.6g%s\n", prefix, e.Name, e.Value, detail)
	for _, c := range e.Children {
		printExplanation(w, c, prefix+"  ")
	}
}
