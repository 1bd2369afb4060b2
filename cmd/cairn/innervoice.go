package main

import (
	"fmt"
	"github.com/cairnhq/cairn"
	"strings"

	"github.com/spf13/cobra"
)

func newInnerVoiceCmd(a *app) *cobra.Command {
	var req cairn.InnerVoiceRequest
	var topK int
	var mix, floor float64
	cmd := &cobra.Command{
		Use:   "inner-voice [query...]",
		Short: "Retrieve snippets of thoughts and the knowledge graph for a query; 'ask' answers from them",
		Long: `Retrieve the thoughts and knowledge-graph records most similar in meaning to a
query, with provenance and trust tiers, for an agent to reason over and cite:
inner_voice.retrieve (the MCP tool inner_voice_retrieve). Retrieval only: it
never writes an answer ('cairn inner-voice ask' does). The query is the
arguments, or standard input.

It is disabled unless SURR_ENABLE_INNER_VOICE=1 (exit code 5,
feature_disabled). --top-k snippets (1 to 50) are split between the graph and
thoughts by --mix (the graph's share), at least one from each when both have
hits; --floor is the minimum cosine similarity, lowered toward
SURR_INNER_VOICE_MIN_FLOOR so that each source can contribute. Trust tiers:
green for the graph and human or logged thoughts, amber for tool thoughts,
red for model thoughts.`,
		Example: `  SURR_ENABLE_INNER_VOICE=1 cairn inner-voice "patterns in coordination failures"
  SURR_ENABLE_INNER_VOICE=1 cairn inner-voice --top-k 5 --mix 0 --exclude-tag draft --json "clock skew"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := a.readText(args, "query")
			if err != nil {
				return err
			}
			req.Query = q
			if cmd.Flags().Changed("top-k") {
				req.TopK = &topK
			}
			if cmd.Flags().Changed("mix") {
				req.Mix = &mix
			}
			if cmd.Flags().Changed("floor") {
				req.Floor = &floor
			}
			return runEmit(a, func(eng *cairn.Engine) (cairn.InnerVoiceResult, error) {
				return eng.InnerVoice(cmd.Context(), req)
			}, func(res cairn.InnerVoiceResult) error {
				for i, s := range res.Snippets {
					fmt.Fprintf(a.out, "%d. [%s] %.3f  %s %s  (%s, %s)\n", i+1, s.TrustTier, s.Score, s.SourceType, s.ID, s.Origin, s.CreatedAt)
					fmt.Fprintln(a.out, wrap(s.Text, 78, "   "))
				}
				d := res.Diagnostics
				if d.NoResults {
					fmt.Fprintf(a.out, "no snippets (%s)\n", strings.ReplaceAll(d.Reason, "_", " "))
				}
				fmt.Fprintf(a.out, "-- %s/%s/%d, %d of %d asked, %d KG and %d thought candidates, floor %.2f (asked %.2f), %d ms\n",
					d.Provider, d.Model, d.Dim, d.KRet, d.KReq, d.KGCandidates, d.ThoughtCandidates, d.FloorUsed, d.FloorRequested, d.LatencyMs)
				if d.DimExcluded > 0 {
					fmt.Fprintf(a.out, "-- %d records have no vector in this space yet: run cairn reembed\n", d.DimExcluded)
				}
				for _, c := range d.Clamped {
					fmt.Fprintf(a.out, "-- clamped %s\n", c)
				}
				if len(d.UnknownTags) > 0 {
					fmt.Fprintf(a.out, "-- no record carries the tags %s\n", strings.Join(d.UnknownTags, ", "))
				}
				return nil
			})
		},
	}
	cmd.AddCommand(newInnerVoiceAskCmd(a), newVoiceSessionsCmd(a))
	f := cmd.Flags()
	f.IntVar(&topK, "top-k", 10, "most snippets to return (1 to 50; default SURR_INNER_VOICE_TOPK_DEFAULT)")
	f.Float64Var(&mix, "mix", 0.6, "the knowledge graph's share of the snippets, 0 (thoughts only) to 1 (graph only); default SURR_INNER_VOICE_MIX")
	f.Float64Var(&floor, "floor", 0.35, "minimum cosine similarity (default CAIRN_INNER_VOICE_FLOOR)")
	f.BoolVar(&req.IncludePrivate, "private", false, "include private thoughts")
	f.StringSliceVar(&req.IncludeTags, "include-tag", nil, "only items with one of these tags (repeatable)")
	f.StringSliceVar(&req.ExcludeTags, "exclude-tag", nil, "leave out items with any of these tags (repeatable)")
	return cmd
}
