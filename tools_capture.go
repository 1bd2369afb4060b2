package cairn

import (
	"context"
	"strings"
	"unicode"

	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/memory"
)

// captureTools are the context an agent starts a session with and saves
// before it compacts: what the capture hooks do, for agents without hooks.
var captureTools = []Tool{
	newTool(Tool{
		Name: "context_session_start", Title: "Context for a new session", Method: "POST", Path: "/v1/context/session-start", ReadOnly: true, Idempotent: true,
		Description: `Call it once at the start of a session in a repository: returns Markdown to read before working, within tokenBudget (default 1500 tokens, ceil(chars/4)): the repository's pinned memories, the open session (this sessionId's, or the repository's newest open one) and the last closed session with their summaries, and the memories most relevant to the repository and branch, each with its id so you can cite it and read more with observation_get, summary_get or capsule_get. Give scopeIds.repoId (the repository's root path, as the hooks record it) and, when you have them, sessionId and branch. items lists the ids shown; omitted counts records left out for the budget. Changes nothing.`,
	}, func(e *Engine, ctx context.Context, in SessionContextRequest) (capture.Context, error) {
		return e.SessionContext(ctx, in)
	}),
	newTool(Tool{
		Name: "context_pre_compact", Title: "Save the session summary before compacting", Method: "POST", Path: "/v1/context/pre-compact", Idempotent: true,
		Description: `Call it before your context is compacted or cleared: writes the running summary of the session's open capsule, so the next context_session_start (or retrieve's currentSummary) has it. Give scopeIds.sessionId; summary is your own summary of the session so far (recommended), otherwise cairn writes an extractive one from the session's observations (what was asked, files changed, commands that failed, the last answer). Returns the summary. not_found when the session has no open capsule (open one with capsule_open).`,
	}, func(e *Engine, ctx context.Context, in PreCompactRequest) (memory.Summary, error) {
		return e.PreCompact(ctx, in)
	}),
}

// SessionContextRequest asks for the context of a new session.
type SessionContextRequest struct {
	ScopeIDs memory.Scope `json:"scopeIds" jsonschema:"repoId (required: the repository root) and optionally sessionId, agentId, userId"`
	Branch   string       `json:"branch,omitempty" jsonschema:"the repository's current branch, to find the memories about it"`
	// TokenBudget caps the Markdown; default capture.DefaultContextTokens.
	TokenBudget *int `json:"tokenBudget,omitempty" jsonschema:"most tokens (ceil(chars/4)) for the Markdown, 100 to 32000; default 1500"`
}

// SessionContext renders the context a session starts with (see the
// context_session_start tool).
func (e *Engine) SessionContext(ctx context.Context, req SessionContextRequest) (capture.Context, error) {
	if err := req.ScopeIDs.Validate(); err != nil {
		return capture.Context{}, err
	}
	repo := req.ScopeIDs.RepoID
	if repo == "" {
		return capture.Context{}, memory.Errorf(memory.CodeInvalidParams, "scopeIds.repoId is required: the repository's root path")
	}
	if err := memory.ValidateText("branch", req.Branch, 256); err != nil {
		return capture.Context{}, err
	}
	budget := capture.DefaultContextTokens
	if req.TokenBudget != nil {
		budget = *req.TokenBudget
		if budget < 100 || budget > capture.MaxContextTokens {
			return capture.Context{}, memory.Errorf(memory.CodeInvalidParams, "tokenBudget %d is out of range [100, %d]", budget, capture.MaxContextTokens)
		}
	}
	in := capture.ContextInput{Repo: repo, Branch: req.Branch, TokenBudget: budget, Now: e.now()}
	where := memory.Scope{RepoID: repo, UserID: req.ScopeIDs.UserID}
	pins, err := e.store.ActivePins(ctx, memory.PinQuery{Scope: where, Now: e.nowMs()})
	if err != nil {
		return capture.Context{}, err
	}
	in.Pins = pins
	own := ""
	if sid := req.ScopeIDs.SessionID; sid != "" {
		c, err := e.store.OpenCapsuleOf(ctx, sid)
		switch {
		case err == nil && c.Scope.RepoID == repo && (len(c.ObservationIDs) > 0 || c.SummaryID != ""):
			in.Open = e.sessionOf(ctx, c)
		case err == nil:
			own = c.ID // just opened: nothing to show yet
		case !memory.IsCode(err, memory.CodeNotFound):
			return capture.Context{}, err
		}
	}
	if in.Open == nil {
		open, err := e.store.Capsules(ctx, memory.CapsuleQuery{Scope: where, Status: memory.CapsuleOpen, Limit: 2})
		if err != nil {
			return capture.Context{}, err
		}
		for _, c := range open {
			if c.ID != own {
				in.Open = e.sessionOf(ctx, c)
				break
			}
		}
	}
	closed, err := e.store.Capsules(ctx, memory.CapsuleQuery{Scope: where, Status: memory.CapsuleClosed, Limit: 1})
	if err != nil {
		return capture.Context{}, err
	}
	if len(closed) > 0 {
		in.Last = e.sessionOf(ctx, closed[0])
	}
	if q := capture.ContextQuery(repo, req.Branch, in.Last); hasWord(q) {
		k := 12
		res, err := e.Retrieve(ctx, RetrieveRequest{Query: q, ScopeIDs: where, MaxCandidates: &k})
		switch {
		case err == nil:
			for _, c := range res.Candidates {
				in.Memories = append(in.Memories, c.Entity)
			}
		case memory.IsCode(err, memory.CodeInvalidParams):
			// No searchable word: the context goes without memories.
		default:
			return capture.Context{}, err
		}
	}
	return capture.RenderContext(in), nil
}

func hasWord(q string) bool { return strings.IndexFunc(q, unicode.IsLetter) >= 0 }

// sessionOf pairs a capsule with its summary.
func (e *Engine) sessionOf(ctx context.Context, c memory.Capsule) *capture.Session {
	s := &capture.Session{Capsule: c}
	if c.SummaryID != "" {
		if sum, err := e.store.Summary(ctx, c.SummaryID); err == nil {
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

// PreCompact writes the running summary of a session's open capsule (see
// the context_pre_compact tool).
func (e *Engine) PreCompact(ctx context.Context, req PreCompactRequest) (memory.Summary, error) {
	if err := req.ScopeIDs.Validate(); err != nil {
		return memory.Summary{}, err
	}
	if req.ScopeIDs.SessionID == "" {
		return memory.Summary{}, memory.Errorf(memory.CodeInvalidParams, "scopeIds.sessionId is required")
	}
	c, err := e.store.OpenCapsuleOf(ctx, req.ScopeIDs.SessionID)
	if err != nil {
		return memory.Summary{}, err
	}
	text := req.Summary
	if strings.TrimSpace(text) == "" {
		obs, err := capture.CapsuleObservations(ctx, e.store, c)
		if err != nil {
			return memory.Summary{}, err
		}
		text = capture.Summarize(c.Intent, obs)
	}
	conf := 0.5
	if req.Summary != "" {
		conf = 1
	}
	return e.SetSummary(ctx, SummaryRequest{CapsuleID: c.ID, SummaryInput: SummaryInput{Content: text, Confidence: &conf,
		EvidenceRefs: capture.SummaryEvidence(c.ObservationIDs)}})
}

// CompleteScope lists up to limit known values of a scope dimension
// (sessionId, repoId, agentId, userId) that start with prefix, sorted:
// what a client completes a scope argument with.
func (e *Engine) CompleteScope(ctx context.Context, key, prefix string, limit int) ([]string, error) {
	if err := memory.ValidateText("prefix", prefix, memory.MaxScopeValueBytes); err != nil {
		return nil, err
	}
	return e.store.CompleteScope(ctx, key, prefix, limit)
}
