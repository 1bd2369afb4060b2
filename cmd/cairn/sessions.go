package main

import (
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"strings"

	"github.com/cairnhq/cairn"
	"github.com/spf13/cobra"
)

// newVoiceSessionsCmd is `cairn inner-voice sessions`: the tools
// inner_voice_sessions, inner_voice_session and inner_voice_session_delete.
func newVoiceSessionsCmd(a *app) *cobra.Command {
	var req cairn.VoiceSessionsRequest
	var limit int
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List the sessions inner_voice records its exchanges in; 'show' and 'delete' one",
		Long: `List the sessions of 'cairn inner-voice ask' (the MCP tool inner_voice_sessions),
the latest first: topic, model, exchanges, tokens and cost over the session's
life, its rolling summary, and which one is active (continued when no
--session is given, until SURR_INNER_VOICE_TIMEOUT, default 24 h, passes
without an exchange; each scope has its own). --scope lists the sessions
within a scope (each key given must match) and marks the active session of
exactly that scope. The totals add up the sessions listed (every page):
figures only.`,
		Example: `  cairn inner-voice sessions
  cairn inner-voice sessions --scope agent=reviewer
  cairn inner-voice sessions show ivs_01J...
  cairn inner-voice sessions delete ivs_01J...`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("limit") {
				req.Limit = &limit
			}
			return runEmit(a, func(eng *cairn.Engine) (cairn.VoiceSessionList, error) {
				return eng.VoiceSessions(cmd.Context(), req)
			}, func(res cairn.VoiceSessionList) error {
				if len(res.Sessions) == 0 {
					fmt.Fprintln(a.out, "no sessions")
				}
				for _, s := range res.Sessions {
					mark := " "
					if s.Active {
						mark = "*"
					}
					fmt.Fprintf(a.out, "%s %s  %s  %s, %d tokens, $%.4f  (%s%s)\n", mark, s.ID, fmtTime(s.LastInteraction),
						text.Plural(s.TotalExchanges, "exchange"), s.TotalTokens, s.TotalCost, modelName(s.Provider, s.Model), scopeSuffix(s.Scope))
					fmt.Fprintln(a.out, wrap(text.Excerpt(s.Topic, 200), 78, "  "))
				}
				t := res.Totals
				fmt.Fprintf(a.out, "-- %s, %s (%d refused, %d answered without the model), %d+%d tokens, $%.4f, mean coverage %.2f\n",
					text.Plural(t.Sessions, "session"), text.Plural(t.Exchanges, "exchange"), t.Refused, t.Degraded, t.PromptTokens, t.CompletionTokens, t.Cost, t.MeanCoverage)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&limit, "limit", 100, "most sessions to list (1 to 1000)")
	f.IntVar(&req.Offset, "offset", 0, "sessions to skip")
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "only sessions within this scope, as session=..,repo=..,agent=..,user=.. (repeatable)")
	f.BoolVar(&req.IncludePrivate, "private", false, "show summaries drawn from private thoughts")
	cmd.AddCommand(newVoiceSessionShowCmd(a), newVoiceSessionDeleteCmd(a))
	return cmd
}

func newVoiceSessionShowCmd(a *app) *cobra.Command {
	var req cairn.VoiceSessionRequest
	var limit int
	cmd := &cobra.Command{
		Use:   "show SESSION_ID",
		Short: "Show a session and its exchanges",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.SessionID = args[0]
			if cmd.Flags().Changed("limit") {
				req.Limit = &limit
			}
			return runEmit(a, func(eng *cairn.Engine) (cairn.VoiceSessionView, error) {
				return eng.VoiceSession(cmd.Context(), req)
			}, func(res cairn.VoiceSessionView) error {
				s := res.Session
				fmt.Fprintf(a.out, "%s  %q  (%s, budget %d tokens%s)\n", s.ID, s.Topic, modelName(s.Provider, s.Model), s.MaxPromptTokens, scopeSuffix(s.Scope))
				fmt.Fprintf(a.out, "%s, %d tokens, $%.4f; started %s, last %s\n", text.Plural(s.TotalExchanges, "exchange"), s.TotalTokens, s.TotalCost,
					fmtTime(s.CreatedAt), fmtTime(s.LastInteraction))
				if s.Summary.Text != "" || s.Hidden {
					fmt.Fprintf(a.out, "\nsummary of exchanges 1-%d:\n", s.SummarizedThrough)
					if s.Hidden {
						fmt.Fprintln(a.out, "  (drawn from private thoughts: --private shows it)")
					} else {
						fmt.Fprintln(a.out, wrap(s.Summary.Text, 78, "  "))
					}
				}
				for _, x := range res.Exchanges {
					fmt.Fprintf(a.out, "\n%d. %s  %s\n", x.Seq, fmtTime(x.Timestamp), text.Excerpt(x.Query, 300))
					switch {
					case x.Refused:
						fmt.Fprintf(a.out, "   refused: %s\n", x.Notes)
					case x.Answer == "":
						fmt.Fprintf(a.out, "   (%s)\n", x.Notes)
					default:
						fmt.Fprintln(a.out, wrap(x.Answer, 78, "   "))
					}
					fmt.Fprintf(a.out, "   %s, coverage %.2f, %d+%d tokens, $%.4f, %d ms\n", x.Synthesizer, x.CoverageRatio, x.PromptTokens,
						x.CompletionTokens, x.CostEstimate, x.LatencyMs)
				}
				if res.NextAfter > 0 {
					fmt.Fprintf(a.out, "\n-- more: --after %d\n", res.NextAfter)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&req.After, "after", 0, "show exchanges after this one")
	f.IntVar(&limit, "limit", 100, "most exchanges to show (1 to 1000)")
	f.BoolVar(&req.IncludePrivate, "private", false, "show answers drawn from private thoughts")
	return cmd
}

func newVoiceSessionDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "delete SESSION_ID",
		Short: "Delete a session and its exchanges",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (cairn.VoiceSessionDeleted, error) {
				return eng.DeleteVoiceSession(cmd.Context(), cairn.VoiceSessionRef{SessionID: args[0]})
			}, func(res cairn.VoiceSessionDeleted) error {
				fmt.Fprintf(a.out, "deleted session %s and its %s\n", res.Deleted, text.Plural(res.Exchanges, "exchange"))
				return nil
			})
		},
	}
}

// modelName is a session's provider and model ("openai gpt-4o-mini"), or
// the model alone without a provider ("extractive").
func modelName(provider, model string) string {
	return strings.TrimSpace(provider + " " + model)
}
