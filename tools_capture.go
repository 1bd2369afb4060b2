package cairn

import (
	"context"

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

type (
	// SessionContextRequest asks for the context of a new session.
	SessionContextRequest = capture.SessionContextRequest
	// PreCompactRequest saves a session's running summary.
	PreCompactRequest = capture.PreCompactRequest
)

// contexts renders session-start context and saves pre-compact
// summaries, over the engine's retrieval and summary writes.
func (e *Engine) contexts() capture.Contexts {
	return capture.Contexts{Store: e.store, Now: e.now,
		Search: func(ctx context.Context, q string, scope memory.Scope, k int) ([]memory.Entity, error) {
			res, err := e.Retrieve(ctx, RetrieveRequest{Query: q, ScopeIDs: scope, MaxCandidates: &k})
			var out []memory.Entity
			for _, c := range res.Candidates {
				out = append(out, c.Entity)
			}
			return out, err
		},
		SetSummary: func(ctx context.Context, capsuleID string, in memory.Summary) (memory.Summary, error) {
			return e.SetSummary(ctx, SummaryRequest{CapsuleID: capsuleID, SummaryInput: SummaryInput{Content: in.Content,
				Confidence: &in.Confidence, EvidenceRefs: in.EvidenceRefs}})
		}}
}

// SessionContext renders the context a session starts with (see the
// context_session_start tool).
func (e *Engine) SessionContext(ctx context.Context, req SessionContextRequest) (capture.Context, error) {
	return e.contexts().SessionContext(ctx, req)
}

// PreCompact writes the running summary of a session's open capsule (see
// the context_pre_compact tool).
func (e *Engine) PreCompact(ctx context.Context, req PreCompactRequest) (memory.Summary, error) {
	return e.contexts().PreCompact(ctx, req)
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
