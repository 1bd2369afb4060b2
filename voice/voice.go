package voice

import (
	"context"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
	"github.com/cairnhq/cairn/synth"
)

// Options are what a Voice is made of; the engine fills them.
type Options struct {
	// Thoughts reads the sources and saves answers. Candidates stages
	// knowledge-graph candidates and Removals marks thoughts for
	// removal; Sessions keeps sessions. Each of these three may be nil
	// (the store lacks it: what needs it is feature_disabled).
	Thoughts   memory.ThoughtStore
	Candidates memory.CandidateStore
	Removals   memory.RemovalStore
	Sessions   memory.InnerVoiceStore
	// Recall is inner_voice.retrieve's pipeline, which finds the sources.
	Recall *retrieve.InnerVoice
	// Ask is the inner_voice tool's configuration (nil: the defaults;
	// zero fields are defaults too, out-of-bounds values clamped).
	Ask *synth.AskConfig
	// Synthesizer answers without a language model, and when the model
	// fails (nil: synth.Extractive).
	Synthesizer synth.Synthesizer
	// LLM, when set, answers with grounded synthesis; LLMMaxOutputTokens
	// is the answer's budget (default 1024).
	LLM                llm.Client
	LLMMaxOutputTokens int
	// Verifier checks every answer and SessionConfig configures sessions
	// and the prompt budget (nil: the defaults).
	Verifier      *synth.Verifier
	SessionConfig *synth.SessionConfig
	// Judge, with LLM set, asks the model for a second opinion on the
	// claims the verifier supports in its answers (CAIRN_GROUNDING_JUDGE):
	// one more request, whose tokens and cost count with the answer's.
	Judge bool
	// Space is the embedding space the sources are compared in.
	Space memory.Space
	// NoLog (MCP_NO_LOG) keeps a call's log line out.
	NoLog bool
	// Now is the clock; NewID makes a record's id from a prefix.
	Now   func() time.Time
	NewID func(prefix string) string
	// CheckThought validates a thought to save, as every write of a
	// thought does, and redacts its secrets.
	CheckThought func(*memory.Thought) error
	// Embed embeds records just written; a failure leaves them pending.
	Embed  func(ctx context.Context, jobs []memory.EmbedJob)
	Logger *slog.Logger
}

// Voice is the inner voice. It is safe for concurrent use.
type Voice struct {
	thoughts     memory.ThoughtStore
	candidates   memory.CandidateStore
	removals     memory.RemovalStore
	recall       *retrieve.InnerVoice
	ask          synth.AskConfig
	synth        synth.Synthesizer
	space        memory.Space
	now          func() time.Time
	newID        func(prefix string) string
	checkThought func(*memory.Thought) error
	embed        func(ctx context.Context, jobs []memory.EmbedJob)
	log          *slog.Logger
	// grounded holds what grounded answers and sessions need.
	grounded grounding
}

// New makes the inner voice from o, with the defaults in place of what o
// leaves unset.
func New(o Options) *Voice {
	v := &Voice{thoughts: o.Thoughts, candidates: o.Candidates, removals: o.Removals, recall: o.Recall, ask: synth.DefaultAskConfig(),
		synth: o.Synthesizer, space: o.Space, now: o.Now, newID: o.NewID, checkThought: o.CheckThought, embed: o.Embed, log: o.Logger}
	if o.Ask != nil {
		v.ask = askWithDefaults(*o.Ask)
	}
	g := &v.grounded
	g.llm, g.maxOut, g.noLog, g.store = o.LLM, o.LLMMaxOutputTokens, o.NoLog, o.Sessions
	g.judge = o.Judge && o.LLM != nil
	if g.maxOut <= 0 {
		g.maxOut = 1024
	}
	if o.Verifier != nil {
		g.verifier = *o.Verifier
	}
	g.minSources = g.verifier.MinSources
	if g.minSources <= 0 {
		g.minSources = synth.DefaultMinSources
	}
	g.sessions = synth.DefaultSessionConfig()
	if o.SessionConfig != nil {
		g.sessions = *o.SessionConfig
	}
	if g.sessions.MaxPromptTokens <= 0 {
		g.sessions.MaxPromptTokens = synth.DefaultMaxPromptTokens
	}
	if g.sessions.Timeout <= 0 {
		g.sessions.Timeout = synth.DefaultSessionTimeout
	}
	g.metrics, g.costs = !g.sessions.NoMetrics, !g.sessions.NoCostTracking
	if v.synth == nil {
		v.synth = synth.Extractive{MinSources: g.minSources}
	}
	return v
}

// nowMs reads the clock in Unix milliseconds.
func (v *Voice) nowMs() int64 { return v.now().UnixMilli() }

// Retrieve runs inner_voice.retrieve: snippets of thoughts and the
// knowledge graph most similar to a query, with provenance and trust
// tiers, for a caller to synthesise from. It fails with feature_disabled
// unless the inner voice is enabled (SURR_ENABLE_INNER_VOICE=1).
func (v *Voice) Retrieve(ctx context.Context, req retrieve.InnerVoiceRequest) (retrieve.InnerVoiceResult, error) {
	return v.recall.Retrieve(ctx, req)
}

// Config is inner_voice.retrieve's effective configuration.
func (v *Voice) Config() retrieve.InnerVoiceConfig { return v.recall.Config }

// Counters are inner_voice.retrieve's calls and failures so far (kept
// even when MCP_NO_LOG silences the logs).
func (v *Voice) Counters() (calls, failures int64) { return v.recall.Counters() }
