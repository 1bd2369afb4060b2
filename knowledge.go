package cairn

import (
	"context"
	"math"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Limits of thoughts.
const (
	MaxTags     = 32
	MaxTagBytes = 64
)

// ThinkRequest records a thought.
type ThinkRequest struct {
	ID      string `json:"id,omitempty" jsonschema:"optional id; a new th_ id is made when omitted"`
	Content string `json:"content" jsonschema:"the thought: a conclusion, a decision, a lesson, a fact learned (at most 1 MiB)"`
	// Origin is who produced it: human, tool, model (default) or logged.
	Origin       memory.Origin `json:"origin,omitempty" jsonschema:"who produced it: human, tool, model (default) or logged; sets its trust tier"`
	Tags         []string      `json:"tags,omitempty" jsonschema:"labels to filter by (at most 32, each at most 64 bytes)"`
	IsPrivate    bool          `json:"is_private,omitempty" jsonschema:"keep it out of retrieval unless private thoughts are asked for"`
	Significance *float64      `json:"significance,omitempty" jsonschema:"how much it matters, 0 to 1; default 0.5"`
	IsSummary    bool          `json:"is_summary,omitempty" jsonschema:"it summarises other thoughts, listed in summary_of"`
	SummaryOf    []string      `json:"summary_of,omitempty" jsonschema:"ids of the thoughts it summarises"`
	Pipeline     string        `json:"pipeline,omitempty" jsonschema:"what produced it, e.g. inner_voice"`
	ScopeIDs     memory.Scope  `json:"scopeIds,omitzero" jsonschema:"where it belongs (sessionId, repoId, agentId, userId)"`
	// IdempotencyKey, instead of ID, names the thought for retries.
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"optional key of this write (instead of id): a retry with the same key returns the first result instead of recording it twice"`
}

// Think records a thought and embeds it.
func (e *Engine) Think(ctx context.Context, req ThinkRequest) (memory.Thought, error) {
	t := memory.Thought{ID: req.ID, Content: req.Content, Origin: req.Origin, Tags: req.Tags, IsPrivate: req.IsPrivate,
		Status: memory.StatusActive, Significance: 0.5, IsSummary: req.IsSummary, SummaryOf: req.SummaryOf,
		Pipeline: req.Pipeline, CreatedAt: e.nowMs(), Scope: req.ScopeIDs}
	if t.Origin == "" {
		t.Origin = memory.OriginModel
	}
	if req.Significance != nil {
		t.Significance = *req.Significance
	}
	if err := e.checkThought(&t); err != nil {
		return t, err
	}
	id, err := memory.KeyedID("th", t.ID, req.IdempotencyKey)
	if err != nil {
		return t, err
	}
	if t.ID = id; t.ID == "" {
		t.ID = e.newID("th")
	}
	out, err := e.store.AddThought(ctx, t)
	if err != nil && id != "" {
		return memory.Replay(err, id, func() (memory.Thought, error) { return e.store.Thought(ctx, id) }, func(got memory.Thought) bool {
			return got.Content == t.Content && got.Origin == t.Origin && got.IsPrivate == t.IsPrivate && scopeHolds(got.Scope, t.Scope)
		}, "thought")
	}
	if err != nil {
		return out, err
	}
	e.embedAfterWrite(ctx, []memory.EmbedJob{{Kind: memory.VectorThought, ID: out.ID, Content: out.Content}})
	return out, nil
}

// checkThought validates a thought as Think and Import store it, trimming
// and deduplicating its tags. An empty id passes (Think makes one).
func (e *Engine) checkThought(t *memory.Thought) error {
	if !t.Origin.Valid() {
		return memory.Errorf(memory.CodeInvalidParams, "origin %q: want human, tool, model or logged", t.Origin)
	}
	if err := memory.ValidateContent("content", t.Content, e.maxBytes); err != nil {
		return err
	}
	t.Content = e.redactText(t.Content)
	if !(t.Significance >= 0 && t.Significance <= 1) || math.IsNaN(t.Significance) {
		return memory.Errorf(memory.CodeInvalidParams, "significance %v is out of range [0, 1]", t.Significance)
	}
	tags, err := cleanTags(t.Tags)
	if err != nil {
		return err
	}
	t.Tags = tags
	for _, id := range t.SummaryOf {
		if err := memory.ValidateRef("summary_of", id, false); err != nil {
			return err
		}
	}
	if err := memory.ValidateText("pipeline", t.Pipeline, 128); err != nil {
		return err
	}
	if err := t.Scope.Validate(); err != nil {
		return err
	}
	return memory.ValidateRef("id", t.ID, true)
}

// cleanTags trims, deduplicates and checks tags.
func cleanTags(in []string) ([]string, error) {
	if len(in) > MaxTags {
		return nil, memory.Errorf(memory.CodeInvalidParams, "%d tags, over the limit of %d", len(in), MaxTags)
	}
	out := []string{}
	for _, t := range in {
		t = strings.TrimSpace(t)
		if err := memory.ValidateContent("tag", t, MaxTagBytes); err != nil {
			return nil, err
		}
		dup := false
		for _, o := range out {
			dup = dup || o == t
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out, nil
}

// ThoughtRef names a thought.
type ThoughtRef struct {
	ThoughtID string `json:"thoughtId" jsonschema:"the thought's id"`
}

// Thought returns one thought.
func (e *Engine) Thought(ctx context.Context, id string) (memory.Thought, error) {
	return e.store.Thought(ctx, id)
}

// MarkThoughtRequest sets a thought's status.
type MarkThoughtRequest struct {
	ThoughtID string `json:"thoughtId" jsonschema:"the thought's id"`
	Status    string `json:"status" jsonschema:"removal (never retrieved again, kept until forgotten) or active (retrieved again)"`
}

// MarkThought sets a thought's status: removal takes it out of every
// retrieval (its text stays until thought_forget), active brings it back.
// Marking it with the status it has changes nothing.
func (e *Engine) MarkThought(ctx context.Context, req MarkThoughtRequest) (memory.Thought, error) {
	if err := memory.ValidateRef("thoughtId", req.ThoughtID, false); err != nil {
		return memory.Thought{}, err
	}
	if req.Status != memory.StatusActive && req.Status != memory.StatusRemoval {
		return memory.Thought{}, memory.Errorf(memory.CodeInvalidParams, "status %q: want active or removal", req.Status)
	}
	if _, err := e.store.Thought(ctx, req.ThoughtID); err != nil {
		return memory.Thought{}, err
	}
	if req.Status == memory.StatusRemoval && e.removals != nil {
		// Records when it was marked: maintenance_ops counts the
		// retention period from then.
		if _, err := e.removals.MarkRemoval(ctx, []string{req.ThoughtID}, e.nowMs()); err != nil {
			return memory.Thought{}, err
		}
	} else if _, err := e.store.SetThoughtStatus(ctx, []string{req.ThoughtID}, req.Status); err != nil {
		return memory.Thought{}, err
	}
	return e.store.Thought(ctx, req.ThoughtID)
}

// ThoughtsRequest lists thoughts.
type ThoughtsRequest struct {
	ScopeIDs       memory.Scope `json:"scopeIds,omitzero" jsonschema:"restrict to a scope"`
	IncludePrivate bool         `json:"include_private,omitempty" jsonschema:"include private thoughts"`
	Status         string       `json:"status,omitempty" jsonschema:"active or removal; default both"`
	Limit          int          `json:"limit,omitempty" jsonschema:"most thoughts to return, 1 to 1000; default 100"`
}

// ThoughtList is a page of thoughts, newest first.
type ThoughtList struct {
	Thoughts []memory.Thought `json:"thoughts"`
}

// Thoughts lists thoughts, newest first.
func (e *Engine) Thoughts(ctx context.Context, req ThoughtsRequest) (ThoughtList, error) {
	if req.Limit < 0 || req.Limit > 1000 {
		return ThoughtList{}, memory.Errorf(memory.CodeInvalidParams, "limit %d is out of range [1, 1000]", req.Limit)
	}
	if req.Status != "" && req.Status != memory.StatusActive && req.Status != memory.StatusRemoval {
		return ThoughtList{}, memory.Errorf(memory.CodeInvalidParams, "status %q: want active or removal", req.Status)
	}
	if err := req.ScopeIDs.Validate(); err != nil {
		return ThoughtList{}, err
	}
	ts, err := e.store.Thoughts(ctx, memory.ThoughtFilter{Scope: req.ScopeIDs, IncludePrivate: req.IncludePrivate, Status: req.Status, Limit: req.Limit})
	if ts == nil {
		ts = []memory.Thought{}
	}
	return ThoughtList{Thoughts: ts}, err
}
