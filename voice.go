package cairn

import (
	"context"

	"github.com/cairnhq/cairn/retrieve"
	"github.com/cairnhq/cairn/voice"
)

// The inner voice: inner_voice.retrieve, inner_voice and its sessions,
// answered by the voice package.

// Bounds and names of inner_voice (see voice).
const (
	DefaultConfidenceMin = voice.DefaultConfidenceMin
	DefaultMaxNodes      = voice.DefaultMaxNodes
	DefaultMaxEdges      = voice.DefaultMaxEdges
	MaxStaged            = voice.MaxStaged
	AskPipeline          = voice.AskPipeline
	MaxSessionPage       = voice.MaxSessionPage
	// The outcomes of an inner_voice call.
	OutcomeAnswered  = voice.OutcomeAnswered
	OutcomeRefused   = voice.OutcomeRefused
	OutcomeNoSources = voice.OutcomeNoSources
	// Session modes.
	ModeContinue  = voice.ModeContinue
	ModeNewThread = voice.ModeNewThread
	ModeNone      = voice.ModeNone
)

type (
	// InnerVoiceRequest is inner_voice.retrieve's parameters.
	InnerVoiceRequest = retrieve.InnerVoiceRequest
	// InnerVoiceResult is inner_voice.retrieve's answer.
	InnerVoiceResult = retrieve.InnerVoiceResult
	// InnerVoiceConfig configures inner_voice.retrieve.
	InnerVoiceConfig = retrieve.InnerVoiceConfig
	// AskRequest is the inner_voice tool's parameters.
	AskRequest = voice.AskRequest
	// AskResult is inner_voice's answer.
	AskResult = voice.AskResult
	// AskSource is a record an answer drew on.
	AskSource = voice.AskSource
	// Staged counts the candidates a call staged.
	Staged = voice.Staged
	// AskDiagnostics explain an inner_voice call.
	AskDiagnostics = voice.AskDiagnostics
	// AskProvenance says what answered an inner_voice call.
	AskProvenance = voice.AskProvenance
	// AskSession is the session an exchange was recorded in.
	AskSession = voice.AskSession
	// InnerVoiceCall describes one inner_voice call for metrics.
	InnerVoiceCall = voice.Call
	// VoiceSessionsRequest lists inner_voice's sessions.
	VoiceSessionsRequest = voice.SessionsRequest
	// VoiceSessionInfo is a session as the tools show it.
	VoiceSessionInfo = voice.SessionInfo
	// VoiceSessionList is a page of sessions and their totals.
	VoiceSessionList = voice.SessionList
	// VoiceSessionRequest reads one session and a page of its exchanges.
	VoiceSessionRequest = voice.SessionRequest
	// VoiceSessionView is a session with a page of its exchanges.
	VoiceSessionView = voice.SessionView
	// VoiceSessionRef names a session.
	VoiceSessionRef = voice.SessionRef
	// VoiceSessionDeleted reports a deleted session.
	VoiceSessionDeleted = voice.SessionDeleted
	// GroundingSettings are the grounding verifier's thresholds.
	GroundingSettings = voice.GroundingSettings
	// LLMSettings describe the language model inner_voice answers with.
	LLMSettings = voice.LLMSettings
	// SessionSettings describe inner_voice's sessions.
	SessionSettings = voice.SessionSettings
)

// InnerVoice runs inner_voice.retrieve: snippets of thoughts and the
// knowledge graph most similar to a query, with provenance and trust
// tiers. It fails with feature_disabled unless the inner voice is
// enabled (SURR_ENABLE_INNER_VOICE=1).
func (e *Engine) InnerVoice(ctx context.Context, req InnerVoiceRequest) (InnerVoiceResult, error) {
	return e.voice.Retrieve(ctx, req)
}

// InnerVoiceConfig is the inner voice's effective configuration.
func (e *Engine) InnerVoiceConfig() InnerVoiceConfig { return e.voice.Config() }

// InnerVoiceCounters are the inner voice's calls and failures so far (kept
// even when MCP_NO_LOG silences the logs).
func (e *Engine) InnerVoiceCounters() (calls, failures int64) { return e.voice.Counters() }

// Ask runs the inner_voice tool (see voice.Voice.Ask): it answers a
// question from the records most similar to it, checked by the grounding
// verifier, and may save the answer, stage knowledge-graph candidates,
// mark the sources for removal and record the exchange in a session.
func (e *Engine) Ask(ctx context.Context, req AskRequest) (AskResult, error) {
	return e.voice.Ask(ctx, req)
}

// OnInnerVoice calls f after every inner_voice call, in the caller's
// goroutine (for metrics; it must not block); never with metrics off
// (SURR_INNER_VOICE_METRICS=0).
func (e *Engine) OnInnerVoice(f func(InnerVoiceCall)) { e.voice.OnCall(f) }

// VoiceSessions lists inner_voice's sessions within a scope, the latest
// interaction first, with their totals.
func (e *Engine) VoiceSessions(ctx context.Context, req VoiceSessionsRequest) (VoiceSessionList, error) {
	return e.voice.Sessions(ctx, req)
}

// VoiceSession reads a session and a page of its exchanges.
func (e *Engine) VoiceSession(ctx context.Context, req VoiceSessionRequest) (VoiceSessionView, error) {
	return e.voice.Session(ctx, req)
}

// DeleteVoiceSession deletes a session and its exchanges, their text
// overwritten on disk; it works with the inner voice disabled too.
func (e *Engine) DeleteVoiceSession(ctx context.Context, req VoiceSessionRef) (VoiceSessionDeleted, error) {
	return e.voice.DeleteSession(ctx, req)
}
