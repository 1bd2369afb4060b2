package voice

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/graph"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
	"github.com/cairnhq/cairn/synth"
)

// The inner_voice tool (seed 001): retrieve thoughts for a question,
// synthesise an answer from them, save it as a summary thought, and
// optionally stage knowledge-graph candidates from the sources and mark
// the sources for removal.

// Bounds of inner_voice's staging parameters.
const (
	DefaultConfidenceMin = 0.6
	DefaultMaxNodes      = 30
	DefaultMaxEdges      = 60
	MaxStaged            = 1000
	// AskPipeline is the pipeline of the thoughts inner_voice saves.
	AskPipeline = "inner_voice"
)

// AskRequest is the inner_voice tool's parameters, with the
// specification's names.
type AskRequest struct {
	Content         string       `json:"content" jsonschema:"the question, in natural language"`
	TopK            *int         `json:"top_k,omitempty" jsonschema:"most thoughts to answer from; default SURR_TOP_K (5), clamped to 1..50"`
	SimThresh       *float64     `json:"sim_thresh,omitempty" jsonschema:"minimum cosine similarity of a source, 0 to 1; default SURR_SIM_THRESH (0.5)"`
	StageKG         bool         `json:"stage_kg,omitempty" jsonschema:"stage knowledge-graph candidates extracted from the sources, for knowledgegraph_moderate"`
	ConfidenceMin   *float64     `json:"confidence_min,omitempty" jsonschema:"minimum confidence of a staged candidate, 0 to 1; default 0.6"`
	MaxNodes        *int         `json:"max_nodes,omitempty" jsonschema:"most entity candidates to stage, 0 to 1000; default 30"`
	MaxEdges        *int         `json:"max_edges,omitempty" jsonschema:"most edge candidates to stage, 0 to 1000; default 60"`
	Save            *bool        `json:"save,omitempty" jsonschema:"save the answer as a summary thought (is_summary, summary_of the sources, pipeline inner_voice); default true"`
	AutoMarkRemoval *bool        `json:"auto_mark_removal,omitempty" jsonschema:"after staging, mark for removal the sources whose knowledge was staged (a candidate staged, pending or in the graph already; none when the answer is refused), for maintenance_ops to archive; default SURR_AUTO_MARK_REMOVAL (false)"`
	IncludePrivate  bool         `json:"include_private,omitempty" jsonschema:"answer from private thoughts too"`
	IncludeTags     []string     `json:"include_tags,omitempty" jsonschema:"only thoughts with at least one of these tags"`
	ExcludeTags     []string     `json:"exclude_tags,omitempty" jsonschema:"leave out thoughts with any of these tags"`
	Mode            string       `json:"mode,omitempty" jsonschema:"continue (the active session, or session_id, or a new one), new_thread (start a session), or none (stand alone: nothing of the exchange is kept), in any case; default continue, or none when save is false and neither session_id nor scopeIds is given"`
	Topic           string       `json:"topic,omitempty" jsonschema:"a new thread's topic, at most 200 characters (default: the question)"`
	SessionID       string       `json:"session_id,omitempty" jsonschema:"the session to continue (mode continue), even one past the session timeout"`
	ScopeIDs        memory.Scope `json:"scopeIds,omitzero" jsonschema:"whose session it is (sessionId, repoId, agentId, userId; each optional): continue goes on with the active session of exactly this scope, a new session gets it, and a session_id given with it must be of it; it does not restrict the memories an answer draws on; default none (the unscoped sessions)"`
	Context         string       `json:"context,omitempty" jsonschema:"what the answer may draw on: kg (knowledge-graph entities and facts only), kg+thoughts, or thoughts; default CAIRN_INNER_VOICE_CONTEXT, else kg with a language model and thoughts without"`
}

// AskSource is a thought or a knowledge-graph record the answer drew on.
type AskSource struct {
	// ThoughtID is set for a thought; SourceID and SourceType name any
	// source (thought, kg_entity, kg_observation).
	ThoughtID  string  `json:"thought_id,omitempty"`
	SourceID   string  `json:"source_id"`
	SourceType string  `json:"source_type"`
	Similarity float64 `json:"similarity"`
	// Excerpt is the thought's text, at most 800 characters cut at a
	// sentence end.
	Excerpt   string `json:"excerpt"`
	Origin    string `json:"origin"`
	TrustTier string `json:"trust_tier"`
}

// Staged counts the candidates a call staged.
type Staged struct {
	PendingEntities      int `json:"pending_entities"`
	PendingRelationships int `json:"pending_relationships"`
	// CandidateIDs are the candidates staged; Skipped counts those left
	// out as blocked, pending already or in the graph; BelowConfidence
	// and OverCap those under confidence_min or past the caps.
	CandidateIDs    []string `json:"candidate_ids"`
	Skipped         int      `json:"skipped"`
	BelowConfidence int      `json:"below_confidence"`
	OverCap         int      `json:"over_cap"`
}

// AskDiagnostics explain an inner_voice call, without content.
type AskDiagnostics struct {
	TopK      int     `json:"top_k"`
	SimThresh float64 `json:"sim_thresh"`
	// ThoughtCandidates is how many thoughts retrieval compared closely
	// (at most SURR_DB_LIMIT); BelowThreshold how many of the top_k most
	// similar records of the pools the context policy draws on scored
	// under sim_thresh (none of them is a source).
	ThoughtCandidates int `json:"thought_candidates"`
	KGCandidates      int `json:"kg_candidates"`
	BelowThreshold    int `json:"below_threshold"`
	// Deduped are the records deduplication left out because another
	// record holds the same text (a thought whose fact the graph holds),
	// each with the copy kept.
	Deduped []retrieve.DedupedItem `json:"deduped,omitempty"`
	// Context is the context policy applied (kg, kg+thoughts, thoughts).
	Context   string   `json:"context"`
	Clamped   []string `json:"clamped,omitempty"`
	NoResults bool     `json:"no_results,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	// SummariesLeftOut are summary thoughts left out of the sources
	// because thoughts they summarise are among them.
	SummariesLeftOut []string `json:"summaries_left_out,omitempty"`
	// SaveSkipped says why no thought was saved although save was true.
	SaveSkipped string `json:"save_skipped,omitempty"`
	// Degraded is embedder_unavailable when the question could not be
	// embedded and the sources were found by words instead, among the
	// WordPool most recent thoughts and graph records (SURR_DB_LIMIT of
	// each kind).
	Degraded string `json:"degraded,omitempty"`
	WordPool int    `json:"word_pool,omitempty"`
	// Notes are warnings that did not fail the call (a best-effort step
	// that failed).
	Notes     []string `json:"notes,omitempty"`
	Embedder  string   `json:"embedder"`
	LatencyMs int64    `json:"latency_ms"`
}

// AskResult is inner_voice's answer, in the specification's shape plus
// the answer's sentences with their citations.
type AskResult struct {
	SynthesizedAnswer string           `json:"synthesized_answer"`
	SavedThoughtID    string           `json:"saved_thought_id,omitempty"`
	Sources           []AskSource      `json:"sources"`
	Staged            Staged           `json:"staged"`
	MarkedForRemoval  int              `json:"marked_for_removal"`
	Sentences         []synth.Sentence `json:"sentences"`
	Synthesizer       string           `json:"synthesizer"`
	// Refused says the answer was refused: too little of it was grounded
	// in the sources (grounding.notes says what was missing).
	Refused bool `json:"refused,omitempty"`
	// Grounding is the grounding contract, computed by cairn: the answer
	// (or the refusal text), the citations that survived the checks
	// (source_id, source_type, span, relevance), confidence,
	// coverage_ratio, refused, notes, and each claim's verdict.
	Grounding synth.GroundedResponse `json:"grounding"`
	// Provenance says what answered and what it took.
	Provenance AskProvenance `json:"provenance"`
	// Session is the session the exchange was recorded in (absent with
	// mode none).
	Session     *AskSession    `json:"session,omitempty"`
	Diagnostics AskDiagnostics `json:"diagnostics"`
}

// AskProvenance says what answered an inner_voice call and what it took:
// never the prompt, only its hash.
type AskProvenance struct {
	Synthesizer string `json:"synthesizer"`
	// Provider and Model name the language model asked ("" without one).
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// DegradedFrom names the synthesiser that failed ("grounded") and
	// DegradedReason why, when the extractive synthesiser answered in its
	// place.
	DegradedFrom   string `json:"degraded_from,omitempty"`
	DegradedReason string `json:"degraded_reason,omitempty"`
	// Calls counts the model calls; the tokens and cost are theirs.
	Calls            int     `json:"calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// PromptHash is the hex SHA-256 of the prompt.
	PromptHash string `json:"prompt_hash,omitempty"`
	LatencyMs  int64  `json:"latency_ms"`
	// Prompt is how the prompt was fitted to its budget (with a model).
	Prompt *synth.Context `json:"prompt,omitempty"`
	// Judge is the grounding judge's share of the calls, tokens and cost
	// above, and how many claims it vetoed or why it failed (with
	// CAIRN_GROUNDING_JUDGE=1, when it was asked).
	Judge *synth.JudgeUsage `json:"judge,omitempty"`
}

// AskSession is the session an exchange was recorded in.
type AskSession struct {
	SessionID string `json:"session_id"`
	// Mode is continue or new_thread; Created says this call started the
	// session.
	Mode       string `json:"mode"`
	Created    bool   `json:"created"`
	ExchangeID string `json:"exchange_id"`
	Seq        int    `json:"seq"`
	Topic      string `json:"thread_topic"`
	// Scope is the session's scope (absent for an unscoped session).
	Scope memory.Scope `json:"scopeIds,omitzero"`
	// Lifetime totals of the session, this exchange included.
	TotalExchanges int     `json:"total_exchanges"`
	TotalTokens    int64   `json:"total_tokens"`
	TotalCost      float64 `json:"total_cost"`
	// Summarized says this call rolled the session's summary forward;
	// SummarizedThrough is the last exchange it covers.
	Summarized        bool `json:"summarized,omitempty"`
	SummarizedThrough int  `json:"summarized_through"`
}

// askWithDefaults is a Go program's AskConfig with the defaults in place
// of fields left unset (top_k and the candidate limit 0; a NaN
// threshold) and the others brought within their bounds.
func askWithDefaults(c synth.AskConfig) synth.AskConfig {
	if c.TopK <= 0 {
		c.TopK = synth.DefaultTopK
	}
	c.TopK = min(c.TopK, synth.MaxTopK)
	if math.IsNaN(c.SimThresh) {
		c.SimThresh = synth.DefaultSimThresh
	}
	c.SimThresh = min(1, max(0, c.SimThresh))
	if c.DBLimit <= 0 {
		c.DBLimit = synth.DefaultDBLimit
	}
	c.DBLimit = min(c.DBLimit, synth.MaxDBLimit)
	return c
}

// askParams are a request's parameters with defaults and bounds applied.
type askParams struct {
	topK               int
	simThresh, confMin float64
	maxNodes, maxEdges int
	save, autoMark     bool
}

func (v *Voice) askParams(req AskRequest, d *AskDiagnostics) (askParams, error) {
	p := askParams{topK: v.ask.TopK, simThresh: v.ask.SimThresh, confMin: DefaultConfidenceMin, maxNodes: DefaultMaxNodes,
		maxEdges: DefaultMaxEdges, save: true, autoMark: v.ask.AutoMarkRemoval}
	if req.TopK != nil {
		p.topK = min(synth.MaxTopK, max(1, *req.TopK))
		if p.topK != *req.TopK {
			d.Clamped = append(d.Clamped, fmt.Sprintf("top_k %d → %d", *req.TopK, p.topK))
		}
	}
	unit := func(name string, v *float64, dst *float64) error {
		if v == nil {
			return nil
		}
		if math.IsNaN(*v) || *v < 0 || *v > 1 {
			return memory.Errorf(memory.CodeInvalidParams, "%s %v is out of range [0, 1]", name, *v)
		}
		*dst = *v
		return nil
	}
	if err := unit("sim_thresh", req.SimThresh, &p.simThresh); err != nil {
		return p, err
	}
	if err := unit("confidence_min", req.ConfidenceMin, &p.confMin); err != nil {
		return p, err
	}
	count := func(name string, v *int, dst *int) error {
		if v == nil {
			return nil
		}
		if *v < 0 || *v > MaxStaged {
			return memory.Errorf(memory.CodeInvalidParams, "%s %d is out of range [0, %d]", name, *v, MaxStaged)
		}
		*dst = *v
		return nil
	}
	if err := count("max_nodes", req.MaxNodes, &p.maxNodes); err != nil {
		return p, err
	}
	if err := count("max_edges", req.MaxEdges, &p.maxEdges); err != nil {
		return p, err
	}
	if req.Save != nil {
		p.save = *req.Save
	}
	if req.AutoMarkRemoval != nil {
		p.autoMark = *req.AutoMarkRemoval
	}
	return p, nil
}

// Ask runs the inner_voice tool: it retrieves the records most similar to
// the question (the inner voice's retrieval over the persisted index, at
// most top_k at or above sim_thresh, comparing at most SURR_DB_LIMIT
// candidates per pool) under the context policy (kg: knowledge-graph
// entities and facts; thoughts; or both) or, while the embedder is
// unavailable, by the question's words among the SURR_DB_LIMIT most
// recent records of each kind (diagnostics.degraded), answers with the language
// model when one is configured (a prompt within the token budget, the
// session's summary and recent exchanges as context) or else the
// extractive synthesiser, checks the answer with the grounding verifier
// (refusing one not grounded enough), falls back to the extractive
// answer when the model fails, and then, in this order: stages
// knowledge-graph candidates extracted from the thoughts among the
// sources (stage_kg), saves the answer as a summary thought (save, default
// true; never when there is no answer, or it repeats a source word for
// word or only quotes one; private when a source is), marks for removal those
// of them whose knowledge was staged (auto_mark_removal: a candidate
// staged now, or one of the same key pending or in the graph already;
// never when the answer was refused; best effort), and
// records the exchange in its session (mode continue or new_thread; best
// effort), rolling the session's summary forward past ten exchanges. With
// save false, stage_kg false and mode none it writes nothing. It fails
// with feature_disabled unless the inner voice is enabled
// (SURR_ENABLE_INNER_VOICE=1).
func (v *Voice) Ask(ctx context.Context, req AskRequest) (AskResult, error) {
	a := &asking{req: req, start: time.Now(), res: AskResult{Sources: []AskSource{}, Sentences: []synth.Sentence{},
		Staged: Staged{CandidateIDs: []string{}}, Grounding: synth.GroundedResponse{Sources: []synth.SourceCitation{}}}}
	if err := v.prepare(ctx, a); err != nil {
		return a.res, err
	}
	defer func() {
		a.call.Latency = time.Since(a.start)
		v.observeVoice(ctx, a.call)
	}()
	if err := v.retrieveSources(ctx, a); err != nil {
		return a.res, err
	}
	if len(a.found.sources) == 0 {
		v.answerNothing(ctx, a)
		return a.res, nil
	}
	if err := v.synthesise(ctx, a); err != nil {
		return a.res, err
	}
	summary, err := v.summaryToSave(a)
	if err != nil {
		return a.res, err
	}
	// The writes, in an order a failure cannot make a retry duplicate:
	// staging first (a retry finds its candidates pending and stages none
	// again), then the summary (the last write that fails the call), then
	// the best-effort steps, marking and the session.
	yield, err := v.stageCandidates(ctx, a)
	if err != nil {
		return a.res, err
	}
	if err := v.save(ctx, a, summary); err != nil {
		return a.res, err
	}
	v.markForRemoval(ctx, a, yield)
	v.recordSession(ctx, a)
	a.res.Diagnostics.LatencyMs = time.Since(a.start).Milliseconds()
	return a.res, nil
}

// asking is one inner_voice call on its way: the request, its
// parameters, and what each step found.
type asking struct {
	req    AskRequest
	q      string
	p      askParams
	policy string
	thread voiceThread
	conv   synth.Conversation
	start  time.Time
	res    AskResult
	call   Call
	found  askFound
	g      groundedAnswer
}

// prepare checks the request and reads its parameters, context policy
// and session, before anything is retrieved.
func (v *Voice) prepare(ctx context.Context, a *asking) error {
	req, d := a.req, &a.res.Diagnostics
	if !v.recall.Config.Enabled {
		return memory.Errorf(memory.CodeFeatureDisabled, "inner_voice is disabled; set SURR_ENABLE_INNER_VOICE=1 to enable it")
	}
	if err := memory.ValidateText("content", req.Content, retrieve.MaxQueryBytes); err != nil {
		return err
	}
	if a.q = strings.TrimSpace(req.Content); a.q == "" {
		return memory.Errorf(memory.CodeInvalidParams, "content is empty: give the question to answer")
	}
	var err error
	if a.p, err = v.askParams(req, d); err != nil {
		return err
	}
	if req.StageKG && v.candidates == nil {
		return memory.Errorf(memory.CodeFeatureDisabled, "stage_kg: this store does not keep knowledge-graph candidates")
	}
	if req.StageKG && a.p.autoMark && v.removals == nil {
		return memory.Errorf(memory.CodeFeatureDisabled, "auto_mark_removal: this store does not keep the removal lifecycle")
	}
	if a.policy, err = v.contextPolicy(req.Context); err != nil {
		return err
	}
	if a.thread, a.conv, err = v.openThread(ctx, req, a.q, d); err != nil {
		return err
	}
	d.TopK, d.SimThresh, d.Context = a.p.topK, a.p.simThresh, a.policy
	d.Embedder = v.space.String()
	a.res.Synthesizer = v.primaryName()
	a.res.Provenance.Synthesizer = a.res.Synthesizer
	a.call = Call{Synthesizer: a.res.Synthesizer, Outcome: OutcomeNoSources}
	return nil
}

// retrieveSources finds the records the answer may draw on: the inner
// voice's pipeline, under the context policy.
func (v *Voice) retrieveSources(ctx context.Context, a *asking) error {
	d := &a.res.Diagnostics
	found, err := v.askSources(ctx, a.req, a.q, a.p, a.policy, d)
	if err != nil {
		return err
	}
	a.found = found
	if d.Degraded != "" {
		d.Notes = append(d.Notes, fmt.Sprintf("the embedder is unavailable: the sources were found by words, not by meaning, among the %d most recent "+
			"thoughts and graph records (at most SURR_DB_LIMIT %d of each kind); sim_thresh applied to the share of the question's words a source holds",
			d.WordPool, v.ask.DBLimit))
	}
	return nil
}

// answerNothing ends a call that found no source: it says why, and
// records the question in its session.
func (v *Voice) answerNothing(ctx context.Context, a *asking) {
	d := &a.res.Diagnostics
	d.NoResults, d.Reason = true, noResultsReason(a.policy, a.found.diag)
	if a.p.save {
		d.SaveSkipped = "no answer"
	}
	a.res.Grounding = synth.GroundedResponse{Answer: "", Sources: []synth.SourceCitation{}, Notes: "No memory was similar enough to the question."}
	if a.thread.mode != ModeNone {
		v.recordInto(ctx, &a.res, &a.call, a.thread, memory.InnerVoiceExchange{Query: a.q, Notes: a.res.Grounding.Notes, Synthesizer: a.res.Synthesizer,
			Timestamp: v.nowMs(), Sources: []memory.VoiceCitation{}, MemoriesReferenced: []string{}})
	}
	d.LatencyMs = time.Since(a.start).Milliseconds()
}

// synthesise answers from the sources and checks the answer, and says
// what answered and what it took.
func (v *Voice) synthesise(ctx context.Context, a *asking) error {
	res, d := &a.res, &a.res.Diagnostics
	g, err := v.ground(ctx, a.q, a.found.sources, a.conv)
	if err != nil {
		return err
	}
	a.g = g
	ans := g.answer
	for _, s := range g.used {
		res.Sources = append(res.Sources, a.found.byID[s.ID])
	}
	res.SynthesizedAnswer, res.Synthesizer, res.Refused, res.Grounding = ans.Text, ans.Name, ans.Refused, g.response
	if ans.Sentences != nil {
		res.Sentences = ans.Sentences
	}
	if ans.Refused {
		res.SynthesizedAnswer = ""
		d.Notes = append(d.Notes, "the answer was refused: "+ans.Notes)
	}
	pv := &res.Provenance
	pv.Synthesizer, pv.LatencyMs, pv.Prompt = ans.Name, g.latency.Milliseconds(), g.context
	pv.Calls, pv.PromptTokens, pv.CompletionTokens, pv.CostUSD, pv.PromptHash = g.usage.Calls, g.usage.PromptTokens,
		g.usage.CompletionTokens, g.usage.Cost, g.usage.PromptHash
	if j := g.usage.Judge; j != nil && j.Calls > 0 {
		pv.Judge = j
	}
	if c := v.grounded.llm; c != nil && (g.usage.Calls > 0 || g.degraded == "") {
		pv.Provider, pv.Model = c.Provider(), cmp.Or(g.usage.Model, c.Model())
	}
	if !v.grounded.costs && v.grounded.llm != nil {
		d.Notes = append(d.Notes, "cost tracking is off (SURR_INNER_VOICE_COST_TRACKING=0): no cost is computed or stored, and cost_usd is 0")
	}
	if g.degraded != "" {
		pv.DegradedFrom, pv.DegradedReason = synth.GroundedName, g.degraded
		d.Notes = append(d.Notes, "the language model did not answer ("+g.degraded+"): the extractive synthesiser answered")
	}
	c := &a.call
	c.Synthesizer, c.Degraded, c.Coverage = ans.Name, g.degraded != "", g.response.CoverageRatio
	c.PromptTokens, c.CompletionTokens, c.Cost = g.usage.PromptTokens, g.usage.CompletionTokens, g.usage.Cost
	c.Outcome = OutcomeAnswered
	if ans.Refused {
		c.Outcome = OutcomeRefused
	}
	return nil
}

// summaryToSave is the summary thought to save (nil: none, and
// diagnostics say why), checked before anything is written.
func (v *Voice) summaryToSave(a *asking) (*memory.Thought, error) {
	if !a.p.save {
		return nil, nil
	}
	d, ans, thoughts := &a.res.Diagnostics, a.g.answer, a.found.thoughts
	// An earlier summary left out of the sources still counts: an answer
	// that repeats it is not saved again.
	known := append(slices.Clone(thoughts), a.found.echoes...)
	switch dup, quoted, repeated := duplicateOf(ans.Text, known), quotesOnly(ans, thoughts), repeatsOne(ans, known); {
	case ans.Refused:
		d.SaveSkipped = "the answer was refused"
	case strings.TrimSpace(ans.Text) == "":
		d.SaveSkipped = "no answer"
	case dup != "":
		d.SaveSkipped = "the answer repeats thought " + dup + " word for word"
	case quoted != "":
		d.SaveSkipped = "the answer only quotes thought " + quoted
	case repeated != "":
		d.SaveSkipped = "the answer only repeats sentences of thought " + repeated
	default:
		summaryOf := make([]string, len(a.g.used))
		for i, s := range a.g.used {
			summaryOf[i] = s.ID
		}
		// An answer drawn from a private thought is private too.
		private := slices.ContainsFunc(thoughts, func(t memory.Thought) bool { return t.IsPrivate })
		th := memory.Thought{ID: v.newID("th"), Content: ans.Text, Origin: memory.OriginTool, Tags: []string{}, Status: memory.StatusActive,
			IsPrivate: private, Significance: 0.5, IsSummary: true, SummaryOf: summaryOf, Pipeline: AskPipeline, CreatedAt: v.nowMs(),
			Scope: commonScope(thoughts)}
		if err := v.checkThought(&th); err != nil {
			return nil, err
		}
		return &th, nil
	}
	return nil, nil
}

// stageCandidates stages knowledge-graph candidates extracted from the
// thoughts among the sources (stage_kg), and says what staging made of
// each thought.
func (v *Voice) stageCandidates(ctx context.Context, a *asking) (stagingYield, error) {
	d, thoughts, p := &a.res.Diagnostics, a.found.thoughts, a.p
	if !a.req.StageKG {
		if p.autoMark {
			d.Notes = append(d.Notes, "auto_mark_removal applies after staging: set stage_kg to mark the sources")
		}
		return stagingYield{}, nil
	}
	if len(thoughts) == 0 {
		d.Notes = append(d.Notes, "stage_kg extracts from thoughts, and no thought is among the sources (context "+a.policy+")")
	}
	texts := make([]graph.Text, len(thoughts))
	scopes, private := map[string]memory.Scope{}, map[string]bool{}
	for i, th := range thoughts {
		texts[i] = graph.Text{ID: th.ID, Content: th.Content}
		scopes[th.ID] = th.Scope
		private[th.ID] = th.IsPrivate
	}
	x := graph.Extract(texts)
	// A candidate quoting a private thought is marked private, so the
	// queue shows its sentence only to callers who ask for private records.
	plan := graph.Plan(x, graph.StageOptions{MinConfidence: p.confMin, MaxNodes: p.maxNodes,
		MaxEdges: p.maxEdges, NewID: v.newID, Now: v.nowMs(), Scopes: scopes, Private: private})
	staged := &a.res.Staged
	staged.BelowConfidence, staged.OverCap = plan.BelowConfidence, plan.OverCap
	yield := yieldOf(x, plan)
	if len(plan.Candidates) == 0 {
		return yield, nil
	}
	st, err := v.candidates.StageCandidates(ctx, plan.Candidates)
	if err != nil {
		return yield, err
	}
	for _, c := range st.Staged {
		staged.CandidateIDs = append(staged.CandidateIDs, c.ID)
		if c.Kind == memory.CandidateEdge {
			staged.PendingRelationships++
		} else {
			staged.PendingEntities++
		}
		yield.produce(c)
	}
	staged.Skipped = len(st.Skipped)
	for _, c := range st.Skipped {
		// The same knowledge waits for moderation, or is in the graph
		// already: the thought's knowledge is kept.
		if c.Feedback == "pending" || c.Feedback == "exists" {
			yield.produce(c)
		}
	}
	return yield, nil
}

// yieldOf is what an extraction and its plan made of each source
// thought so far: every thought that mentions an item counts for it (an
// item two thoughts state is one candidate, quoting one of them).
func yieldOf(x graph.Extraction, plan graph.StagePlan) stagingYield {
	y := stagingYield{extracted: map[string]bool{}, planned: map[string]bool{}, produced: map[string]bool{}, sources: map[string][]string{}}
	for _, en := range x.Entities {
		k := candidateKey(memory.CandidateEntity, memory.NameKey(en.Name))
		y.sources[k] = append(y.sources[k], en.SourceID)
		y.sources[k] = append(y.sources[k], en.SourceIDs...)
	}
	for _, g := range x.Edges {
		k := candidateKey(memory.CandidateEdge, memory.EdgeKey(g.Source, g.Relation, g.Target))
		y.sources[k] = append(y.sources[k], g.SourceID)
		y.sources[k] = append(y.sources[k], g.SourceIDs...)
	}
	for _, ids := range y.sources {
		for _, id := range ids {
			y.extracted[id] = true
		}
	}
	for _, c := range plan.Candidates {
		for _, id := range y.of(c) {
			y.planned[id] = true
		}
	}
	return y
}

func candidateKey(kind memory.CandidateKind, key string) string { return string(kind) + "\x00" + key }

// save saves the answer as a summary thought, and embeds it.
func (v *Voice) save(ctx context.Context, a *asking, summary *memory.Thought) error {
	if summary == nil {
		return nil
	}
	saved, err := v.thoughts.AddThought(ctx, *summary)
	if err != nil {
		return err
	}
	v.embed(ctx, []memory.EmbedJob{{Kind: memory.VectorThought, ID: saved.ID, Content: saved.Content}})
	a.res.SavedThoughtID = saved.ID
	return nil
}

// markForRemoval marks the sources whose knowledge was staged for
// removal (auto_mark_removal); best effort.
func (v *Voice) markForRemoval(ctx context.Context, a *asking, yield stagingYield) {
	if !a.req.StageKG || !a.p.autoMark || len(a.found.thoughts) == 0 {
		return
	}
	ids := make([]string, len(a.found.thoughts))
	for i, th := range a.found.thoughts {
		ids[i] = th.ID
	}
	v.autoMark(ctx, &a.res, ids, yield, a.g.answer.Refused)
}

// recordSession records the exchange in its session (not with mode
// none); best effort.
func (v *Voice) recordSession(ctx context.Context, a *asking) {
	if a.thread.mode == ModeNone {
		return
	}
	g, res := a.g, &a.res
	pv := res.Provenance
	x := memory.InnerVoiceExchange{Timestamp: v.nowMs(), Query: a.q, Answer: res.SynthesizedAnswer, Confidence: g.response.Confidence,
		CoverageRatio: g.response.CoverageRatio, Refused: g.answer.Refused, Notes: g.response.Notes, Synthesizer: g.answer.Name, Model: pv.Model,
		Degraded: g.degraded, PromptTokens: g.usage.PromptTokens, CompletionTokens: g.usage.CompletionTokens, LatencyMs: pv.LatencyMs,
		CostEstimate: g.usage.Cost, PromptHash: g.usage.PromptHash, Sources: []memory.VoiceCitation{}, MemoriesReferenced: []string{}}
	for _, c := range g.response.Sources {
		x.Sources = append(x.Sources, memory.VoiceCitation(c))
		if !slices.Contains(x.MemoriesReferenced, c.SourceID) {
			x.MemoriesReferenced = append(x.MemoriesReferenced, c.SourceID)
		}
	}
	thoughts := a.found.thoughts
	for _, c := range x.MemoriesReferenced {
		if i := slices.IndexFunc(thoughts, func(t memory.Thought) bool { return t.ID == c }); i >= 0 && thoughts[i].IsPrivate {
			x.Private = true
		}
	}
	v.recordInto(ctx, res, &a.call, a.thread, x)
}

// askFound are the records an answer may draw on.
type askFound struct {
	sources  []synth.Source
	thoughts []memory.Thought
	byID     map[string]AskSource
	// echoes are the summary thoughts left out because thoughts they
	// summarise are among the sources.
	echoes []memory.Thought
	diag   retrieve.InnerVoiceDiagnostics
}

// maxSourcePasses bounds the retrievals of one call: the first, and those
// that fill the places of summaries left out.
const maxSourcePasses = 3

// askSources retrieves the records an answer may draw on: the inner
// voice's pipeline under the context policy, at most top_k at or above
// sim_thresh. A saved summary would compete with the thoughts it
// summarises (the echo chamber the grounded specification warns of): a
// summary thought is left out when a thought of its summary_of is among
// the sources, and the retrieval goes on further down the ranking to fill
// its place. A summary whose originals are gone or not retrieved stays.
func (v *Voice) askSources(ctx context.Context, req AskRequest, q string, p askParams, policy string, d *AskDiagnostics) (askFound, error) {
	mix := 0.0
	switch policy {
	case synth.ContextKG:
		mix = 1
	case synth.ContextBoth:
		mix = v.recall.Config.Mix
	}
	var all []sourceCand
	seen := map[string]bool{}
	out := askFound{byID: map[string]AskSource{}}
	// echoOf names, for each summary to leave out, the originals among the
	// candidates.
	echoOf := map[string][]string{}
	k := p.topK
	for pass := 1; ; pass++ {
		iv, err := v.recall.Retrieve(ctx, retrieve.InnerVoiceRequest{Query: q, TopK: &k, Floor: &p.simThresh, Mix: &mix,
			IncludePrivate: req.IncludePrivate, IncludeTags: req.IncludeTags, ExcludeTags: req.ExcludeTags, CandidateCap: v.ask.DBLimit,
			WordsWhenDegraded: true})
		if err != nil {
			return out, err
		}
		out.diag = iv.Diagnostics
		d.ThoughtCandidates, d.KGCandidates = iv.Diagnostics.ThoughtCandidates, iv.Diagnostics.KGCandidates
		d.Degraded, d.WordPool = iv.Diagnostics.Degraded, iv.Diagnostics.WordPool
		if pass == 1 {
			// Of the top_k most similar records, those under sim_thresh,
			// whether or not the adaptive floor let them through (later
			// passes look further down the ranking than top_k).
			d.BelowThreshold = iv.Diagnostics.BelowFloor
		}
		d.Deduped = dedupedOf(d.Deduped, iv.Diagnostics.DedupedItems)
		exhausted := len(iv.Snippets) < k
		for _, s := range iv.Snippets {
			thought := s.SourceType == string(memory.VectorThought)
			if (policy == synth.ContextKG && thought) || (policy == synth.ContextThoughts && !thought) {
				exhausted = true
				continue // a pool the policy leaves out (the retrieval's backfill)
			}
			// The inner voice may lower its floor so a source has a hit;
			// sim_thresh is a hard threshold.
			if s.Score < p.simThresh {
				exhausted = true
				continue
			}
			if seen[s.ID] {
				continue // found by an earlier pass
			}
			seen[s.ID] = true
			c := sourceCand{src: synth.Source{ID: s.ID, Type: s.SourceType, Text: s.Text, Relevance: s.Score},
				ask: AskSource{SourceID: s.ID, SourceType: s.SourceType, Similarity: s.Score, Excerpt: s.Text, Origin: s.Origin, TrustTier: s.TrustTier}}
			if thought {
				th, err := v.thoughts.Thought(ctx, s.ID)
				if memory.IsCode(err, memory.CodeNotFound) {
					continue // finalized meanwhile
				} else if err != nil {
					return out, err
				}
				c.thought, c.ask.ThoughtID, c.src.Text = &th, th.ID, th.Content
			}
			all = append(all, c)
		}
		// Leave out the summaries whose originals are candidates.
		clear(echoOf)
		kept := 0
		for _, c := range all {
			if c.thought != nil && c.thought.IsSummary {
				for _, id := range c.thought.SummaryOf {
					if seen[id] && id != c.thought.ID && slices.ContainsFunc(all, func(o sourceCand) bool { return o.src.ID == id }) {
						echoOf[c.thought.ID] = append(echoOf[c.thought.ID], id)
					}
				}
			}
			if len(echoOf[c.src.ID]) == 0 {
				kept++
			}
		}
		if len(echoOf) == 0 || kept >= p.topK || exhausted || k >= synth.MaxTopK || pass == maxSourcePasses {
			break
		}
		k = min(synth.MaxTopK, k+p.topK-kept)
	}
	out.keep(all, echoOf, p.topK, d)
	return out, nil
}

// dedupedOf adds the records a retrieval's deduplication removed to
// those of earlier passes, each once.
func dedupedOf(have []retrieve.DedupedItem, found []retrieve.DedupedItem) []retrieve.DedupedItem {
	for _, x := range found {
		if !slices.Contains(have, x) {
			have = append(have, x)
		}
	}
	return have
}

// sourceCand is a record the retrieval found, with the thought it is.
type sourceCand struct {
	src     synth.Source
	ask     AskSource
	thought *memory.Thought
}

// keep takes the best topK candidates as the sources, most relevant
// first, leaving out the summaries echoOf names (with a note).
func (out *askFound) keep(all []sourceCand, echoOf map[string][]string, topK int, d *AskDiagnostics) {
	slices.SortStableFunc(all, func(a, b sourceCand) int { return cmp.Compare(b.src.Relevance, a.src.Relevance) })
	var left []string
	for _, c := range all {
		if of := echoOf[c.src.ID]; len(of) > 0 {
			out.echoes = append(out.echoes, *c.thought)
			left = append(left, fmt.Sprintf("%s (summarises %s)", c.src.ID, strings.Join(of, ", ")))
			d.SummariesLeftOut = append(d.SummariesLeftOut, c.src.ID)
			continue
		}
		if len(out.sources) == topK {
			continue
		}
		out.sources = append(out.sources, c.src)
		out.byID[c.src.ID] = c.ask
		if c.thought != nil {
			out.thoughts = append(out.thoughts, *c.thought)
		}
	}
	if len(left) > 0 {
		d.Notes = append(d.Notes, "left out summary thoughts whose originals are among the sources, so the answer rests on the originals: "+
			strings.Join(left, "; "))
	}
}

// stagingYield is what staging made of each source thought: whether the
// extractor found anything in it, whether any of that was a candidate to
// stage (at or above confidence_min, within the caps), and whether a
// candidate of it was staged or is pending or in the graph already.
type stagingYield struct {
	extracted, planned, produced map[string]bool
	// sources are the thoughts that state each extracted item, by kind
	// and key.
	sources map[string][]string
}

// of is every source thought of a candidate's item.
func (y stagingYield) of(c memory.KGCandidate) []string {
	return append([]string{c.SourceThoughtID}, y.sources[candidateKey(c.Kind, c.Key())]...)
}

// produce records that a candidate's knowledge was kept: staged, or
// pending or in the graph already.
func (y stagingYield) produce(c memory.KGCandidate) {
	for _, id := range y.of(c) {
		y.produced[id] = true
	}
}

// autoMark marks for removal the source thoughts whose knowledge staging
// kept (a candidate staged now, or one of the same key pending or in the
// graph already), none when the answer was refused; best effort. A note
// says how many were marked and why the others were not.
func (v *Voice) autoMark(ctx context.Context, res *AskResult, ids []string, y stagingYield, refused bool) {
	d := &res.Diagnostics
	if refused {
		d.Notes = append(d.Notes, fmt.Sprintf("auto_mark_removal marked none of %d source thoughts: the answer was refused", len(ids)))
		return
	}
	var mark, nothing, filtered, blocked []string
	for _, id := range ids {
		switch {
		case y.produced[id]:
			mark = append(mark, id)
		case !y.extracted[id]:
			nothing = append(nothing, id)
		case !y.planned[id]:
			filtered = append(filtered, id)
		default:
			blocked = append(blocked, id)
		}
	}
	if len(mark) > 0 {
		n, err := v.removals.MarkRemoval(ctx, mark, v.nowMs())
		if err != nil {
			d.Notes = append(d.Notes, "marking the sources for removal failed: "+memory.Public(err).Message)
		}
		res.MarkedForRemoval = n
	}
	note := fmt.Sprintf("auto_mark_removal marked %d of %d source thoughts (those a candidate was staged from, or whose candidate is pending or in the graph already)",
		res.MarkedForRemoval, len(ids))
	for _, r := range []struct {
		ids []string
		why string
	}{
		{nothing, "nothing was extracted from them"},
		{filtered, "their candidates were below confidence_min, past max_nodes/max_edges or not valid graph names"},
		{blocked, "their candidates are blocked"},
	} {
		if len(r.ids) > 0 {
			note += fmt.Sprintf("; left active: %s (%s)", strings.Join(r.ids, ", "), r.why)
		}
	}
	d.Notes = append(d.Notes, note)
}

// recordInto records an exchange, best effort: a failure is a note. The
// model calls a rolling summary made are added to the call's figures.
func (v *Voice) recordInto(ctx context.Context, res *AskResult, call *Call, th voiceThread, x memory.InnerVoiceExchange) {
	sess, notes, usage, err := v.record(ctx, th, x)
	if err != nil {
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, "the exchange was not recorded in a session: "+memory.Public(err).Message)
		return
	}
	res.Session = sess
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, notes...)
	call.PromptTokens += usage.PromptTokens
	call.CompletionTokens += usage.CompletionTokens
	call.Cost += usage.Cost
}

// contextPolicy is a request's context policy, or the default: the
// configured one, else kg with a language model and thoughts without.
func (v *Voice) contextPolicy(policy string) (string, error) {
	if strings.TrimSpace(policy) != "" {
		return synth.ParseContextPolicy(policy)
	}
	if c := v.grounded.sessions.Context; c != "" {
		return c, nil
	}
	if v.grounded.llm != nil {
		return synth.ContextKG, nil
	}
	return synth.ContextThoughts, nil
}

// noResultsReason says why no source came back: no record in the
// policy's pools, or none similar enough.
func noResultsReason(policy string, d retrieve.InnerVoiceDiagnostics) string {
	pool, candidates := "thoughts", d.ThoughtCandidates
	switch policy {
	case synth.ContextKG:
		pool, candidates = "knowledge", d.KGCandidates
	case synth.ContextBoth:
		pool, candidates = "memories", d.ThoughtCandidates+d.KGCandidates
	}
	if candidates == 0 {
		return "no_" + pool
	}
	return "no_" + pool + "_above_sim_thresh"
}

func synthName(s synth.Synthesizer) string {
	if _, ok := s.(synth.Extractive); ok {
		return synth.ExtractiveName
	}
	return ""
}

// duplicateOf names the thought whose text equals the answer's once
// normalised, if one does.
func duplicateOf(answer string, ts []memory.Thought) string {
	h := content.Hash(answer)
	for _, t := range ts {
		if content.Hash(t.Content) == h {
			return t.ID
		}
	}
	return ""
}

// quotesOnly names the thought when every sentence of the answer quotes
// that one thought word for word (a summary of one thought would only
// repeat part of it).
func quotesOnly(ans synth.Answer, ts []memory.Thought) string {
	if len(ans.Sentences) == 0 {
		return ""
	}
	id := ""
	for _, s := range ans.Sentences {
		if len(s.Spans) != 1 || (id != "" && s.Spans[0].SourceID != id) {
			return ""
		}
		id = s.Spans[0].SourceID
		i := slices.IndexFunc(ts, func(t memory.Thought) bool { return t.ID == id })
		if i < 0 {
			return ""
		}
		rs, c := []rune(ts[i].Content), s.Spans[0]
		if c.Start < 0 || c.End > len(rs) || c.Start >= c.End {
			return ""
		}
		if span := string(rs[c.Start:c.End]); s.Text != span && s.Text != span+"." {
			return ""
		}
	}
	return id
}

// repeatsOne names a thought every sentence of the answer is a sentence
// of (compared normalised, in any order): saving the answer would only
// save that thought again, an earlier summary most often.
func repeatsOne(ans synth.Answer, ts []memory.Thought) string {
	if len(ans.Sentences) == 0 {
		return ""
	}
	key := func(s string) string { return content.Hash(strings.TrimRight(strings.TrimSpace(s), ".!?")) }
	for _, t := range ts {
		rs := []rune(t.Content)
		have := map[string]bool{}
		for _, sp := range synth.Sentences(t.Content) {
			have[key(string(rs[sp[0]:sp[1]]))] = true
		}
		if !slices.ContainsFunc(ans.Sentences, func(s synth.Sentence) bool { return !have[key(s.Text)] }) {
			return t.ID
		}
	}
	return ""
}

// commonScope is the scope every thought shares: each key that all of
// them set to the same value.
func commonScope(ts []memory.Thought) memory.Scope {
	if len(ts) == 0 {
		return memory.Scope{}
	}
	s := ts[0].Scope
	for _, t := range ts[1:] {
		if t.Scope.SessionID != s.SessionID {
			s.SessionID = ""
		}
		if t.Scope.RepoID != s.RepoID {
			s.RepoID = ""
		}
		if t.Scope.AgentID != s.AgentID {
			s.AgentID = ""
		}
		if t.Scope.UserID != s.UserID {
			s.UserID = ""
		}
	}
	return s
}
