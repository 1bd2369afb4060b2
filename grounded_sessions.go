package cairn

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// Reading and deleting inner_voice's sessions.

// MaxSessionPage bounds a page of sessions or exchanges.
const MaxSessionPage = 1000

// VoiceSessionsRequest lists inner_voice's sessions.
type VoiceSessionsRequest struct {
	ScopeIDs       memory.Scope `json:"scopeIds,omitzero" jsonschema:"list the sessions within this scope (each key given, sessionId, repoId, agentId, userId, must match exactly); the active session is the one of exactly this scope"`
	Limit          *int         `json:"limit,omitempty" jsonschema:"most sessions to list, 1..1000; default 100"`
	Offset         int          `json:"offset,omitempty" jsonschema:"sessions to skip, for paging"`
	IncludePrivate bool         `json:"include_private,omitempty" jsonschema:"show rolling summaries drawn from private thoughts"`
}

// VoiceSessionInfo is a session as the tools show it.
type VoiceSessionInfo struct {
	memory.InnerVoiceSession
	// Active says inner_voice continues this session when a call of its
	// scope gives no session_id: it is its scope's current session and
	// its last interaction is within SURR_INNER_VOICE_TIMEOUT.
	Active bool `json:"active"`
	// Hidden says the rolling summary drew on private thoughts and is
	// left out (include_private shows it).
	Hidden bool `json:"hidden,omitempty"`
}

// VoiceSessionList is a page of sessions and the totals of them all.
type VoiceSessionList struct {
	Sessions []VoiceSessionInfo `json:"sessions"`
	// ActiveSessionID is the session a call with these scopeIds (none:
	// an unscoped call) continues by default ("" when none is recent
	// enough).
	ActiveSessionID string `json:"active_session_id,omitempty"`
	// Totals aggregate every session within the scope and their
	// exchanges: figures only.
	Totals memory.InnerVoiceTotals `json:"totals"`
}

// VoiceSessionRequest reads one session and a page of its exchanges.
type VoiceSessionRequest struct {
	SessionID      string `json:"session_id" jsonschema:"the session's id"`
	After          int    `json:"after,omitempty" jsonschema:"list exchanges after this sequence number, for paging"`
	Limit          *int   `json:"limit,omitempty" jsonschema:"most exchanges to list, 1..1000; default 100"`
	IncludePrivate bool   `json:"include_private,omitempty" jsonschema:"show answers drawn from private thoughts"`
}

// VoiceSessionView is a session with a page of its exchanges.
type VoiceSessionView struct {
	Session VoiceSessionInfo `json:"session"`
	// Exchanges are in order; ContextWindow counts the exchanges after
	// the rolling summary (those a prompt may carry); NextAfter, when
	// set, is the after of the next page.
	Exchanges     []memory.InnerVoiceExchange `json:"exchanges"`
	ContextWindow int                         `json:"context_window"`
	NextAfter     int                         `json:"next_after,omitempty"`
}

// VoiceSessionRef names a session.
type VoiceSessionRef struct {
	SessionID string `json:"session_id" jsonschema:"the session's id"`
}

// VoiceSessionDeleted reports a deleted session.
type VoiceSessionDeleted struct {
	Deleted   string `json:"deleted"`
	Exchanges int    `json:"exchanges"`
}

// voiceSessions is the session store for reading sessions: like
// inner_voice, reading them is feature_disabled unless the inner voice is
// enabled (SURR_ENABLE_INNER_VOICE=1). Deleting one is not gated (see
// DeleteVoiceSession).
func (e *Engine) voiceSessions() (memory.InnerVoiceStore, error) {
	if !e.voice.Config.Enabled {
		return nil, memory.Errorf(memory.CodeFeatureDisabled, "inner_voice is disabled; set SURR_ENABLE_INNER_VOICE=1 to read its sessions")
	}
	return e.sessionStore()
}

// sessionStore is the session store; feature_disabled when the store
// keeps no sessions.
func (e *Engine) sessionStore() (memory.InnerVoiceStore, error) {
	if e.grounded.store == nil {
		return nil, memory.Errorf(memory.CodeFeatureDisabled, "this store keeps no inner_voice sessions")
	}
	return e.grounded.store, nil
}

func pageLimit(limit *int) (int, error) {
	if limit == nil {
		return 100, nil
	}
	if *limit < 1 || *limit > MaxSessionPage {
		return 0, memory.Errorf(memory.CodeInvalidParams, "limit %d is out of range [1, %d]", *limit, MaxSessionPage)
	}
	return *limit, nil
}

func (e *Engine) sessionInfo(s memory.InnerVoiceSession, includePrivate bool) VoiceSessionInfo {
	info := VoiceSessionInfo{InnerVoiceSession: s, Active: s.Current && s.LastInteraction >= e.sessionSince()}
	if s.Summary.Private && !includePrivate {
		info.Summary.Text, info.Hidden = "", true
	}
	return info
}

// VoiceSessions lists inner_voice's sessions within a scope (all without
// one), the latest interaction first, with the totals of those sessions
// and their exchanges.
func (e *Engine) VoiceSessions(ctx context.Context, req VoiceSessionsRequest) (VoiceSessionList, error) {
	out := VoiceSessionList{Sessions: []VoiceSessionInfo{}}
	st, err := e.voiceSessions()
	if err != nil {
		return out, err
	}
	limit, err := pageLimit(req.Limit)
	if err != nil {
		return out, err
	}
	if req.Offset < 0 {
		return out, memory.Errorf(memory.CodeInvalidParams, "offset %d is negative", req.Offset)
	}
	if err := req.ScopeIDs.Validate(); err != nil {
		return out, err
	}
	active, ok, err := st.ActiveVoiceSession(ctx, req.ScopeIDs, e.sessionSince())
	if err != nil {
		return out, err
	}
	if ok {
		out.ActiveSessionID = active.ID
	}
	list, err := st.VoiceSessions(ctx, req.ScopeIDs, req.Offset, limit)
	if err != nil {
		return out, err
	}
	for _, s := range list {
		out.Sessions = append(out.Sessions, e.sessionInfo(s, req.IncludePrivate))
	}
	out.Totals, err = st.VoiceTotals(ctx, req.ScopeIDs)
	return out, err
}

// VoiceSession reads a session and a page of its exchanges. Exchanges
// whose answer drew on a private thought show their question only,
// unless include_private.
func (e *Engine) VoiceSession(ctx context.Context, req VoiceSessionRequest) (VoiceSessionView, error) {
	out := VoiceSessionView{Exchanges: []memory.InnerVoiceExchange{}}
	st, err := e.voiceSessions()
	if err != nil {
		return out, err
	}
	if req.SessionID == "" {
		return out, memory.Errorf(memory.CodeInvalidParams, "session_id is required")
	}
	limit, err := pageLimit(req.Limit)
	if err != nil {
		return out, err
	}
	if req.After < 0 {
		return out, memory.Errorf(memory.CodeInvalidParams, "after %d is negative", req.After)
	}
	s, err := st.VoiceSession(ctx, req.SessionID)
	if err != nil {
		return out, err
	}
	out.Session = e.sessionInfo(s, req.IncludePrivate)
	page, err := st.VoiceExchanges(ctx, s.ID, req.After, limit+1)
	if err != nil {
		return out, err
	}
	if len(page) > limit {
		page = page[:limit]
		out.NextAfter = page[limit-1].Seq
	}
	for _, x := range page {
		if x.Private && !req.IncludePrivate {
			x.Answer, x.Sources, x.MemoriesReferenced, x.Notes = "", []memory.VoiceCitation{}, []string{}, "drawn from a private thought: include_private shows it"
		}
		out.Exchanges = append(out.Exchanges, x)
	}
	out.ContextWindow = max(0, s.TotalExchanges-s.SummarizedThrough)
	return out, nil
}

// DeleteVoiceSession deletes a session and its exchanges, their text
// overwritten on disk. Unlike reading, it works with the inner voice
// disabled: erasing what was recorded is never gated (as forgetting a
// thought is not).
func (e *Engine) DeleteVoiceSession(ctx context.Context, req VoiceSessionRef) (VoiceSessionDeleted, error) {
	st, err := e.sessionStore()
	if err != nil {
		return VoiceSessionDeleted{}, err
	}
	if req.SessionID == "" {
		return VoiceSessionDeleted{}, memory.Errorf(memory.CodeInvalidParams, "session_id is required")
	}
	s, err := st.VoiceSession(ctx, req.SessionID)
	if err != nil {
		return VoiceSessionDeleted{}, err
	}
	if err := st.DeleteVoiceSession(ctx, s.ID); err != nil {
		return VoiceSessionDeleted{}, err
	}
	return VoiceSessionDeleted{Deleted: s.ID, Exchanges: s.TotalExchanges}, nil
}
