package voice

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/synth"
)

// Grounded answers and sessions of the inner_voice tool (seed 002): a
// language model, when one is configured, answers from a token-budgeted
// context and the grounding verifier checks every answer (the extractive
// synthesiser's too); a model that fails gives way to the extractive
// answer, with the reason; a session keeps the exchanges of a thread and
// folds the older ones into a rolling summary.

// grounding is the state of grounded answers and sessions.
type grounding struct {
	llm    llm.Client
	maxOut int
	// verifier checks every answer; minSources is its effective minimum.
	verifier   synth.Verifier
	minSources int
	sessions   synth.SessionConfig
	// judge asks the model for a second opinion on its answers' claims.
	judge bool
	// store keeps sessions (nil: the store has no sessions).
	store memory.InnerVoiceStore
	noLog bool
	// metrics and costs say whether metrics and cost tracking are on
	// (SURR_INNER_VOICE_METRICS, SURR_INNER_VOICE_COST_TRACKING).
	metrics, costs bool

	mu        sync.Mutex
	listeners []func(Call)
}

// Call describes one inner_voice call for metrics: figures
// only, never a question, a prompt or an answer.
type Call struct {
	// Synthesizer answered ("grounded", "extractive").
	Synthesizer string
	// Outcome is answered, refused or no_sources.
	Outcome string
	// Degraded says a language model failed and the extractive
	// synthesiser answered instead.
	Degraded bool
	Latency  time.Duration
	// PromptTokens, CompletionTokens and Cost are the model calls' (zero
	// without a model), a rolling summary's included.
	PromptTokens, CompletionTokens int
	Cost                           float64
	// Coverage is the answer's coverage ratio (0 without sources).
	Coverage float64
}

// The outcomes of an inner_voice call.
const (
	OutcomeAnswered  = "answered"
	OutcomeRefused   = "refused"
	OutcomeNoSources = "no_sources"
)

// OnCall calls f after every inner_voice call, in the caller's
// goroutine (for metrics; it must not block); never with metrics off
// (SURR_INNER_VOICE_METRICS=0).
func (v *Voice) OnCall(f func(Call)) {
	v.grounded.mu.Lock()
	defer v.grounded.mu.Unlock()
	v.grounded.listeners = append(v.grounded.listeners, f)
}

// observeVoice tells the listeners of a call and logs its figures (not
// with MCP_NO_LOG); with metrics off (SURR_INNER_VOICE_METRICS=0) it does
// neither.
func (v *Voice) observeVoice(ctx context.Context, c Call) {
	if !v.grounded.metrics {
		return
	}
	v.grounded.mu.Lock()
	ls := append([]func(Call){}, v.grounded.listeners...)
	v.grounded.mu.Unlock()
	for _, f := range ls {
		f(c)
	}
	if !v.grounded.noLog {
		v.log.InfoContext(ctx, "inner_voice_call", "synthesizer", c.Synthesizer, "outcome", c.Outcome, "degraded", c.Degraded,
			"latency_ms", c.Latency.Milliseconds(), "prompt_tokens", c.PromptTokens, "completion_tokens", c.CompletionTokens,
			"coverage", c.Coverage, "refused", c.Outcome == OutcomeRefused, "cost_usd", c.Cost)
	}
}

// modelFunc asks an llm.Client for what the grounded synthesiser needs.
// With cost tracking off no cost is taken from the calls.
func (v *Voice) modelFunc(c llm.Client) synth.ModelFunc {
	costs := v.grounded.costs
	return func(ctx context.Context, req synth.ModelRequest) (synth.ModelReply, error) {
		res, err := c.Synthesize(ctx, llmPrompt(req), llm.Config{Schema: req.Schema, SchemaName: req.SchemaName})
		if !costs {
			res.Cost = 0
		}
		return synth.ModelReply{Text: res.Text, FinishReason: res.FinishReason, Model: res.Model,
			PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, Cost: res.Cost}, err
	}
}

func llmPrompt(req synth.ModelRequest) llm.Prompt {
	p := llm.Prompt{System: req.System}
	for _, m := range req.Messages {
		p.Messages = append(p.Messages, llm.Message{Role: llm.Role(m.Role), Content: m.Content})
	}
	return p
}

// countText counts a text's tokens as the model would (an estimate
// without one).
func (v *Voice) countText(s string) int {
	c := v.grounded.llm
	if c == nil {
		return content.EstimateTokens(s)
	}
	// A lone user message, less the chat format's overheads.
	return max(0, c.CountTokens(llm.Prompt{Messages: []llm.Message{{Role: llm.RoleUser, Content: s}}}, llm.Config{})-6)
}

// promptBudget is the hard budget of one prompt: SURR_INNER_VOICE_MAX_TOKENS,
// or less when the model's window minus the answer's budget is smaller.
func (v *Voice) promptBudget() int {
	b := v.grounded.sessions.MaxPromptTokens
	if c := v.grounded.llm; c != nil {
		b = min(b, c.ContextWindow()-v.grounded.maxOut)
	}
	return max(b, 1)
}

// groundedAnswer is an answer with its grounding and what it took.
type groundedAnswer struct {
	answer   synth.Answer
	response synth.GroundedResponse
	// used are the sources the synthesiser was given (the budget may
	// leave some out).
	used []synth.Source
	// usage is the model calls' (zero for the extractive synthesiser).
	usage   synth.Synthesis
	context *synth.Context
	// degraded says why the model's answer was replaced by the
	// extractive one.
	degraded string
	latency  time.Duration
}

// ground answers q from sources: with the language model when one is
// configured (a prompt within the budget, conv as context), else or when
// it fails with the voice's synthesiser, whose answer the verifier then
// checks. Every answer comes back with the grounding contract; a refused
// one has no text.
func (v *Voice) ground(ctx context.Context, q string, sources []synth.Source, conv synth.Conversation) (groundedAnswer, error) {
	return v.groundWith(ctx, v.grounded.verifier, v.synth, q, sources, conv)
}

// groundWith is ground with a verifier and a fallback synthesiser of the
// caller's.
func (v *Voice) groundWith(ctx context.Context, ver synth.Verifier, fallback synth.Synthesizer, q string, sources []synth.Source, conv synth.Conversation) (groundedAnswer, error) {
	start := time.Now()
	out := groundedAnswer{used: sources}
	if c := v.grounded.llm; c != nil {
		budget := v.promptBudget()
		schema := llm.Config{Schema: synth.GroundedSchema, SchemaName: synth.GroundedSchemaName}
		built, err := synth.BuildContext(q, conv, sources, synth.ContextOptions{MaxTokens: budget, CountText: v.countText,
			CountPrompt: func(system, user string) int {
				return c.CountTokens(llm.Prompt{System: system, Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}}, schema)
			}})
		if err != nil {
			out.degraded = memory.Public(err).Message
		} else {
			out.context = &built
			ls := synth.LLMSynthesizer{Model: v.modelFunc(c), Prompt: synth.SessionPrompt(built.Conversation), Verifier: ver,
				Fits: func(r synth.ModelRequest) bool { return c.CountTokens(llmPrompt(r), schema) <= budget }}
			if v.grounded.judge {
				ls.Judge = &synth.Judge{Model: v.modelFunc(c)}
			}
			// The model gets the caller's time less a reserve for the
			// extractive answer and the writes, should it fail.
			mctx, cancel := ctx, context.CancelFunc(func() {})
			if dl, ok := ctx.Deadline(); ok {
				reserve := min(5*time.Second, max(time.Until(dl)/10, 500*time.Millisecond))
				mctx, cancel = context.WithDeadline(ctx, dl.Add(-reserve))
			}
			var usage synth.Synthesis
			ans, err := synth.Grounded{LLM: ls, Last: func(s synth.Synthesis) { usage = s }}.Synthesize(mctx, q, built.Sources)
			cancel()
			out.usage = usage
			if err == nil {
				out.answer, out.response, out.used = ans, usage.GroundedResponse, built.Sources
				out.latency = time.Since(start)
				return out, nil
			}
			out.degraded = memory.Public(err).Message
			v.log.WarnContext(ctx, "inner_voice: the language model failed; the extractive synthesiser answers", "detail", memory.Detail(err))
		}
	}
	ans, err := fallback.Synthesize(ctx, q, sources)
	if err != nil {
		return out, err
	}
	if ans.Sentences == nil {
		ans.Sentences = []synth.Sentence{}
	}
	if ans.Refused {
		out.response = synth.GroundedResponse{Answer: synth.RefusalText, Sources: []synth.SourceCitation{}, Refused: true, Notes: ans.Notes}
	} else {
		// What the verifier did not accept is neither shown nor saved: a
		// refusal has no text, an accepted answer only its supported
		// sentences.
		out.response = ver.Verify(ctx, ans.Draft(sources), sources)
		ans = ans.Verified(out.response)
	}
	out.answer = ans
	out.latency = time.Since(start)
	return out, nil
}

// primaryName names the synthesiser that answers when nothing fails.
func (v *Voice) primaryName() string {
	if v.grounded.llm != nil {
		return synth.GroundedName
	}
	return synthName(v.synth)
}

// Session modes.
const (
	ModeContinue  = "continue"
	ModeNewThread = "new_thread"
	ModeNone      = "none"
)

// maxTopicChars bounds a thread's topic.
const maxTopicChars = 200

// voiceThread is the session a call continues or starts.
type voiceThread struct {
	mode string
	// session is the session continued (nil: one is created when the
	// exchange is recorded).
	session *memory.InnerVoiceSession
	topic   string
	// scope is the scope of the session started (a continued session
	// keeps its own).
	scope  memory.Scope
	window []memory.InnerVoiceExchange
}

// openThread finds the session a call continues (reading only) and the
// conversation it brings. Without a session store a call that asks for
// no mode stands alone, with a note; one that asks for a mode is
// feature_disabled.
func (v *Voice) openThread(ctx context.Context, req AskRequest, q string, d *AskDiagnostics) (voiceThread, synth.Conversation, error) {
	mode := strings.ToLower(strings.TrimSpace(req.Mode))
	switch mode {
	case "":
		mode = ModeContinue
		if req.Save != nil && !*req.Save && req.SessionID == "" && req.ScopeIDs.IsZero() {
			// save=false writes nothing (seed 001): no exchange either,
			// unless the caller asks for a session (session_id, or the
			// session of a scope).
			mode = ModeNone
		} else if v.grounded.store == nil {
			d.Notes = append(d.Notes, "this store keeps no inner_voice sessions: the call stands alone")
			mode = ModeNone
		}
	case ModeContinue, ModeNewThread, ModeNone:
		if mode != ModeNone && v.grounded.store == nil {
			return voiceThread{}, synth.Conversation{}, memory.Errorf(memory.CodeFeatureDisabled, "mode %s: this store keeps no inner_voice sessions", mode)
		}
	default:
		return voiceThread{}, synth.Conversation{}, memory.Errorf(memory.CodeInvalidParams, "mode %q: want continue, new_thread or none", req.Mode)
	}
	if req.SessionID != "" && mode != ModeContinue {
		return voiceThread{}, synth.Conversation{}, memory.Errorf(memory.CodeInvalidParams, "session_id continues a session: it needs mode continue, not %s", mode)
	}
	topic := strings.Join(strings.Fields(req.Topic), " ")
	if err := memory.ValidateText("topic", topic, 4*maxTopicChars); err != nil {
		return voiceThread{}, synth.Conversation{}, err
	}
	if utf8.RuneCountInString(topic) > maxTopicChars {
		return voiceThread{}, synth.Conversation{}, memory.Errorf(memory.CodeInvalidParams, "topic has %d characters, over %d", utf8.RuneCountInString(topic), maxTopicChars)
	}
	if err := req.ScopeIDs.Validate(); err != nil {
		return voiceThread{}, synth.Conversation{}, err
	}
	th := voiceThread{mode: mode, topic: topic, scope: req.ScopeIDs}
	if mode == ModeNone {
		return th, synth.Conversation{}, nil
	}
	if th.topic == "" {
		th.topic = cutChars(strings.Join(strings.Fields(q), " "), 80)
	}
	if mode == ModeNewThread {
		return th, synth.Conversation{Topic: th.topic}, nil
	}
	var sess memory.InnerVoiceSession
	switch {
	case req.SessionID != "":
		s, err := v.grounded.store.VoiceSession(ctx, req.SessionID)
		if err != nil {
			return th, synth.Conversation{}, err
		}
		if !req.ScopeIDs.IsZero() && s.Scope != req.ScopeIDs {
			return th, synth.Conversation{}, memory.Errorf(memory.CodeInvalidParams, "session %s belongs to scope %q, not %q", s.ID,
				s.Scope.String(), req.ScopeIDs.String())
		}
		sess = s
	default:
		s, ok, err := v.grounded.store.ActiveVoiceSession(ctx, req.ScopeIDs, v.sessionSince())
		if err != nil {
			return th, synth.Conversation{}, err
		}
		if !ok {
			return th, synth.Conversation{Topic: th.topic}, nil
		}
		sess = s
	}
	if req.Topic != "" && topic != sess.Topic {
		d.Notes = append(d.Notes, "topic names a new thread's topic; the session continued keeps its own")
	}
	th.session, th.topic = &sess, sess.Topic
	window, err := v.window(ctx, sess)
	if err != nil {
		return th, synth.Conversation{}, err
	}
	th.window = window
	conv := synth.Conversation{Topic: sess.Topic}
	if !sess.Summary.Private || req.IncludePrivate {
		conv.Summary = sess.Summary.Text
	}
	for _, x := range window {
		if x.Private && !req.IncludePrivate {
			continue // an answer drawn from a private thought stays out
		}
		answer := x.Answer
		if x.Redacted || x.Refused {
			answer = ""
		}
		conv.Turns = append(conv.Turns, synth.Turn{Query: x.Query, Answer: answer})
	}
	return th, conv, nil
}

// sessionSince is the earliest last interaction of a session a call
// continues by default (SURR_INNER_VOICE_TIMEOUT ago), in Unix ms.
func (v *Voice) sessionSince() int64 {
	return v.now().Add(-v.grounded.sessions.Timeout).UnixMilli()
}

// window lists a session's exchanges after its rolling summary.
func (v *Voice) window(ctx context.Context, sess memory.InnerVoiceSession) ([]memory.InnerVoiceExchange, error) {
	var out []memory.InnerVoiceExchange
	after := sess.SummarizedThrough
	for {
		page, err := v.grounded.store.VoiceExchanges(ctx, sess.ID, after, 1000)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < 1000 {
			return out, nil
		}
		after = page[len(page)-1].Seq
	}
}

// cutChars cuts s to at most n characters, at a space when one is near.
func cutChars(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	cut := n
	for i := n; i > n/2; i-- {
		if rs[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimSpace(string(rs[:cut])) + "…"
}

// record stores an exchange in the thread's session, and rolls the
// summary when the window has grown past SummaryAfter. A new thread
// creates its session (its scope's current one from then on); a call
// that found no session to continue opens one, which the store decides:
// of calls racing for one scope, from any process, one creates the
// session and the others continue it.
func (v *Voice) record(ctx context.Context, th voiceThread, x memory.InnerVoiceExchange) (*AskSession, []string, synth.Synthesis, error) {
	st := v.grounded.store
	out := &AskSession{Mode: th.mode}
	var sess memory.InnerVoiceSession
	// joined says another call started the session this one continues.
	joined := false
	if th.session == nil {
		provider, model := "", synth.ExtractiveName
		if c := v.grounded.llm; c != nil {
			provider, model = c.Provider(), c.Model()
		} else if n := synthName(v.synth); n != "" {
			model = n
		}
		now := v.nowMs()
		fresh := memory.InnerVoiceSession{ID: v.newID("ivs"), Version: memory.InnerVoiceSessionVersion, Provider: provider, Model: model,
			MaxPromptTokens: v.promptBudget(), Topic: th.topic, CreatedAt: now, LastInteraction: now, Scope: th.scope}
		var err error
		if th.mode == ModeNewThread {
			sess, err = st.CreateVoiceSession(ctx, fresh)
			out.Created = true
		} else {
			sess, out.Created, err = st.OpenVoiceSession(ctx, fresh, v.sessionSince())
			joined = !out.Created
		}
		if err != nil {
			return nil, nil, synth.Synthesis{}, err
		}
	} else {
		sess = *th.session
	}
	x.ID, x.SessionID = v.newID("ivx"), sess.ID
	if !v.grounded.metrics {
		// No figures stored: the sessions' totals do not move.
		x.PromptTokens, x.CompletionTokens, x.LatencyMs, x.CostEstimate = 0, 0, 0, 0
	}
	stored, sess, err := st.AddVoiceExchange(ctx, x)
	if err != nil {
		return nil, nil, synth.Synthesis{}, err
	}
	out.SessionID, out.ExchangeID, out.Seq, out.Topic, out.Scope = sess.ID, stored.ID, stored.Seq, sess.Topic, sess.Scope
	var notes []string
	var usage synth.Synthesis
	window := append(th.window, stored)
	if joined {
		// The session's window is what its calls recorded, this one's
		// exchange included.
		if window, err = v.window(ctx, sess); err != nil {
			return nil, nil, synth.Synthesis{}, err
		}
	}
	if fold := synth.SummaryFold(window); fold != nil {
		s, made, note, u, err := v.rollSummary(ctx, sess, fold)
		usage = u
		switch {
		case memory.IsCode(err, memory.CodeConflict):
			// Another call summarised first.
		case err != nil:
			notes = append(notes, "the rolling summary was not updated: "+memory.Public(err).Message)
		default:
			sess, out.Summarized = s, made
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	out.TotalExchanges, out.TotalTokens, out.TotalCost = sess.TotalExchanges, sess.TotalTokens, sess.TotalCost
	out.SummarizedThrough = sess.SummarizedThrough
	return out, notes, usage, nil
}

// rollSummary folds exchanges into the session's rolling summary, made by
// the same synthesiser from their answers and the previous summary, and
// held to the same grounding rules. A summary that cannot be grounded
// keeps the previous text (the window still moves on, so a session never
// grows without bound); made says a new text was written.
func (v *Voice) rollSummary(ctx context.Context, sess memory.InnerVoiceSession, fold []memory.InnerVoiceExchange) (memory.InnerVoiceSession, bool, string, synth.Synthesis, error) {
	prev := sess.Summary
	q, sources := synth.SummaryInput(sess.Topic, prev.Text, fold)
	sum := memory.RollingSummary{Text: prev.Text, LastUpdated: v.nowMs(), ExchangesSummarized: prev.ExchangesSummarized + len(fold),
		CoverageRatio: prev.CoverageRatio, Private: prev.Private}
	folded := 0
	for _, x := range fold {
		sum.Private = sum.Private || x.Private
		folded += v.countText(x.Query + "\n" + x.Answer)
	}
	var usage synth.Synthesis
	made, note := false, ""
	if len(sources) > 0 {
		// A summary rests on the exchanges it folds: every sentence must be
		// supported by them, as an answer's by its memories, but one
		// exchange may say all there is (the two-source rule is an
		// answer's).
		ver := v.grounded.verifier
		ver.MinSources = 1
		var fallback synth.Synthesizer = v.synth
		if x, ok := v.synth.(synth.Extractive); ok {
			x.MinSources = 1
			fallback = x
		}
		g, err := v.groundWith(ctx, ver, fallback, q, sources, synth.Conversation{})
		if err != nil {
			return sess, false, "", synth.Synthesis{}, err
		}
		usage = g.usage
		switch {
		case g.response.Refused || strings.TrimSpace(g.answer.Text) == "":
			note = "the rolling summary keeps its earlier text: a new one was not grounded (" + g.response.Notes + ")"
		default:
			sum.Text, sum.CoverageRatio, made = g.answer.Text, g.response.CoverageRatio, true
		}
		if g.degraded != "" {
			note = strings.TrimSpace(note + " The rolling summary was made without the language model: " + g.degraded)
		}
	}
	sum.TokenSavings = prev.TokenSavings + folded - (v.countText(sum.Text) - v.countText(prev.Text))
	stored := usage
	if !v.grounded.metrics {
		stored = synth.Synthesis{} // no figures stored: the aggregates do not move
	}
	s, err := v.grounded.store.SetVoiceSummary(ctx, sess.ID, sum, fold[len(fold)-1].Seq,
		int64(stored.PromptTokens), int64(stored.CompletionTokens), stored.Cost)
	return s, made, note, usage, err
}
