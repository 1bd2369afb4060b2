package main

import (
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"io"
	"strings"

	"github.com/cairnhq/cairn"
	"github.com/spf13/cobra"
)

// askLong is `cairn inner-voice ask --help`.
const askLong = `Answer a question from your thoughts (the MCP tool inner_voice): retrieve the
thoughts most similar in meaning (--top-k, default SURR_TOP_K or 5; at least
--sim-thresh similar, default SURR_SIM_THRESH or 0.5), answer with their most
relevant sentences (about 600 characters, each cited), and save the answer as a
thought (is_summary, summary_of the sources, pipeline inner_voice) unless
--no-save. The question is the arguments, or standard input.

--stage-kg proposes knowledge-graph entities and edges found in the sources
(at least --confidence-min confident, at most --max-nodes and --max-edges),
staged for review with 'cairn kg candidates'; --auto-mark-removal then marks
for removal the sources a candidate came from (staged now, or pending or in
the graph already), none when the answer is refused ('cairn maintenance'
archives them).

With a language model configured (CAIRN_LLM_PROVIDER and its settings; see
'cairn config') the model answers from the knowledge graph's entities and facts
(--context kg, the default then; kg+thoughts or thoughts to include thoughts)
within a prompt budget (SURR_INNER_VOICE_MAX_TOKENS), and cairn checks every
sentence against the sources it cites: an answer not grounded enough is
refused. A model that fails gives way to the extractive answer, with the reason.

Each exchange is recorded in a session: --mode continue (the default: the
active session, or --session ID), new_thread (with --topic), or none (nothing
kept). 'cairn inner-voice sessions' lists them. --scope makes the session
someone's (agent=.., repo=.., session=.., user=..): continue then goes on with
the active session of exactly that scope, so agents sharing a database keep
their threads apart; it does not restrict the memories an answer draws on.

It is disabled unless SURR_ENABLE_INNER_VOICE=1 (exit code 5).`

// askExample is the examples of `cairn inner-voice ask --help`.
const askExample = `  SURR_ENABLE_INNER_VOICE=1 cairn inner-voice ask "why do session tokens expire early?"
  SURR_ENABLE_INNER_VOICE=1 cairn inner-voice ask --stage-kg --no-save --json "what does auth-service depend on?"
  SURR_ENABLE_INNER_VOICE=1 cairn inner-voice ask --scope repo=/src/auth,agent=reviewer "who owns the auth-service?"
  SURR_ENABLE_INNER_VOICE=1 CAIRN_LLM_PROVIDER=ollama CAIRN_LLM_MODEL=llama3.2 cairn inner-voice ask --mode new_thread --topic deploys "why did the deploy fail?"`

// askFlags are the flags of `cairn inner-voice ask` that set optional
// fields of the request.
type askFlags struct {
	topK, maxNodes, maxEdges int
	simThresh, confMin       float64
	noSave, autoMark         bool
}

// newInnerVoiceAskCmd is `cairn inner-voice ask`: the inner_voice tool.
func newInnerVoiceAskCmd(a *app) *cobra.Command {
	var req cairn.AskRequest
	var fl askFlags
	cmd := &cobra.Command{
		Use:     "ask [question...]",
		Short:   "Answer a question from your thoughts, and save the answer as a summary thought",
		Long:    askLong,
		Example: askExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := a.readText(args, "question")
			if err != nil {
				return err
			}
			r := fl.request(cmd, req, q)
			return runEmit(a, func(eng *cairn.Engine) (cairn.AskResult, error) { return eng.Ask(cmd.Context(), r) },
				func(res cairn.AskResult) error { printAnswer(a.out, r, res); return nil })
		},
	}
	f := cmd.Flags()
	f.IntVar(&fl.topK, "top-k", 5, "most thoughts to answer from (1 to 50; default SURR_TOP_K)")
	f.Float64Var(&fl.simThresh, "sim-thresh", 0.5, "minimum cosine similarity of a source (0 to 1; default SURR_SIM_THRESH)")
	f.BoolVar(&req.StageKG, "stage-kg", false, "stage knowledge-graph candidates extracted from the sources")
	f.Float64Var(&fl.confMin, "confidence-min", cairn.DefaultConfidenceMin, "minimum confidence of a staged candidate (0 to 1)")
	f.IntVar(&fl.maxNodes, "max-nodes", cairn.DefaultMaxNodes, "most entity candidates to stage")
	f.IntVar(&fl.maxEdges, "max-edges", cairn.DefaultMaxEdges, "most edge candidates to stage")
	f.BoolVar(&fl.noSave, "no-save", false, "do not save the answer (with no --stage-kg, --mode, --session or --scope nothing is written)")
	f.BoolVar(&fl.autoMark, "auto-mark-removal", false, "after staging, mark the sources whose knowledge was staged for removal (default SURR_AUTO_MARK_REMOVAL)")
	f.BoolVar(&req.IncludePrivate, "private", false, "answer from private thoughts too")
	f.StringSliceVar(&req.IncludeTags, "include-tag", nil, "only thoughts with one of these tags (repeatable)")
	f.StringSliceVar(&req.ExcludeTags, "exclude-tag", nil, "leave out thoughts with any of these tags (repeatable)")
	f.StringVar(&req.Mode, "mode", "", "continue (the active session; the default), new_thread, or none (nothing kept)")
	f.StringVar(&req.Topic, "topic", "", "a new thread's topic (default: the question)")
	f.StringVar(&req.SessionID, "session", "", "the session to continue")
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "whose session, as session=..,repo=..,agent=..,user=.. (repeatable): continue goes on with that scope's active session")
	f.StringVar(&req.Context, "context", "", "what the answer draws on: kg, kg+thoughts or thoughts (default: kg with a language model, thoughts without)")
	return cmd
}

// request is req with the question and the optional fields whose flags
// were given.
func (fl *askFlags) request(cmd *cobra.Command, req cairn.AskRequest, q string) cairn.AskRequest {
	req.Content = q
	f := cmd.Flags()
	if f.Changed("top-k") {
		req.TopK = &fl.topK
	}
	if f.Changed("sim-thresh") {
		req.SimThresh = &fl.simThresh
	}
	if f.Changed("confidence-min") {
		req.ConfidenceMin = &fl.confMin
	}
	if f.Changed("max-nodes") {
		req.MaxNodes = &fl.maxNodes
	}
	if f.Changed("max-edges") {
		req.MaxEdges = &fl.maxEdges
	}
	if fl.noSave {
		save := false
		req.Save = &save
	}
	if f.Changed("auto-mark-removal") {
		req.AutoMarkRemoval = &fl.autoMark
	}
	return req
}

// printAnswer writes an answer for a person: the answer (or why there is
// none), its sources, and what the call did.
func printAnswer(w io.Writer, req cairn.AskRequest, res cairn.AskResult) {
	d := res.Diagnostics
	g := res.Grounding
	switch {
	case res.Refused:
		fmt.Fprintln(w, g.Answer)
		fmt.Fprintln(w, wrap(g.Notes, 78, "  "))
	case res.SynthesizedAnswer == "":
		fmt.Fprintf(w, "no answer (%s)\n", strings.ReplaceAll(d.Reason, "_", " "))
	default:
		fmt.Fprintln(w, wrap(res.SynthesizedAnswer, 78, ""))
		fmt.Fprintf(w, "\ngrounded: coverage %.2f, confidence %.2f, %s cited\n", g.CoverageRatio, g.Confidence, text.Plural(len(g.Sources), "source"))
		for _, c := range g.Claims {
			if !c.Supported {
				fmt.Fprintln(w, wrap(fmt.Sprintf("removed as unsupported: %q (%s)", c.Text, c.Reason), 78, "  "))
			}
		}
	}
	if len(res.Sources) > 0 {
		fmt.Fprintln(w, "\nsources:")
	}
	for i, s := range res.Sources {
		fmt.Fprintf(w, "%d. %.3f  %s %s  [%s]\n", i+1, s.Similarity, s.SourceType, s.SourceID, s.TrustTier)
		fmt.Fprintln(w, wrap(text.Excerpt(s.Excerpt, 300), 78, "   "))
	}
	fmt.Fprintln(w)
	pv := res.Provenance
	if pv.DegradedFrom != "" {
		fmt.Fprintf(w, "answered by the %s synthesiser: %s\n", pv.Synthesizer, pv.DegradedReason)
	}
	if pv.Calls > 0 {
		fmt.Fprintf(w, "model %s/%s: %d call(s), %d+%d tokens, $%.4f\n", pv.Provider, pv.Model, pv.Calls, pv.PromptTokens, pv.CompletionTokens, pv.CostUSD)
	}
	if j := pv.Judge; j != nil {
		if j.Failed != "" {
			fmt.Fprintf(w, "grounding judge: no usable answer (%s); verified offline alone\n", j.Failed)
		} else {
			fmt.Fprintf(w, "grounding judge: %s withheld support, %d+%d tokens\n", text.Plural(j.Vetoed, "claim"), j.PromptTokens, j.CompletionTokens)
		}
	}
	printAskEffects(w, req, res)
}

// printAskEffects writes what an inner_voice call did besides answering:
// its session, the saved thought, staging and marking, and its
// diagnostics.
func printAskEffects(w io.Writer, req cairn.AskRequest, res cairn.AskResult) {
	d := res.Diagnostics
	if ss := res.Session; ss != nil {
		verb := "continued"
		if ss.Created {
			verb = "started"
		}
		fmt.Fprintf(w, "session %s (%s, exchange %d; %q%s)\n", ss.SessionID, verb, ss.Seq, ss.Topic, scopeSuffix(ss.Scope))
	}
	switch {
	case res.SavedThoughtID != "":
		fmt.Fprintf(w, "saved as thought %s\n", res.SavedThoughtID)
	case d.SaveSkipped != "":
		fmt.Fprintf(w, "not saved: %s\n", d.SaveSkipped)
	}
	if req.StageKG {
		ents := fmt.Sprintf("%d entities", res.Staged.PendingEntities)
		if res.Staged.PendingEntities == 1 {
			ents = "1 entity"
		}
		fmt.Fprintf(w, "staged %s and %s for review (cairn kg candidates); %d skipped, %d below confidence, %d over the caps\n",
			ents, text.Plural(res.Staged.PendingRelationships, "edge"),
			res.Staged.Skipped, res.Staged.BelowConfidence, res.Staged.OverCap)
	}
	if res.MarkedForRemoval > 0 {
		fmt.Fprintf(w, "marked %s for removal (cairn maintenance list)\n", text.Plural(res.MarkedForRemoval, "source"))
	}
	for _, c := range d.Clamped {
		fmt.Fprintf(w, "-- clamped %s\n", c)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(w, "-- %s\n", n)
	}
	fmt.Fprintf(w, "-- %s, top_k %d, sim_thresh %.2f, %d candidates compared, %d ms\n", d.Embedder, d.TopK, d.SimThresh, d.ThoughtCandidates, d.LatencyMs)
}
