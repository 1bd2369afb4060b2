package capture

import (
	"context"
	"strings"
	"time"
	"unicode"

	"github.com/cairnhq/cairn/memory"
)

// Contexts answers the context tools of agents without hooks, as the
// hooks do: the context a session starts with (context_session_start)
// and the running summary saved before the agent compacts
// (context_pre_compact). The engine gives it its store, clock, retrieval
// and summary writes.
type Contexts struct {
	Store memory.Store
	Now   func() time.Time
	// Search finds at most k memories most relevant to a query within a
	// scope, best first (invalid_params when the query has no searchable
	// word).
	Search func(ctx context.Context, query string, scope memory.Scope, k int) ([]memory.Entity, error)
	// SetSummary writes a capsule's running summary (its content,
	// confidence and evidence) as the engine's summary writes do.
	SetSummary func(ctx context.Context, capsuleID string, s memory.Summary) (memory.Summary, error)
}

// SessionContextRequest asks for the context of a new session.
type SessionContextRequest struct {
	ScopeIDs memory.Scope `json:"scopeIds" jsonschema:"repoId (required: the repository root) and optionally sessionId, agentId, userId"`
	Branch   string       `json:"branch,omitempty" jsonschema:"the repository's current branch, to find the memories about it"`
	// TokenBudget caps the Markdown; default DefaultContextTokens.
	TokenBudget *int `json:"tokenBudget,omitempty" jsonschema:"most tokens (ceil(chars/4)) for the Markdown, 100 to 32000; default 1500"`
}

// SessionContext renders the context a session starts with: the
// repository's pins, the open session (this session's, or the
// repository's newest open one), the last closed session and the
// memories most relevant to the repository and branch.
func (cx Contexts) SessionContext(ctx context.Context, req SessionContextRequest) (Context, error) {
	if err := req.ScopeIDs.Validate(); err != nil {
		return Context{}, err
	}
	repo := req.ScopeIDs.RepoID
	if repo == "" {
		return Context{}, memory.Errorf(memory.CodeInvalidParams, "scopeIds.repoId is required: the repository's root path")
	}
	if err := memory.ValidateText("branch", req.Branch, 256); err != nil {
		return Context{}, err
	}
	budget := DefaultContextTokens
	if req.TokenBudget != nil {
		budget = *req.TokenBudget
		if budget < 100 || budget > MaxContextTokens {
			return Context{}, memory.Errorf(memory.CodeInvalidParams, "tokenBudget %d is out of range [100, %d]", budget, MaxContextTokens)
		}
	}
	in := ContextInput{Repo: repo, Branch: req.Branch, TokenBudget: budget, Now: cx.Now()}
	where := memory.Scope{RepoID: repo, UserID: req.ScopeIDs.UserID}
	pins, err := cx.Store.ActivePins(ctx, memory.PinQuery{Scope: where, Now: cx.Now().UnixMilli()})
	if err != nil {
		return Context{}, err
	}
	in.Pins = pins
	if err := cx.sessions(ctx, &in, where, req.ScopeIDs.SessionID); err != nil {
		return Context{}, err
	}
	if q := ContextQuery(repo, req.Branch, in.Last); hasWord(q) {
		mems, err := cx.Search(ctx, q, where, 12)
		switch {
		case err == nil:
			in.Memories = mems
		case memory.IsCode(err, memory.CodeInvalidParams):
			// No searchable word: the context goes without memories.
		default:
			return Context{}, err
		}
	}
	return RenderContext(in), nil
}

// sessions finds the open session the context shows (sid's, unless it
// was just opened, else the repository's newest open one) and the last
// closed one.
func (cx Contexts) sessions(ctx context.Context, in *ContextInput, where memory.Scope, sid string) error {
	own := ""
	if sid != "" {
		c, err := cx.Store.OpenCapsuleOf(ctx, sid)
		switch {
		case err == nil && c.Scope.RepoID == in.Repo && (len(c.ObservationIDs) > 0 || c.SummaryID != ""):
			in.Open = cx.sessionOf(ctx, c)
		case err == nil:
			own = c.ID // just opened: nothing to show yet
		case !memory.IsCode(err, memory.CodeNotFound):
			return err
		}
	}
	if in.Open == nil {
		open, err := cx.Store.Capsules(ctx, memory.CapsuleQuery{Scope: where, Status: memory.CapsuleOpen, Limit: 2})
		if err != nil {
			return err
		}
		for _, c := range open {
			if c.ID != own {
				in.Open = cx.sessionOf(ctx, c)
				break
			}
		}
	}
	closed, err := cx.Store.Capsules(ctx, memory.CapsuleQuery{Scope: where, Status: memory.CapsuleClosed, Limit: 1})
	if err != nil {
		return err
	}
	if len(closed) > 0 {
		in.Last = cx.sessionOf(ctx, closed[0])
	}
	return nil
}

func hasWord(q string) bool { return strings.IndexFunc(q, unicode.IsLetter) >= 0 }

// sessionOf pairs a capsule with its summary.
func (cx Contexts) sessionOf(ctx context.Context, c memory.Capsule) *Session {
	s := &Session{Capsule: c}
	if c.SummaryID != "" {
		if sum, err := cx.Store.Summary(ctx, c.SummaryID); err == nil {
			s.Summary = &sum
		}
	}
	return s
}

// PreCompactRequest saves a session's running summary.
type PreCompactRequest struct {
	ScopeIDs memory.Scope `json:"scopeIds" jsonschema:"sessionId (required): the session whose open capsule is summarised"`
	Summary  string       `json:"summary,omitempty" jsonschema:"your summary of the session so far; default an extractive summary of its observations"`
}

// PreCompact writes the running summary of a session's open capsule: the
// caller's summary, or an extractive one of its observations.
func (cx Contexts) PreCompact(ctx context.Context, req PreCompactRequest) (memory.Summary, error) {
	if err := req.ScopeIDs.Validate(); err != nil {
		return memory.Summary{}, err
	}
	if req.ScopeIDs.SessionID == "" {
		return memory.Summary{}, memory.Errorf(memory.CodeInvalidParams, "scopeIds.sessionId is required")
	}
	c, err := cx.Store.OpenCapsuleOf(ctx, req.ScopeIDs.SessionID)
	if err != nil {
		return memory.Summary{}, err
	}
	text := req.Summary
	if strings.TrimSpace(text) == "" {
		obs, err := CapsuleObservations(ctx, cx.Store, c)
		if err != nil {
			return memory.Summary{}, err
		}
		text = Summarize(c.Intent, obs)
	}
	conf := 0.5
	if req.Summary != "" {
		conf = 1
	}
	return cx.SetSummary(ctx, c.ID, memory.Summary{Content: text, Confidence: conf, EvidenceRefs: SummaryEvidence(c.ObservationIDs)})
}
