package memory

import "context"

// InnerVoiceSessionVersion is the version of the session record's schema
// this build writes (InnerVoiceSession.Version). A reader keeps a record of
// an older version readable; a newer one is refused by the store's schema
// check before it is read.
const InnerVoiceSessionVersion = 1

// InnerVoiceSession is a thread of inner_voice exchanges: the settings it
// was opened with, a rolling summary of its older exchanges, and what it
// cost over its life. Its exchanges are InnerVoiceExchange records; the
// context window is those after SummarizedThrough.
type InnerVoiceSession struct {
	ID string `json:"id"`
	// Version is the record's schema version (InnerVoiceSessionVersion).
	Version int `json:"version"`
	// Provider and Model name the language model the session was opened
	// with ("" and "extractive" without one).
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// MaxPromptTokens is the hard budget of one prompt.
	MaxPromptTokens int `json:"max_prompt_tokens"`
	// Topic is the thread's topic.
	Topic string `json:"thread_topic"`
	// Summary is the rolling summary of the exchanges up to and including
	// SummarizedThrough (a sequence number; 0: none summarised).
	Summary           RollingSummary `json:"rolling_summary"`
	SummarizedThrough int            `json:"summarized_through"`
	// CreatedAt and LastInteraction are Unix milliseconds.
	CreatedAt       int64 `json:"created_at"`
	LastInteraction int64 `json:"last_interaction"`
	// Lifetime totals: exchanges recorded, the tokens and cost of every
	// model call made for the session (answers and summaries).
	TotalExchanges        int     `json:"total_exchanges"`
	TotalPromptTokens     int64   `json:"total_prompt_tokens"`
	TotalCompletionTokens int64   `json:"total_completion_tokens"`
	TotalTokens           int64   `json:"total_tokens"`
	TotalCost             float64 `json:"total_cost"`
	// Scope is whose session it is (the zero scope: nobody's in
	// particular). A session is continued by default only by calls of
	// exactly its scope.
	Scope Scope `json:"scopeIds,omitzero"`
	// Current says the session is its scope's current one: the one a
	// call without a session id continues while its last interaction is
	// within the session timeout. A scope has at most one current session;
	// the store holds that, whatever processes share it.
	Current bool `json:"-"`
}

// RollingSummary summarises a session's older exchanges. It is made by
// the session's synthesiser from those exchanges' answers and is held to
// the same grounding rules as an answer.
type RollingSummary struct {
	Text string `json:"text"`
	// LastUpdated is Unix milliseconds (0: never).
	LastUpdated int64 `json:"last_updated"`
	// ExchangesSummarized counts the exchanges it covers.
	ExchangesSummarized int `json:"exchanges_summarized"`
	// TokenSavings is how many tokens the summarised exchanges would take
	// in a prompt beyond the summary's own.
	TokenSavings  int     `json:"token_savings"`
	CoverageRatio float64 `json:"coverage_ratio"`
	// Private says a summarised exchange drew on a private thought.
	Private bool `json:"private,omitempty"`
}

// VoiceCitation is a citation of a grounded answer, as stored with its
// exchange.
type VoiceCitation struct {
	SourceID   string  `json:"source_id"`
	SourceType string  `json:"source_type"`
	Span       string  `json:"span"`
	Relevance  float64 `json:"relevance"`
}

// InnerVoiceExchange is one question and answer of a session, with what
// the answer rests on and what it took. The prompt is never stored: only
// its hash (PromptHash, the hex SHA-256).
type InnerVoiceExchange struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	// Seq numbers the session's exchanges from 1, in order.
	Seq int `json:"seq"`
	// Timestamp is Unix milliseconds.
	Timestamp int64  `json:"timestamp"`
	Query     string `json:"query"`
	// Answer is the answer given ("" when refused or when nothing
	// answered).
	Answer        string          `json:"answer"`
	Sources       []VoiceCitation `json:"sources"`
	Confidence    float64         `json:"confidence"`
	CoverageRatio float64         `json:"coverage_ratio"`
	Refused       bool            `json:"refused"`
	Notes         string          `json:"notes,omitempty"`
	// MemoriesReferenced are the ids of the records the answer cites.
	MemoriesReferenced []string `json:"memories_referenced"`
	// Synthesizer answered ("grounded", "extractive"); Model is the model
	// asked, if any; Degraded says why a model's answer was replaced by
	// the extractive one ("" when it was not).
	Synthesizer      string  `json:"synthesizer"`
	Model            string  `json:"model,omitempty"`
	Degraded         string  `json:"degraded,omitempty"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	LatencyMs        int64   `json:"latency_ms"`
	CostEstimate     float64 `json:"cost_estimate"`
	PromptHash       string  `json:"prompt_hash,omitempty"`
	// Private says a source of the answer is a private thought.
	Private bool `json:"private,omitempty"`
	// Redacted says a record the answer cited was forgotten or deleted
	// since: Answer is RedactedContent and Sources are gone.
	Redacted bool `json:"redacted,omitempty"`
}

// InnerVoiceTotals aggregate every stored exchange and summary: figures
// only, never a query or an answer.
type InnerVoiceTotals struct {
	Sessions         int     `json:"sessions"`
	Exchanges        int     `json:"exchanges"`
	Refused          int     `json:"refused"`
	Degraded         int     `json:"degraded"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	Cost             float64 `json:"cost"`
	// MeanCoverage and MeanLatencyMs are over the exchanges (0 without).
	MeanCoverage  float64 `json:"mean_coverage"`
	MeanLatencyMs float64 `json:"mean_latency_ms"`
}

// InnerVoiceStore keeps inner_voice's sessions and their exchanges. A
// store that implements it lets inner_voice continue a thread; without it
// every call stands alone. When a record an exchange cites is forgotten
// (RedactThought) or deleted (a thought finalized, a graph entity or fact
// deleted), the exchange's answer becomes RedactedContent, its citations
// go, and a rolling summary made from it is dropped (its exchanges return
// to the context window).
type InnerVoiceStore interface {
	// CreateVoiceSession stores a new session (a complete record: id,
	// version, times, scope) as the current session of its scope, in one
	// transaction with ending the one current before (a new thread). A
	// duplicate id is a conflict.
	CreateVoiceSession(ctx context.Context, s InnerVoiceSession) (InnerVoiceSession, error)
	// OpenVoiceSession continues or starts the thread of s.Scope, in one
	// transaction: the scope's current session when its last interaction
	// is at or after since (created false); else s, stored as the scope's
	// current session (a current session too old is ended; created true).
	// Calls racing for one scope, from any process sharing the store,
	// agree on one session: one creates it, the others continue it.
	OpenVoiceSession(ctx context.Context, s InnerVoiceSession, since int64) (out InnerVoiceSession, created bool, err error)
	// VoiceSession returns one session; not_found when there is none.
	VoiceSession(ctx context.Context, id string) (InnerVoiceSession, error)
	// ActiveVoiceSession returns the current session of exactly scope
	// when its last interaction is at or after since; false when there
	// is none or it is older.
	ActiveVoiceSession(ctx context.Context, scope Scope, since int64) (InnerVoiceSession, bool, error)
	// VoiceSessions lists the sessions within filter (each dimension set
	// in it must match; the zero filter lists all), the latest interaction
	// first (then by id); offset skips, limit caps the page (default 100).
	VoiceSessions(ctx context.Context, filter Scope, offset, limit int) ([]InnerVoiceSession, error)
	// AddVoiceExchange appends an exchange to its session in one
	// transaction: it takes the session's next sequence number, adds its
	// tokens and cost to the session's totals, counts it, sets the
	// session's last interaction to its timestamp (never earlier) and
	// makes the session its scope's current one. It returns the exchange
	// and the session as stored; not_found when the session does not
	// exist.
	AddVoiceExchange(ctx context.Context, x InnerVoiceExchange) (InnerVoiceExchange, InnerVoiceSession, error)
	// VoiceExchanges lists a session's exchanges with a sequence number
	// above after, in order; limit caps the page (default 100).
	VoiceExchanges(ctx context.Context, sessionID string, after, limit int) ([]InnerVoiceExchange, error)
	// SetVoiceSummary replaces a session's rolling summary with one that
	// covers its exchanges through seq, adding the summary's tokens and
	// cost to the totals. A summary through a sequence number not above
	// the current one is a conflict (another process summarised first);
	// not_found when the session does not exist.
	SetVoiceSummary(ctx context.Context, sessionID string, s RollingSummary, through int, promptTokens, completionTokens int64, cost float64) (InnerVoiceSession, error)
	// DeleteVoiceSession deletes a session and its exchanges, their text
	// overwritten on disk; not_found when it does not exist.
	DeleteVoiceSession(ctx context.Context, id string) error
	// VoiceTotals aggregates the sessions within filter (as VoiceSessions
	// selects them) and their exchanges.
	VoiceTotals(ctx context.Context, filter Scope) (InnerVoiceTotals, error)
}
