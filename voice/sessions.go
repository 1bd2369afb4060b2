package voice

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// Reading and deleting inner_voice's sessions.

// MaxSessionPage bounds a page of sessions or exchanges.
const MaxSessionPage = 1000

// SessionsRequest lists inner_voice's sessions.
type SessionsRequest struct {
	ScopeIDs       memory.Scope `json:"scopeIds,omitzero" jsonschema:"list the sessions within this scope (each key given, sessionId, repoId, agentId, userId, must match exactly); the active session is the one of exactly this scope"`
	Limit          *int         `json:"limit,omitempty" jsonschema:"most sessions to list, 1..1000; default 100"`
	Offset         int          `json:"offset,omitempty" jsonschema:"sessions to skip, for paging"`
	IncludePrivate bool         `json:"include_private,omitempty" jsonschema:"show rolling summaries drawn from private thoughts"`
}

// SessionInfo is a session as the tools show it.
type SessionInfo struct {
	memory.InnerVoiceSession
	// Active says inner_voice continues this session when a call of its
	// scope gives no session_id: it is its scope's current session and
	// its last interaction is within SURR_INNER_VOICE_TIMEOUT.
	Active bool `json:"active"`
	// Hidden says the rolling summary drew on private thoughts and is
	// left out (include_private shows it).
	Hidden bool `json:"hidden,omitempty"`
}

// SessionList is a page of sessions and the totals of them all.
type SessionList struct {
	Sessions []SessionInfo `json:"sessions"`
	// ActiveSessionID is the session a call with these scopeIds (none:
	// an unscoped call) continues by default ("" when none is recent
	// enough).
	ActiveSessionID string `json:"active_session_id,omitempty"`
	// Totals aggregate every session within the scope and their
	// exchanges: figures only.
	Totals memory.InnerVoiceTotals `json:"totals"`
}

// SessionRequest reads one session and a page of its exchanges.
type SessionRequest struct {
	SessionID      string `json:"session_id" jsonschema:"the session's id"`
	After          int    `json:"after,omitempty" jsonschema:"list exchanges after this sequence number, for paging"`
	Limit          *int   `json:"limit,omitempty" jsonschema:"most exchanges to list, 1..1000; default 100"`
	IncludePrivate bool   `json:"include_private,omitempty" jsonschema:"show answers drawn from private thoughts"`
}

// SessionView is a session with a page of its exchanges.
type SessionView struct {
	Session SessionInfo `json:"session"`
	// Exchanges are in order; ContextWindow counts the exchanges after
	// the rolling summary (those a prompt may carry); NextAfter, when
	// set, is the after of the next page.
	Exchanges     []memory.InnerVoiceExchange `json:"exchanges"`
	ContextWindow int                         `json:"context_window"`
	NextAfter     int                         `json:"next_after,omitempty"`
}

// SessionRef names a session.
type SessionRef struct {
	SessionID string `json:"session_id" jsonschema:"the session's id"`
}

// SessionDeleted reports a deleted session.
type SessionDeleted struct {
	Deleted   string `json:"deleted"`
	Exchanges int    `json:"exchanges"`
}

// voiceSessions is the session store for reading sessions: like
// inner_voice, reading them is feature_disabled unless the inner voice is
// enabled (SURR_ENABLE_INNER_VOICE=1). Deleting one is not gated (see
// DeleteSession).
func (v *Voice) voiceSessions() (memory.InnerVoiceStore, error) {
	if !v.recall.Config.Enabled {
		return nil, memory.Errorf(memory.CodeFeatureDisabled, "inner_voice is disabled; set SURR_ENABLE_INNER_VOICE=1 to read its sessions")
	}
	return v.sessionStore()
}

// sessionStore is the session store; feature_disabled when the store
// keeps no sessions.
func (v *Voice) sessionStore() (memory.InnerVoiceStore, error) {
	if v.grounded.store == nil {
		return nil, memory.Errorf(memory.CodeFeatureDisabled, "this store keeps no inner_voice sessions")
	}
	return v.grounded.store, nil
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

func (v *Voice) sessionInfo(s memory.InnerVoiceSession, includePrivate bool) SessionInfo {
	info := SessionInfo{InnerVoiceSession: s, Active: s.Current && s.LastInteraction >= v.sessionSince()}
	if s.Summary.Private && !includePrivate {
		info.Summary.Text, info.Hidden = "", true
	}
	return info
}

// Sessions lists inner_voice's sessions within a scope (all without
// one), the latest interaction first, with the totals of those sessions
// and their exchanges.
func (v *Voice) Sessions(ctx context.Context, req SessionsRequest) (SessionList, error) {
	out := SessionList{Sessions: []SessionInfo{}}
	st, err := v.voiceSessions()
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
	active, ok, err := st.ActiveVoiceSession(ctx, req.ScopeIDs, v.sessionSince())
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
		out.Sessions = append(out.Sessions, v.sessionInfo(s, req.IncludePrivate))
	}
	out.Totals, err = st.VoiceTotals(ctx, req.ScopeIDs)
	return out, err
}

// Session reads a session and a page of its exchanges. Exchanges
// whose answer drew on a private thought show their question only,
// unless include_private.
func (v *Voice) Session(ctx context.Context, req SessionRequest) (SessionView, error) {
	out := SessionView{Exchanges: []memory.InnerVoiceExchange{}}
	st, err := v.voiceSessions()
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
	out.Session = v.sessionInfo(s, req.IncludePrivate)
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

// DeleteSession deletes a session and its exchanges, their text
// overwritten on disk. Unlike reading, it works with the inner voice
// disabled: erasing what was recorded is never gated (as forgetting a
// thought is not).
func (v *Voice) DeleteSession(ctx context.Context, req SessionRef) (SessionDeleted, error) {
	st, err := v.sessionStore()
	if err != nil {
		return SessionDeleted{}, err
	}
	if req.SessionID == "" {
		return SessionDeleted{}, memory.Errorf(memory.CodeInvalidParams, "session_id is required")
	}
	s, err := st.VoiceSession(ctx, req.SessionID)
	if err != nil {
		return SessionDeleted{}, err
	}
	if err := st.DeleteVoiceSession(ctx, s.ID); err != nil {
		return SessionDeleted{}, err
	}
	return SessionDeleted{Deleted: s.ID, Exchanges: s.TotalExchanges}, nil
}
