package cairn

import (
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
	Content         string   `json:"content" jsonschema:"the question, in natural language"`
	TopK            *int     `json:"top_k,omitempty" jsonschema:"most thoughts to answer from; default SURR_TOP_K (5), clamped to 1..50"`
	SimThresh       *float64 `json:"sim_thresh,omitempty" jsonschema:"minimum cosine similarity of a source, 0 to 1; default SURR_SIM_THRESH (0.5)"`
	StageKG         bool     `json:"stage_kg,omitempty" jsonschema:"stage knowledge-graph candidates extracted from the sources, for knowledgegraph_moderate"`
	ConfidenceMin   *float64 `json:"confidence_min,omitempty" jsonschema:"minimum confidence of a staged candidate, 0 to 1; default 0.6"`
	MaxNodes        *int     `json:"max_nodes,omitempty" jsonschema:"most entity candidates to stage, 0 to 1000; default 30"`
	MaxEdges        *int     `json:"max_edges,omitempty" jsonschema:"most edge candidates to stage, 0 to 1000; default 60"`
	Save            *bool    `json:"save,omitempty" jsonschema:"save the answer as a summary thought (is_summary, summary_of the sources, pipeline inner_voice); default true"`
	AutoMarkRemoval *bool    `json:"auto_mark_removal,omitempty" jsonschema:"after staging, mark the sources for removal (maintenance_ops archives them); default SURR_AUTO_MARK_REMOVAL (false)"`
	IncludePrivate  bool     `json:"include_private,omitempty" jsonschema:"answer from private thoughts too"`
	IncludeTags     []string `json:"include_tags,omitempty" jsonschema:"only thoughts with at least one of these tags"`
	ExcludeTags     []string `json:"exclude_tags,omitempty" jsonschema:"leave out thoughts with any of these tags"`
}

// AskSource is a thought the answer drew on.
type AskSource struct {
	ThoughtID  string  `json:"thought_id"`
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
	// (at most SURR_DB_LIMIT); BelowThreshold how many of the best fell
	// under sim_thresh.
	ThoughtCandidates int      `json:"thought_candidates"`
	BelowThreshold    int      `json:"below_threshold"`
	Clamped           []string `json:"clamped,omitempty"`
	NoResults         bool     `json:"no_results,omitempty"`
	Reason            string   `json:"reason,omitempty"`
	// SaveSkipped says why no thought was saved although save was true.
	SaveSkipped string `json:"save_skipped,omitempty"`
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
	// Refused says the synthesiser declined to answer from the sources
	// (a grounded synthesiser that found too little support).
	Refused     bool           `json:"refused,omitempty"`
	Diagnostics AskDiagnostics `json:"diagnostics"`
}

// askParams are a request's parameters with defaults and bounds applied.
type askParams struct {
	topK               int
	simThresh, confMin float64
	maxNodes, maxEdges int
	save, autoMark     bool
}

func (e *Engine) askParams(req AskRequest, d *AskDiagnostics) (askParams, error) {
	p := askParams{topK: e.ask.TopK, simThresh: e.ask.SimThresh, confMin: DefaultConfidenceMin, maxNodes: DefaultMaxNodes,
		maxEdges: DefaultMaxEdges, save: true, autoMark: e.ask.AutoMarkRemoval}
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

// Ask runs the inner_voice tool: it retrieves the thoughts most similar
// to the question (the inner voice's retrieval over the persisted index,
// thoughts only, at most top_k at or above sim_thresh, comparing at most
// SURR_DB_LIMIT candidates), synthesises an answer with the engine's
// Synthesizer, and then, in this order: saves the answer as a summary
// thought (save, default true; never when there is no answer, or it
// repeats a source word for word or only quotes one; private when a
// source is), stages knowledge-graph candidates
// extracted from the sources (stage_kg), and marks the sources for removal
// (auto_mark_removal, after staging only; best effort). With save false
// and stage_kg false it writes nothing. It fails with feature_disabled
// unless the inner voice is enabled (SURR_ENABLE_INNER_VOICE=1).
func (e *Engine) Ask(ctx context.Context, req AskRequest) (AskResult, error) {
	start := time.Now()
	res := AskResult{Sources: []AskSource{}, Sentences: []synth.Sentence{}, Staged: Staged{CandidateIDs: []string{}}}
	d := &res.Diagnostics
	if !e.voice.Config.Enabled {
		return res, memory.Errorf(memory.CodeFeatureDisabled, "inner_voice is disabled; set SURR_ENABLE_INNER_VOICE=1 to enable it")
	}
	if err := memory.ValidateText("content", req.Content, retrieve.MaxQueryBytes); err != nil {
		return res, err
	}
	q := strings.TrimSpace(req.Content)
	if q == "" {
		return res, memory.Errorf(memory.CodeInvalidParams, "content is empty: give the question to answer")
	}
	p, err := e.askParams(req, d)
	if err != nil {
		return res, err
	}
	if req.StageKG && e.candidates == nil {
		return res, memory.Errorf(memory.CodeFeatureDisabled, "stage_kg: this store does not keep knowledge-graph candidates")
	}
	if req.StageKG && p.autoMark && e.removals == nil {
		return res, memory.Errorf(memory.CodeFeatureDisabled, "auto_mark_removal: this store does not keep the removal lifecycle")
	}
	d.TopK, d.SimThresh = p.topK, p.simThresh
	sp := e.embedder.Space()
	d.Embedder = sp.String()

	// Retrieve: the inner voice's pipeline, thoughts only.
	zero := 0.0
	iv, err := e.voice.Retrieve(ctx, retrieve.InnerVoiceRequest{Query: q, TopK: &p.topK, Floor: &p.simThresh, Mix: &zero,
		IncludePrivate: req.IncludePrivate, IncludeTags: req.IncludeTags, ExcludeTags: req.ExcludeTags, CandidateCap: e.ask.DBLimit})
	if err != nil {
		return res, err
	}
	d.ThoughtCandidates = iv.Diagnostics.ThoughtCandidates
	var sources []synth.Source
	var thoughts []memory.Thought
	for _, s := range iv.Snippets {
		if s.SourceType != string(memory.VectorThought) {
			continue
		}
		// The inner voice may lower its floor so a source has a hit;
		// sim_thresh is a hard threshold.
		if s.Score < p.simThresh {
			d.BelowThreshold++
			continue
		}
		th, err := e.store.Thought(ctx, s.ID)
		if memory.IsCode(err, memory.CodeNotFound) {
			continue // finalized meanwhile
		} else if err != nil {
			return res, err
		}
		thoughts = append(thoughts, th)
		sources = append(sources, synth.Source{ID: th.ID, Type: string(memory.VectorThought), Text: th.Content, Relevance: s.Score})
		res.Sources = append(res.Sources, AskSource{ThoughtID: th.ID, Similarity: s.Score, Excerpt: s.Text, Origin: s.Origin, TrustTier: s.TrustTier})
	}
	if len(sources) == 0 {
		d.NoResults, d.Reason = true, "no_thoughts_above_sim_thresh"
		if iv.Diagnostics.NoResults && iv.Diagnostics.Reason == "no_candidates" {
			d.Reason = "no_thoughts"
		}
		if p.save {
			d.SaveSkipped = "no answer"
		}
		res.Synthesizer = synthName(e.synth)
		d.LatencyMs = time.Since(start).Milliseconds()
		return res, nil
	}

	// Synthesise.
	ans, err := e.synth.Synthesize(ctx, q, sources)
	if err != nil {
		return res, err
	}
	res.SynthesizedAnswer, res.Synthesizer, res.Refused = ans.Text, ans.Name, ans.Refused
	if ans.Refused {
		res.SynthesizedAnswer = ""
		d.Notes = append(d.Notes, "the synthesiser declined to answer: "+ans.Notes)
	}
	if ans.Sentences != nil {
		res.Sentences = ans.Sentences
	}
	ids := make([]string, len(thoughts))
	for i, th := range thoughts {
		ids[i] = th.ID
	}

	// Save the answer as a summary thought.
	if p.save {
		switch dup, quoted := duplicateOf(ans.Text, thoughts), quotesOnly(ans, thoughts); {
		case ans.Refused:
			d.SaveSkipped = "the synthesiser declined to answer"
		case strings.TrimSpace(ans.Text) == "":
			d.SaveSkipped = "no answer"
		case dup != "":
			d.SaveSkipped = "the answer repeats thought " + dup + " word for word"
		case quoted != "":
			d.SaveSkipped = "the answer only quotes thought " + quoted
		default:
			// An answer drawn from a private thought is private too.
			private := slices.ContainsFunc(thoughts, func(t memory.Thought) bool { return t.IsPrivate })
			th := memory.Thought{ID: e.newID("th"), Content: ans.Text, Origin: memory.OriginTool, Tags: []string{}, Status: memory.StatusActive,
				IsPrivate: private, Significance: 0.5, IsSummary: true, SummaryOf: ids, Pipeline: AskPipeline, CreatedAt: e.nowMs(),
				Scope: commonScope(thoughts)}
			if err := e.checkThought(&th); err != nil {
				return res, err
			}
			saved, err := e.store.AddThought(ctx, th)
			if err != nil {
				return res, err
			}
			e.embedAfterWrite(ctx, []memory.EmbedJob{{Kind: memory.VectorThought, ID: saved.ID, Content: saved.Content}})
			res.SavedThoughtID = saved.ID
		}
	}

	// Stage knowledge-graph candidates from the sources.
	if req.StageKG {
		texts := make([]graph.Text, len(thoughts))
		scopes := map[string]memory.Scope{}
		for i, th := range thoughts {
			texts[i] = graph.Text{ID: th.ID, Content: th.Content}
			scopes[th.ID] = th.Scope
		}
		plan := graph.Plan(graph.Extract(texts), graph.StageOptions{MinConfidence: p.confMin, MaxNodes: p.maxNodes,
			MaxEdges: p.maxEdges, NewID: e.newID, Now: e.nowMs(), Scopes: scopes})
		res.Staged.BelowConfidence, res.Staged.OverCap = plan.BelowConfidence, plan.OverCap
		if len(plan.Candidates) > 0 {
			st, err := e.candidates.StageCandidates(ctx, plan.Candidates)
			if err != nil {
				return res, err
			}
			for _, c := range st.Staged {
				res.Staged.CandidateIDs = append(res.Staged.CandidateIDs, c.ID)
				if c.Kind == memory.CandidateEdge {
					res.Staged.PendingRelationships++
				} else {
					res.Staged.PendingEntities++
				}
			}
			res.Staged.Skipped = len(st.Skipped)
		}
		// Mark the sources for removal, after staging only; best effort.
		if p.autoMark {
			n, err := e.removals.MarkRemoval(ctx, ids, e.nowMs())
			if err != nil {
				d.Notes = append(d.Notes, "marking the sources for removal failed: "+memory.Public(err).Message)
			}
			res.MarkedForRemoval = n
		}
	} else if p.autoMark {
		d.Notes = append(d.Notes, "auto_mark_removal applies after staging: set stage_kg to mark the sources")
	}
	d.LatencyMs = time.Since(start).Milliseconds()
	return res, nil
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
