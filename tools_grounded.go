package cairn

import "context"

// groundedTools read and delete inner_voice's sessions (seed 002); the
// grounded answers themselves come from inner_voice.
var groundedTools = []Tool{
	newTool(Tool{
		Name: "inner_voice_sessions", Title: "List inner_voice sessions", Method: "GET", Path: "/v1/inner-voice/sessions", ReadOnly: true, Idempotent: true,
		Description: `List the sessions inner_voice records its exchanges in, the latest interaction first: each with its thread_topic, the language model it was opened with (provider, model; "extractive" without one), max_prompt_tokens, its rolling_summary of older exchanges (text, exchanges_summarized, token_savings), created_at and last_interaction (Unix ms), and lifetime total_exchanges, total_tokens and total_cost (US dollars). active marks the session inner_voice continues when no session_id is given, one per scope (last interaction within SURR_INNER_VOICE_TIMEOUT, default 24 h). scopeIds lists the sessions within a scope (each key given must match; a scoped session shows its scopeIds) and active_session_id is the one of exactly that scope. totals adds up the sessions listed (every page) and their exchanges: exchanges, refused, degraded (a model failed and the extractive answer was given), tokens, cost, mean coverage and latency; never a question or an answer. A summary drawn from private thoughts is hidden unless include_private. limit 1..1000 (default 100), offset to page. Like inner_voice, feature_disabled unless the server runs with SURR_ENABLE_INNER_VOICE=1.`,
	}, func(e *Engine, ctx context.Context, in VoiceSessionsRequest) (VoiceSessionList, error) {
		return e.VoiceSessions(ctx, in)
	}),
	newTool(Tool{
		Name: "inner_voice_session", Title: "Read an inner_voice session", Method: "GET", Path: "/v1/inner-voice/sessions/{session_id}", ReadOnly: true, Idempotent: true,
		Description: `Read one inner_voice session and its exchanges in order: each with its query, answer ("" when refused), sources (source_id, source_type, span, relevance), confidence, coverage_ratio, refused and notes, memories_referenced, the synthesizer and model, degraded (why a model's answer was replaced), prompt and completion tokens, latency_ms, cost_estimate and prompt_hash (SHA-256; the prompt itself is never stored). An exchange whose cited record was since forgotten or deleted shows "[redacted]". context_window counts the exchanges after the rolling summary. An answer drawn from a private thought shows only its question unless include_private. after and limit (1..1000, default 100) page through the exchanges; next_after is the next page's after. Like inner_voice, feature_disabled unless the server runs with SURR_ENABLE_INNER_VOICE=1.`,
	}, func(e *Engine, ctx context.Context, in VoiceSessionRequest) (VoiceSessionView, error) {
		return e.VoiceSession(ctx, in)
	}),
	newTool(Tool{
		Name: "inner_voice_session_delete", Title: "Delete an inner_voice session", Method: "DELETE", Path: "/v1/inner-voice/sessions/{session_id}", Destructive: true,
		Description: `Delete an inner_voice session with all its exchanges and its rolling summary; their text is overwritten on disk. The memories the answers cited are not touched. Cannot be undone; deleting it again is not_found. Works even while inner_voice is disabled. Returns the session's id and how many exchanges it held.`,
	}, func(e *Engine, ctx context.Context, in VoiceSessionRef) (VoiceSessionDeleted, error) {
		return e.DeleteVoiceSession(ctx, in)
	}),
}
