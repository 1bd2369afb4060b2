package cairn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/internal/llmtest"
	"github.com/cairnhq/cairn/internal/sample"
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/synth"
)

// Grounded answers through the wired inner_voice: a fake provider (each
// API's wire format, no network) answers, cairn checks.

// kgFacts are knowledge-graph facts about the auth-service; askEngine's
// thoughts say much the same, so a prompt shows which pool it drew on.
var kgFacts = []string{
	"Clock drift breaks session token expiry because the auth-service depends on NTP.",
	"The auth-service uses Redis for session tokens, and clock drift breaks session token expiry.",
	"Session token expiry on the auth-service tolerates five seconds of clock drift.",
}

// groundedEngine is askEngine with a language model and the facts.
func groundedEngine(t *testing.T, c llm.Client, opts *cairn.Options) (*cairn.Engine, []memory.KGObservation) {
	t.Helper()
	if opts == nil {
		opts = &cairn.Options{}
	}
	opts.LLM = c
	eng, _ := askEngine(t, opts)
	ent := entity(t, eng, "auth-service", "service")
	var facts []memory.KGObservation
	for _, f := range kgFacts {
		facts = append(facts, observe(t, eng, ent.ID, f))
	}
	return eng, facts
}

func fakeClient(t *testing.T, srv *llmtest.Server, edit func(*llm.Settings)) llm.Client {
	t.Helper()
	s := srv.Settings()
	if edit != nil {
		edit(&s)
	}
	c, err := llm.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func quoting(n int, extra ...string) llmtest.Answer {
	return llmtest.Answer{Reply: func(prompt string) string { return llmtest.Quote(prompt, n, extra...) }}
}

// Over every provider's wire format: a grounded answer is accepted with
// the contract's figures computed by cairn; partly grounded, fabricated
// and malformed answers are refused and nothing is saved; a model that
// is slow or keeps answering 429 gives way to the extractive answer,
// with the reason; a 429 waited out still gives the model's answer.
func TestGroundedInnerVoiceOverEveryProvider(t *testing.T) {
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderOllama, llm.ProviderGemini, llm.ProviderAnthropic} {
		t.Run(p, func(t *testing.T) {
			srv := llmtest.New(t, p, quoting(2))
			eng, facts := groundedEngine(t, fakeClient(t, srv, nil), nil)
			factIDs := []string{facts[0].ID, facts[1].ID, facts[2].ID}

			res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
			g := res.Grounding
			if res.Synthesizer != synth.GroundedName || res.Refused || res.SynthesizedAnswer == "" || g.Refused || g.CoverageRatio != 1 ||
				g.Confidence <= 0 || len(g.Sources) != 2 || g.Answer != res.SynthesizedAnswer {
				t.Fatalf("good: %+v", res)
			}
			for _, c := range g.Sources {
				if !slices.Contains(factIDs, c.SourceID) || c.SourceType != "kg_observation" || c.Span == "" || c.Relevance <= 0 {
					t.Fatalf("citation %+v", c)
				}
			}
			for _, s := range res.Sources {
				if s.SourceType == "thought" || s.ThoughtID != "" {
					t.Fatalf("a thought went into a KG-only context: %+v", s)
				}
			}
			pv := res.Provenance
			if pv.Calls != 1 || pv.Provider != p || pv.Model != srv.Model || pv.PromptTokens != 120 || pv.CompletionTokens != 40 ||
				len(pv.PromptHash) != 64 || pv.DegradedFrom != "" || pv.Prompt == nil || pv.Prompt.SourceCount != 3 || res.Diagnostics.Context != "kg" {
				t.Fatalf("provenance %+v", pv)
			}
			if (p == llm.ProviderOllama) != (pv.CostUSD == 0) {
				t.Fatalf("cost %v for %s", pv.CostUSD, p)
			}
			if res.SavedThoughtID == "" || res.Session == nil || !res.Session.Created || res.Session.TotalTokens != 160 {
				t.Fatalf("saved %q, session %+v", res.SavedThoughtID, res.Session)
			}
			// The model saw facts, never thoughts.
			raw := string(srv.Requests()[0].Raw)
			if !strings.Contains(raw, facts[0].ID) || strings.Contains(raw, "th_") {
				t.Fatalf("the prompt: %s", raw)
			}

			refusedCase := func(name string, script ...llmtest.Answer) cairn.AskResult {
				t.Helper()
				srv.Script(script...)
				r := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "none"})
				if !r.Refused || r.SynthesizedAnswer != "" || r.SavedThoughtID != "" || !r.Grounding.Refused ||
					r.Grounding.Answer != synth.RefusalText || len(r.Grounding.Sources) != 0 || r.Synthesizer != synth.GroundedName {
					t.Fatalf("%s: %+v", name, r)
				}
				return r
			}
			r := refusedCase("partly grounded", quoting(2, "The auth-service was rewritten in Rust in 2019.",
				"Alice moved the tokens to Memcached last winter.", "Bob disabled NTP on every host in March."))
			if !strings.Contains(r.Grounding.Notes, "Required coverage 0.60") || strings.Contains(r.Grounding.Notes, "Rust") {
				t.Fatalf("partly grounded notes: %q", r.Grounding.Notes)
			}
			r = refusedCase("fabricated", llmtest.Answer{Text: `{"answer":"The auth-service was rewritten in Rust. It runs on Memcached.",` +
				`"sources":[{"source_id":"kgo_FAKE1","span":"rewritten in Rust"},{"source_id":"kgo_FAKE2","span":"runs on Memcached"}]}`})
			if !strings.Contains(r.Grounding.Notes, "is not in the context") {
				t.Fatalf("fabricated notes: %q", r.Grounding.Notes)
			}
			r = refusedCase("malformed", llmtest.Answer{Text: "Sure! The auth-service depends on NTP."})
			if r.Provenance.Calls != 2 || !strings.Contains(r.Grounding.Notes, "malformed twice") {
				t.Fatalf("malformed: %+v", r.Provenance)
			}

			// A 429 waited out: the model's answer, after the wait it asked for.
			srv.Script(llmtest.Answer{Status: 429, RetryAfter: "3"}, quoting(2))
			r = ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "none"})
			if r.Refused || r.Synthesizer != synth.GroundedName || r.Provenance.DegradedFrom != "" || !slices.Contains(srv.Waits(), 3*time.Second) {
				t.Fatalf("429 then good: %+v waits %v", r.Provenance, srv.Waits())
			}

			// 429 past every retry, and 5xx: the extractive answer, from the
			// same facts, checked by the same verifier, with the reason.
			for name, a := range map[string]llmtest.Answer{"429": {Status: 429}, "500": {Status: 500}} {
				srv.Script(a)
				r = ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "none", Save: ptr(false)})
				if r.Synthesizer != synth.ExtractiveName || r.Refused || r.SynthesizedAnswer == "" || r.Grounding.CoverageRatio != 1 ||
					r.Provenance.DegradedFrom != synth.GroundedName || !strings.Contains(r.Provenance.DegradedReason, "(HTTP "+name) ||
					strings.Contains(r.Provenance.DegradedReason, srv.URL) || strings.Contains(r.Provenance.DegradedReason, llmtest.Key) {
					t.Fatalf("%s: %+v %+v", name, r.Provenance, r.Grounding)
				}
				for _, s := range r.Sources {
					if s.SourceType == "thought" {
						t.Fatalf("%s: the fallback drew on a thought", name)
					}
				}
			}

			// A model that never answers: its own engine with a short timeout.
			slow := llmtest.New(t, p, llmtest.Answer{Hang: true})
			seng, _ := groundedEngine(t, fakeClient(t, slow, func(s *llm.Settings) { s.Timeout, s.Retries = 150*time.Millisecond, -1 }), nil)
			r = ask(t, seng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
			if r.Synthesizer != synth.ExtractiveName || r.Refused || !strings.Contains(r.Provenance.DegradedReason, "did not answer within its timeout") ||
				r.Session == nil || !strings.Contains(strings.Join(r.Diagnostics.Notes, " "), "the extractive synthesiser answered") {
				t.Fatalf("slow: %+v %+v", r.Provenance, r.Diagnostics)
			}
			view, err := seng.VoiceSession(ctx, cairn.VoiceSessionRequest{SessionID: r.Session.SessionID})
			if err != nil || len(view.Exchanges) != 1 || view.Exchanges[0].Degraded == "" || view.Exchanges[0].Synthesizer != synth.ExtractiveName {
				t.Fatalf("the degraded exchange: %+v %v", view, err)
			}
		})
	}
}

// Without a language model, inner_voice's extractive answers go through
// the same verifier, and pass it: on the sample of a coding agent's
// memory (its observations as thoughts), every answer is a verbatim,
// fully supported extract resting on two sources at least.
func TestExtractiveInnerVoiceAnswersPassTheVerifier(t *testing.T) {
	// The built-in embedder, as cairn runs by default.
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{InnerVoice: voiceOn()})
	for _, line := range bytes.Split(bytes.TrimSpace(sample.AgentSessions), []byte("\n")) {
		var rec struct {
			Observation *memory.Observation `json:"observation"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Observation != nil {
			think(t, eng, cairn.ThinkRequest{Content: rec.Observation.Content, Origin: memory.OriginTool})
		}
	}
	questions := []string{
		"why does checkout fail with session expired after login?",
		"what did the clock skew test show?",
		"how was validateToken fixed?",
		"which file returns ErrSessionExpired?",
		"what failed in go test for the auth package?",
		"what did the user ask about checkout?",
		"what was changed in session.go?",
		"how are tokens validated?",
		"what is the root cause of the session expired error?",
		"what did the agent grep for?",
	}
	answered := 0
	for _, q := range questions {
		res := ask(t, eng, cairn.AskRequest{Content: q, TopK: ptr(5), SimThresh: ptr(0.3), Save: ptr(false), Mode: "none"})
		if len(res.Sources) == 0 {
			continue
		}
		g := res.Grounding
		if res.Synthesizer != synth.ExtractiveName {
			t.Fatalf("%q: synthesizer %s", q, res.Synthesizer)
		}
		cited := map[string]bool{}
		for _, s := range res.Sentences {
			for _, sp := range s.Spans {
				cited[sp.SourceID] = true
			}
		}
		if res.Refused {
			// Only an answer resting on one source may be refused, and only
			// for that.
			if !strings.Contains(g.Notes, "Required sources 2, actual 1") || strings.Contains(g.Notes, "coverage") {
				t.Fatalf("%q was refused: %s", q, g.Notes)
			}
			continue
		}
		answered++
		if g.Refused || g.CoverageRatio != 1 || len(g.Sources) < 2 || g.Answer != res.SynthesizedAnswer || len(cited) < 2 {
			t.Fatalf("%q: %+v", q, g)
		}
		for _, c := range g.Claims {
			if !c.Supported || c.Score < 0.99 {
				t.Fatalf("%q: claim %+v", q, c)
			}
		}
	}
	if answered < len(questions)*2/3 {
		t.Fatalf("only %d of %d questions were answered", answered, len(questions))
	}
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Sessions: continue keeps the active session, new_thread starts one, none
// records nothing, session_id resumes an older one, and a session idle
// past the timeout is no longer continued.
func TestInnerVoiceSessionModes(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	eng, _ := askEngine(t, &cairn.Options{Now: clk.now, Sessions: &synth.SessionConfig{MaxPromptTokens: 8000, Timeout: 24 * time.Hour}})
	q := func(req cairn.AskRequest) cairn.AskResult {
		t.Helper()
		req.Content, req.TopK, req.Save = askQuestion, ptr(3), ptr(false)
		if req.Mode == "" && req.SessionID == "" {
			req.Mode = "continue" // save=false alone keeps no exchange
		}
		clk.add(time.Minute)
		return ask(t, eng, req)
	}
	first := q(cairn.AskRequest{})
	if first.Session == nil || !first.Session.Created || first.Session.Seq != 1 || first.Session.Mode != "continue" || first.Session.Topic != askQuestion {
		t.Fatalf("first: %+v", first.Session)
	}
	second := q(cairn.AskRequest{})
	if second.Session.SessionID != first.Session.SessionID || second.Session.Created || second.Session.Seq != 2 || second.Session.TotalExchanges != 2 {
		t.Fatalf("second: %+v", second.Session)
	}
	thread := q(cairn.AskRequest{Mode: "new_thread", Topic: "  token   expiry  "})
	if thread.Session.SessionID == first.Session.SessionID || !thread.Session.Created || thread.Session.Topic != "token expiry" {
		t.Fatalf("new thread: %+v", thread.Session)
	}
	if next := q(cairn.AskRequest{}); next.Session.SessionID != thread.Session.SessionID || next.Session.Seq != 2 {
		t.Fatalf("continue after a new thread: %+v", next.Session)
	}
	if none := q(cairn.AskRequest{Mode: "none"}); none.Session != nil {
		t.Fatalf("mode none recorded %+v", none.Session)
	}
	resumed := q(cairn.AskRequest{SessionID: first.Session.SessionID})
	if resumed.Session.SessionID != first.Session.SessionID || resumed.Session.Seq != 3 {
		t.Fatalf("resumed: %+v", resumed.Session)
	}
	list, err := eng.VoiceSessions(ctx, cairn.VoiceSessionsRequest{})
	if err != nil || len(list.Sessions) != 2 || list.ActiveSessionID != first.Session.SessionID || !list.Sessions[0].Active ||
		list.Totals.Exchanges != 5 || list.Totals.Sessions != 2 || list.Totals.MeanCoverage != 1 {
		t.Fatalf("sessions: %+v %v", list, err)
	}
	// Past the timeout nothing is active: continue starts a new session,
	// while session_id still resumes an old one.
	clk.add(25 * time.Hour)
	if l, _ := eng.VoiceSessions(ctx, cairn.VoiceSessionsRequest{}); l.ActiveSessionID != "" || l.Sessions[0].Active {
		t.Fatalf("an idle session is active: %+v", l)
	}
	late := q(cairn.AskRequest{})
	if !late.Session.Created || late.Session.SessionID == first.Session.SessionID || late.Session.SessionID == thread.Session.SessionID {
		t.Fatalf("after the timeout: %+v", late.Session)
	}
	if old := q(cairn.AskRequest{SessionID: thread.Session.SessionID}); old.Session.Seq != 3 {
		t.Fatalf("an idle session resumed by id: %+v", old.Session)
	}
	// Bad input changes nothing.
	before, _ := eng.VoiceSessions(ctx, cairn.VoiceSessionsRequest{})
	for _, req := range []cairn.AskRequest{
		{Content: "q", Mode: "sometimes"},
		{Content: "q", Mode: "new_thread", SessionID: first.Session.SessionID},
		{Content: "q", Mode: "none", SessionID: first.Session.SessionID},
		{Content: "q", Topic: strings.Repeat("x", 201), Mode: "new_thread"},
		{Content: "q", Context: "everything"},
	} {
		if _, err := eng.Ask(ctx, req); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Fatalf("%+v: %v", req, err)
		}
	}
	if _, err := eng.Ask(ctx, cairn.AskRequest{Content: "q", SessionID: "ivs_nope"}); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("an unknown session: %v", err)
	}
	if after, _ := eng.VoiceSessions(ctx, cairn.VoiceSessionsRequest{}); after.Totals != before.Totals {
		t.Fatalf("bad input recorded something: %+v → %+v", before.Totals, after.Totals)
	}
	// Reading and deleting.
	view, err := eng.VoiceSession(ctx, cairn.VoiceSessionRequest{SessionID: first.Session.SessionID, Limit: ptr(2)})
	if err != nil || len(view.Exchanges) != 2 || view.NextAfter != 2 || view.Exchanges[0].Query != askQuestion || view.Exchanges[0].Answer == "" ||
		view.Exchanges[0].PromptHash != "" || view.ContextWindow != 3 {
		t.Fatalf("view: %+v %v", view, err)
	}
	if rest, _ := eng.VoiceSession(ctx, cairn.VoiceSessionRequest{SessionID: first.Session.SessionID, After: view.NextAfter}); len(rest.Exchanges) != 1 || rest.NextAfter != 0 {
		t.Fatalf("the next page: %+v", rest)
	}
	del, err := eng.DeleteVoiceSession(ctx, cairn.VoiceSessionRef{SessionID: first.Session.SessionID})
	if err != nil || del.Exchanges != 3 {
		t.Fatalf("delete: %+v %v", del, err)
	}
	if _, err := eng.DeleteVoiceSession(ctx, cairn.VoiceSessionRef{SessionID: first.Session.SessionID}); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("delete again: %v", err)
	}
	for _, args := range []string{`{"limit":0}`, `{"offset":-1}`, `{"limit":1001}`} {
		if _, err := eng.CallJSON(ctx, "inner_voice_sessions", []byte(args)); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Fatalf("%s: %v", args, err)
		}
	}
	if _, err := eng.CallJSON(ctx, "inner_voice_session", []byte(`{}`)); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("no session_id: %v", err)
	}
}

// Past ten exchanges the older ones are folded into a rolling summary,
// made by the same synthesiser and grounded in their answers; the next
// prompt carries the summary and the recent exchanges, as context that is
// never a source; the prompt itself is never stored.
func TestInnerVoiceRollingSummary(t *testing.T) {
	var prompts []string
	var mu sync.Mutex
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Reply: func(prompt string) string {
		mu.Lock()
		prompts = append(prompts, prompt)
		mu.Unlock()
		return llmtest.Quote(prompt, 2)
	}})
	eng, _ := groundedEngine(t, fakeClient(t, srv, nil), nil)
	var observed []cairn.InnerVoiceCall
	eng.OnInnerVoice(func(c cairn.InnerVoiceCall) { observed = append(observed, c) })
	var last cairn.AskResult
	questions := []string{"why does clock drift break session token expiry on the auth-service?", "what does the auth-service session token expiry depend on?",
		"how does the auth-service keep session tokens when clocks drift?", "how much clock drift does session token expiry tolerate?"}
	for i := range 11 {
		last = ask(t, eng, cairn.AskRequest{Content: questions[i%len(questions)] + fmt.Sprintf(" (%d)", i), TopK: ptr(3), SimThresh: ptr(0.2), Save: ptr(false), Mode: "continue"})
		if last.Refused || len(last.Sources) < 2 {
			t.Fatalf("exchange %d refused: %s", i+1, last.Grounding.Notes)
		}
		if i < 10 && last.Session.Summarized {
			t.Fatalf("a summary after %d exchanges", i+1)
		}
	}
	s := last.Session
	if !s.Summarized || s.SummarizedThrough != 11-synth.SummaryKeep || s.Seq != 11 {
		t.Fatalf("after 11 exchanges: %+v", s)
	}
	// The call that rolled the summary counts the summary's model call too.
	if c := observed[10]; c.PromptTokens != 240 || c.CompletionTokens != 80 || observed[9].PromptTokens != 120 {
		t.Fatalf("the figures of the call that summarised: %+v", c)
	}
	view, err := eng.VoiceSession(ctx, cairn.VoiceSessionRequest{SessionID: s.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	sum := view.Session.Summary
	if sum.Text == "" || sum.ExchangesSummarized != 6 || sum.CoverageRatio != 1 || view.ContextWindow != synth.SummaryKeep ||
		view.Session.TotalExchanges != 11 || view.Session.TotalTokens != 12*160 {
		t.Fatalf("session %+v", view.Session)
	}
	// The summary rests on the folded answers: each of its sentences is in
	// one of them (the fake model quotes its sources).
	var folded []string
	for _, x := range view.Exchanges[:6] {
		folded = append(folded, x.Answer)
	}
	for _, sent := range strings.SplitAfter(sum.Text, ". ") {
		if !strings.Contains(strings.Join(folded, " "), strings.TrimSuffix(strings.TrimSpace(sent), ".")) {
			t.Fatalf("summary sentence %q is in no folded answer", sent)
		}
	}
	// The summary call's prompt cited exchanges, as sources of its own.
	if summaryPrompt := prompts[11]; !strings.Contains(summaryPrompt, "(inner_voice_exchange)") || !strings.Contains(summaryPrompt, "Summarise") {
		t.Fatalf("the summary prompt: %s", summaryPrompt)
	}
	// The next prompt: the summary, then the last five exchanges as
	// context, then the knowledge.
	ask(t, eng, cairn.AskRequest{Content: "and the NTP dependency of the auth-service?", TopK: ptr(3), SimThresh: ptr(0.2), Save: ptr(false), Mode: "continue"})
	next := prompts[len(prompts)-1]
	if !strings.Contains(next, "Conversation so far (context only, not a source)") || !strings.Contains(next, "Summary: "+strings.Join(strings.Fields(sum.Text), " ")) ||
		!strings.Contains(next, "Q: "+view.Exchanges[10].Query) || strings.Contains(next, "Q: "+view.Exchanges[0].Query) ||
		strings.Index(next, "Summary:") > strings.Index(next, "Sources:") {
		t.Fatalf("the prompt after the summary:\n%s", next)
	}
	// No file of the database holds a prompt: only its hash.
	var files []byte
	filepath.Walk(filepath.Dir(eng.Path()), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(path)
			files = append(files, b...)
		}
		return nil
	})
	for _, never := range []string{"You answer a question using only the sources given", "Conversation so far", "Answer again with only"} {
		if bytes.Contains(files, []byte(never)) {
			t.Fatalf("the database's files hold %q", never)
		}
	}
	if !bytes.Contains(files, []byte(view.Exchanges[0].PromptHash)) || len(view.Exchanges[0].PromptHash) != 64 {
		t.Fatal("the prompt hash is not stored")
	}
}

// The prompt stays within SURR_INNER_VOICE_MAX_TOKENS as the model's
// client counts it: sources that do not fit are left out, and said so.
func TestInnerVoicePromptBudget(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderOpenAI, quoting(2))
	c := fakeClient(t, srv, nil)
	const budget = 900
	eng, _ := groundedEngine(t, c, &cairn.Options{Sessions: &synth.SessionConfig{MaxPromptTokens: budget, Timeout: time.Hour}})
	ent := entity(t, eng, "session-store", "service")
	for i := range 40 {
		observe(t, eng, ent.ID, fmt.Sprintf("Clock drift breaks session token expiry in region %d when the auth-service loses NTP for %d minutes.", i, i+2))
	}
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(40), SimThresh: ptr(0.3), Save: ptr(false), Mode: "continue"})
	pr := res.Provenance.Prompt
	if pr == nil || pr.Budget != budget || pr.DroppedSources == 0 || pr.SourceCount == 0 || len(res.Sources) != pr.SourceCount {
		t.Fatalf("prompt %+v, %d sources", pr, len(res.Sources))
	}
	for _, r := range srv.Requests() {
		var body struct {
			Messages []llm.Message `json:"messages"`
		}
		if err := json.Unmarshal(r.Raw, &body); err != nil {
			t.Fatal(err)
		}
		p := llm.Prompt{}
		for _, m := range body.Messages {
			if m.Role == "system" {
				p.System = m.Content
			} else {
				p.Messages = append(p.Messages, m)
			}
		}
		if n := c.CountTokens(p, llm.Config{Schema: synth.GroundedSchema, SchemaName: synth.GroundedSchemaName}); n > budget {
			t.Fatalf("a prompt of %d tokens was sent under a budget of %d", n, budget)
		}
	}
}

// The context policy: kg (the default with a model) gives the model only
// graph entities and facts; kg+thoughts adds thoughts; thoughts gives
// thoughts only. Without a model the default is thoughts.
func TestInnerVoiceContextPolicy(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderOpenAI, quoting(2))
	eng, _ := groundedEngine(t, fakeClient(t, srv, nil), nil)
	types := func(res cairn.AskResult) map[string]int {
		m := map[string]int{}
		for _, s := range res.Sources {
			m[s.SourceType]++
		}
		return m
	}
	kg := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(6), Mode: "none", Save: ptr(false)})
	if m := types(kg); m["thought"] != 0 || m["kg_observation"] == 0 || kg.Diagnostics.Context != "kg" {
		t.Fatalf("kg: %v", m)
	}
	both := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(6), Mode: "none", Save: ptr(false), Context: "kg+thoughts"})
	if m := types(both); m["thought"] == 0 || m["kg_observation"] == 0 {
		t.Fatalf("kg+thoughts: %v", m)
	}
	if raw := string(srv.Requests()[len(srv.Requests())-1].Raw); !strings.Contains(raw, "(thought)") {
		t.Fatal("the model was not shown the thoughts")
	}
	th := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(6), Mode: "none", Save: ptr(false), Context: "thoughts"})
	if m := types(th); m["thought"] == 0 || m["kg_observation"] != 0 {
		t.Fatalf("thoughts: %v", m)
	}
	plain, _ := askEngine(t, nil)
	if r := ask(t, plain, cairn.AskRequest{Content: askQuestion, Mode: "none", Save: ptr(false)}); r.Diagnostics.Context != "thoughts" {
		t.Fatalf("the default without a model: %s", r.Diagnostics.Context)
	}
}

// Only vectors of the active embedder are compared: facts written under
// another embedder are not in the context until they are embedded again.
func TestInnerVoiceKGDimensionHygiene(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	old, err := cairn.Open(path, &cairn.Options{Embedder: embed.Hash{Dim: 128}, InnerVoice: voiceOn()})
	if err != nil {
		t.Fatal(err)
	}
	ent := entity(t, old, "auth-service", "service")
	for _, f := range kgFacts {
		observe(t, old, ent.ID, f)
	}
	old.Close()
	srv := llmtest.New(t, llm.ProviderOpenAI, quoting(2))
	eng := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 256}, InnerVoice: voiceOn(), LLM: fakeClient(t, srv, nil)})
	fresh := observe(t, eng, ent.ID, "Clock drift breaks session token expiry unless chrony runs on the auth-service.")
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(5), Mode: "none", Save: ptr(false)})
	if len(res.Sources) != 1 || res.Sources[0].SourceID != fresh.ID {
		t.Fatalf("sources %+v", res.Sources)
	}
	for _, r := range srv.Requests() {
		for _, f := range kgFacts {
			if strings.Contains(string(r.Raw), f) {
				t.Fatalf("a fact without a vector of the active space went to the model")
			}
		}
	}
}

// MCP_NO_LOG silences the per-call metric log; without it the line holds
// figures, never the question or the answer.
func TestInnerVoiceMetricLogs(t *testing.T) {
	for _, noLog := range []bool{false, true} {
		var buf bytes.Buffer
		eng, _ := askEngine(t, &cairn.Options{NoLog: noLog, Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))})
		res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
		out := buf.String()
		if noLog {
			if strings.Contains(out, "inner_voice_call") {
				t.Fatalf("MCP_NO_LOG: %s", out)
			}
			continue
		}
		if !strings.Contains(out, "inner_voice_call") || !strings.Contains(out, "coverage=1") || !strings.Contains(out, "latency_ms=") ||
			!strings.Contains(out, "cost_usd=0") || !strings.Contains(out, "refused=false") {
			t.Fatalf("log: %s", out)
		}
		if strings.Contains(out, "clock drift") || strings.Contains(out, res.SynthesizedAnswer[:30]) {
			t.Fatalf("the log holds content: %s", out)
		}
	}
}

// SURR_INNER_VOICE_METRICS=0 stops the metric series (the listeners), the
// metric log line and the stored aggregates (exchanges are recorded
// without figures, so the sessions' totals do not move);
// SURR_INNER_VOICE_COST_TRACKING=0 computes and stores no cost, with a
// note. Both default on, and cairn config shows them.
func TestInnerVoiceMetricsAndCostSwitches(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		noMetrics, noCostTrack bool
	}{{"both on", false, false}, {"metrics off", true, false}, {"cost tracking off", false, true}, {"both off", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llm.ProviderOpenAI, quoting(2))
			var buf bytes.Buffer
			eng, _ := groundedEngine(t, fakeClient(t, srv, nil), &cairn.Options{
				Logger:   slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})),
				Sessions: &synth.SessionConfig{MaxPromptTokens: 8000, Timeout: time.Hour, NoMetrics: tc.noMetrics, NoCostTracking: tc.noCostTrack}})
			var calls []cairn.InnerVoiceCall
			eng.OnInnerVoice(func(c cairn.InnerVoiceCall) { calls = append(calls, c) })
			res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(false), Mode: "new_thread"})
			if res.Refused || res.Synthesizer != "grounded" || res.Session == nil || res.Provenance.PromptTokens == 0 {
				t.Fatalf("answer %+v", res)
			}
			sess, err := eng.VoiceSession(ctx, cairn.VoiceSessionRequest{SessionID: res.Session.SessionID})
			if err != nil || len(sess.Exchanges) != 1 {
				t.Fatalf("session %+v %v", sess, err)
			}
			x, s := sess.Exchanges[0], sess.Session
			list, err := eng.VoiceSessions(ctx, cairn.VoiceSessionsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			totals := list.Totals
			logged := strings.Contains(buf.String(), "inner_voice_call")
			if tc.noMetrics {
				if len(calls) != 0 || logged || s.TotalTokens != 0 || totals.PromptTokens != 0 || x.PromptTokens != 0 || x.LatencyMs != 0 {
					t.Fatalf("metrics off: %d observed, logged %v, session tokens %d, totals %+v, exchange %+v", len(calls), logged, s.TotalTokens, totals, x)
				}
			} else if len(calls) != 1 || !logged || s.TotalTokens == 0 || totals.PromptTokens == 0 || x.PromptTokens == 0 {
				t.Fatalf("metrics on: %d observed, logged %v, session tokens %d, totals %+v, exchange %+v", len(calls), logged, s.TotalTokens, totals, x)
			}
			noted := slices.ContainsFunc(res.Diagnostics.Notes, func(n string) bool { return strings.Contains(n, "SURR_INNER_VOICE_COST_TRACKING=0") })
			if tc.noCostTrack {
				if res.Provenance.CostUSD != 0 || x.CostEstimate != 0 || s.TotalCost != 0 || totals.Cost != 0 || !noted ||
					(len(calls) > 0 && calls[0].Cost != 0) || strings.Contains(buf.String(), "cost_usd=0.0") {
					t.Fatalf("cost tracking off: cost %v, exchange %v, session %v, totals %v, noted %v, log %s", res.Provenance.CostUSD,
						x.CostEstimate, s.TotalCost, totals.Cost, noted, buf.String())
				}
			} else if res.Provenance.CostUSD <= 0 || noted || (!tc.noMetrics && (x.CostEstimate <= 0 || s.TotalCost <= 0 || calls[0].Cost <= 0)) {
				t.Fatalf("cost tracking on: cost %v, exchange %v, session %v, noted %v", res.Provenance.CostUSD, x.CostEstimate, s.TotalCost, noted)
			}
			cfg, err := eng.Config(ctx, cairn.ConfigRequest{})
			if err != nil || cfg.Sessions.Metrics == tc.noMetrics || cfg.Sessions.CostTracking == tc.noCostTrack {
				t.Fatalf("config %+v %v", cfg.Sessions, err)
			}
		})
	}
	// From the environment: on by default, 0 turns each off, a value that
	// cannot be read leaves it on with a warning.
	for _, tc := range []struct {
		metrics, costs string
		want           cairn.SessionSettings
		warn           bool
	}{
		{"", "", cairn.SessionSettings{Metrics: true, CostTracking: true}, false},
		{"0", "1", cairn.SessionSettings{Metrics: false, CostTracking: true}, false},
		{"on", "off", cairn.SessionSettings{Metrics: true, CostTracking: false}, false},
		{"maybe", "0", cairn.SessionSettings{Metrics: true, CostTracking: false}, true},
	} {
		s, err := cairn.SettingsFromEnv(env("SURR_INNER_VOICE_METRICS", tc.metrics, "SURR_INNER_VOICE_COST_TRACKING", tc.costs))
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "SURR_INNER_VOICE_METRICS") })
		if s.Sessions.Metrics != tc.want.Metrics || s.Sessions.CostTracking != tc.want.CostTracking || warned != tc.warn {
			t.Fatalf("%q/%q: %+v, warnings %v", tc.metrics, tc.costs, s.Sessions, s.Warnings)
		}
		b, _ := json.Marshal(s.Public())
		if !strings.Contains(string(b), fmt.Sprintf(`"metrics":%v,"costTracking":%v`, tc.want.Metrics, tc.want.CostTracking)) {
			t.Fatalf("cairn config: %s", b)
		}
	}
}

// mode is read in any case, as context is.
func TestInnerVoiceModeInAnyCase(t *testing.T) {
	eng, _ := askEngine(t, nil)
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(false), Mode: " NEW_THREAD ", Topic: "drift"})
	if res.Session == nil || !res.Session.Created || res.Session.Mode != cairn.ModeNewThread || res.Session.Topic != "drift" {
		t.Fatalf("NEW_THREAD: %+v", res.Session)
	}
	next := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(false), Mode: "Continue"})
	if next.Session == nil || next.Session.SessionID != res.Session.SessionID || next.Session.Mode != cairn.ModeContinue {
		t.Fatalf("Continue: %+v", next.Session)
	}
	if none := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "NONE", Save: ptr(false)}); none.Session != nil {
		t.Fatalf("NONE recorded %+v", none.Session)
	}
	if _, err := eng.Ask(ctx, cairn.AskRequest{Content: askQuestion, Mode: "LATER"}); memory.CodeOf(err) != memory.CodeInvalidParams ||
		!strings.Contains(err.Error(), `"LATER"`) {
		t.Fatalf("LATER: %v", err)
	}
}

// Like inner_voice, the session readers answer feature_disabled while the
// inner voice is disabled; deleting a session still works (erasing what
// was recorded is never gated).
func TestInnerVoiceSessionToolsFollowTheGate(t *testing.T) {
	eng, _ := askEngine(t, nil)
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(false), Mode: "new_thread"})
	if res.Session == nil {
		t.Fatal("no session")
	}
	path := eng.Path()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	off := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 256}})
	if _, err := off.VoiceSessions(ctx, cairn.VoiceSessionsRequest{}); memory.CodeOf(err) != memory.CodeFeatureDisabled ||
		!strings.Contains(err.Error(), "SURR_ENABLE_INNER_VOICE=1") {
		t.Fatalf("inner_voice_sessions while disabled: %v", err)
	}
	if _, err := off.CallJSON(ctx, "inner_voice_session", []byte(`{"session_id":"`+res.Session.SessionID+`"}`)); memory.CodeOf(err) != memory.CodeFeatureDisabled {
		t.Fatalf("inner_voice_session while disabled: %v", err)
	}
	del, err := off.DeleteVoiceSession(ctx, cairn.VoiceSessionRef{SessionID: res.Session.SessionID})
	if err != nil || del.Deleted != res.Session.SessionID || del.Exchanges != 1 {
		t.Fatalf("delete while disabled: %+v %v", del, err)
	}
	if _, err := off.DeleteVoiceSession(ctx, cairn.VoiceSessionRef{SessionID: res.Session.SessionID}); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("delete again: %v", err)
	}
}

// Every call reaches the engine's listeners with its figures.
func TestInnerVoiceCallsAreObserved(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderOpenAI, quoting(2))
	eng, _ := groundedEngine(t, fakeClient(t, srv, nil), nil)
	var calls []cairn.InnerVoiceCall
	eng.OnInnerVoice(func(c cairn.InnerVoiceCall) { calls = append(calls, c) })
	ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "none"})
	srv.Script(llmtest.Answer{Status: 500})
	ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "none"})
	srv.Script(quoting(1, "It was rewritten in Rust in 2019."))
	ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "none"})
	ask(t, eng, cairn.AskRequest{Content: "zebra xylophone quokka", Mode: "none"})
	if len(calls) != 4 {
		t.Fatalf("%d calls", len(calls))
	}
	if c := calls[0]; c.Synthesizer != "grounded" || c.Outcome != cairn.OutcomeAnswered || c.PromptTokens != 120 || c.Cost <= 0 || c.Coverage != 1 || c.Latency <= 0 {
		t.Fatalf("answered: %+v", c)
	}
	if c := calls[1]; c.Synthesizer != "extractive" || !c.Degraded || c.Outcome != cairn.OutcomeAnswered {
		t.Fatalf("degraded: %+v", c)
	}
	if c := calls[2]; c.Outcome != cairn.OutcomeRefused || c.Coverage >= 1 {
		t.Fatalf("refused: %+v", c)
	}
	if c := calls[3]; c.Outcome != cairn.OutcomeNoSources {
		t.Fatalf("no sources: %+v", c)
	}
}

// An answer drawn from a private thought is a private exchange: the
// session's reader shows its question only unless include_private, and
// later prompts leave it out unless asked. Forgetting a thought an
// exchange cites redacts the exchange.
func TestInnerVoiceSessionPrivacyAndForgetting(t *testing.T) {
	eng, ts := askEngine(t, nil)
	secret := think(t, eng, cairn.ThinkRequest{Content: "Clock drift breaks session token expiry; the staging root password is hunter2.",
		Origin: memory.OriginHuman, IsPrivate: true})
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion + " password", TopK: ptr(6), IncludePrivate: true, Save: ptr(false), Mode: "continue"})
	if !slices.ContainsFunc(res.Grounding.Sources, func(c synth.SourceCitation) bool { return c.SourceID == secret.ID }) {
		t.Fatalf("the private thought was not cited: %+v", res.Grounding.Sources)
	}
	view, _ := eng.VoiceSession(ctx, cairn.VoiceSessionRequest{SessionID: res.Session.SessionID})
	x := view.Exchanges[0]
	if !x.Private || x.Answer != "" || len(x.Sources) != 0 || strings.Contains(fmt.Sprint(view), "hunter2") {
		t.Fatalf("the private exchange shows: %+v", x)
	}
	full, _ := eng.VoiceSession(ctx, cairn.VoiceSessionRequest{SessionID: res.Session.SessionID, IncludePrivate: true})
	if !strings.Contains(full.Exchanges[0].Answer, "hunter2") {
		t.Fatalf("include_private: %+v", full.Exchanges[0])
	}
	// Forgetting a cited thought redacts the exchange.
	cited := res.Grounding.Sources[0].SourceID
	if _, err := eng.ForgetThought(ctx, cited); err != nil {
		t.Fatal(err)
	}
	after, _ := eng.VoiceSession(ctx, cairn.VoiceSessionRequest{SessionID: res.Session.SessionID, IncludePrivate: true})
	if !after.Exchanges[0].Redacted || after.Exchanges[0].Answer != memory.RedactedContent || strings.Contains(fmt.Sprint(after), "hunter2") && cited == secret.ID {
		t.Fatalf("after forgetting %s: %+v", cited, after.Exchanges[0])
	}
	_ = ts
}

// BenchmarkInnerVoiceAsk is one inner_voice call (mode none, save false)
// on the askEngine corpus and three facts: answered by the extractive
// synthesiser and checked, and answered by a language model (a fake
// OpenAI server on loopback that quotes its sources) with the prompt built
// within its budget, counted with the model's tokenizer, and checked.
func BenchmarkInnerVoiceAsk(b *testing.B) {
	for _, name := range []string{"extractive", "grounded"} {
		b.Run(name, func(b *testing.B) {
			var opts *cairn.Options
			var c llm.Client
			if name == "grounded" {
				srv := llmtest.New(b, llm.ProviderOpenAI, quoting(2))
				s := srv.Settings()
				var err error
				if c, err = llm.New(s); err != nil {
					b.Fatal(err)
				}
			}
			eng, _ := groundedEngineB(b, c, opts)
			req := cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "none", Save: ptr(false), Context: "kg"}
			if _, err := eng.Ask(ctx, req); err != nil { // the tokenizer loads once
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := eng.Ask(ctx, req)
				if err != nil || res.Refused || res.Synthesizer != name {
					b.Fatalf("%+v %v", res.Provenance, err)
				}
			}
		})
	}
}

// groundedEngineB is groundedEngine for a benchmark.
func groundedEngineB(b *testing.B, c llm.Client, opts *cairn.Options) (*cairn.Engine, []memory.KGObservation) {
	b.Helper()
	if opts == nil {
		opts = &cairn.Options{}
	}
	opts.LLM, opts.Embedder, opts.InnerVoice = c, embed.Hash{Dim: 256}, voiceOn()
	eng := openAt(b, filepath.Join(b.TempDir(), "cairn.db"), opts)
	ent, err := eng.CreateEntity(ctx, cairn.EntityRequest{Name: "auth-service", Type: "service"})
	if err != nil {
		b.Fatal(err)
	}
	var facts []memory.KGObservation
	for _, f := range kgFacts {
		o, err := eng.Observe(ctx, cairn.ObserveRequest{EntityID: ent.ID, Content: f})
		if err != nil {
			b.Fatal(err)
		}
		facts = append(facts, o)
	}
	return eng, facts
}

// judgeReply is a grounding judge over the fake's wire format: it reads
// the claims and spans of the judge's prompt and gives each claim the
// verdict verdict returns (the claim's number, its text, the source id
// and span it cites).
func judgeReply(verdict func(n int, claim, id, span string) (string, string)) llmtest.Answer {
	return llmtest.Answer{Reply: func(prompt string) string {
		type v struct {
			Claim    int    `json:"claim"`
			Verdict  string `json:"verdict"`
			SourceID string `json:"source_id"`
			Evidence string `json:"evidence"`
		}
		out := []v{}
		for _, line := range strings.Split(prompt, "\n") {
			var n int
			var text string
			if _, err := fmt.Sscanf(line, "Claim %d:", &n); err == nil {
				_, text, _ = strings.Cut(line, ": ")
				out = append(out, v{Claim: n, SourceID: text})
				continue
			}
			if l := strings.TrimSpace(line); strings.HasPrefix(l, "[") && len(out) > 0 && out[len(out)-1].Verdict == "" {
				id, span, _ := strings.Cut(strings.TrimPrefix(l, "["), "] ")
				last := &out[len(out)-1]
				last.Verdict, last.Evidence = verdict(last.Claim, last.SourceID, id, span)
				last.SourceID = id
				if last.Verdict != synth.JudgeEntailed {
					last.SourceID, last.Evidence = "", ""
				}
			}
		}
		b, _ := json.Marshal(map[string]any{"verdicts": out})
		return string(b)
	}}
}

// quotingBare answers a grounded prompt with the first sentence of each
// of its first n sources, without the label the prompt puts before a
// fact ("auth-service: "), each cited with that sentence.
func quotingBare(n int) llmtest.Answer {
	return llmtest.Answer{Reply: func(prompt string) string {
		type cite struct {
			SourceID string `json:"source_id"`
			Span     string `json:"span"`
		}
		var answer []string
		cites := []cite{}
		for _, src := range llmtest.Sources(prompt)[:n] {
			sent := src.Text
			if label, rest, ok := strings.Cut(sent, ": "); ok && !strings.Contains(label, " ") {
				sent = rest
			}
			sent, _, _ = strings.Cut(sent, ". ")
			sent = strings.TrimSuffix(sent, ".")
			answer = append(answer, sent+".")
			cites = append(cites, cite{SourceID: src.ID, Span: sent})
		}
		b, _ := json.Marshal(map[string]any{"answer": strings.Join(answer, " "), "sources": cites})
		return string(b)
	}}
}

// With CAIRN_GROUNDING_JUDGE on, over every provider's wire format, the
// model judges the claims the offline check supports: a judge that agrees
// changes only the bill; one that lies about its evidence, or finds a
// claim not stated, has that claim's sentence taken out of the answer and
// the saved thought (listed in grounding.claims and notes); one that
// answers no JSON or never answers leaves the answer verified offline,
// and notes say so. provenance.judge says what it took.
func TestGroundedInnerVoiceJudge(t *testing.T) {
	agree := func(n int, claim, id, span string) (string, string) { return synth.JudgeEntailed, span }
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderOllama, llm.ProviderGemini, llm.ProviderAnthropic} {
		t.Run(p, func(t *testing.T) {
			srv := llmtest.New(t, p, quotingBare(3))
			eng, _ := groundedEngine(t, fakeClient(t, srv, func(s *llm.Settings) { s.Timeout, s.Retries = 2*time.Second, -1 }),
				&cairn.Options{GroundingJudge: true})
			for _, tc := range []struct {
				name  string
				judge llmtest.Answer
				// removed is the claim the judge vetoes (0: none); failed
				// is part of why the judge gave no usable answer.
				removed int
				reason  string
				failed  string
			}{
				{name: "agrees", judge: judgeReply(agree)},
				{name: "lies about its evidence", judge: judgeReply(func(n int, claim, id, span string) (string, string) {
					if n == 2 {
						return synth.JudgeEntailed, "the auth-service was rewritten in Rust"
					}
					return agree(n, claim, id, span)
				}), removed: 2, reason: "evidence is not in the cited source"},
				{name: "finds a claim not stated", judge: judgeReply(func(n int, claim, id, span string) (string, string) {
					if n == 1 {
						return synth.JudgeNotStated, ""
					}
					return agree(n, claim, id, span)
				}), removed: 1, reason: "does not state it"},
				{name: "answers no JSON", judge: llmtest.Answer{Text: "All three claims look fine to me."}, failed: "not the JSON object"},
				{name: "never answers", judge: llmtest.Answer{Hang: true}, failed: "timeout"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					srv.Script(quotingBare(3), tc.judge)
					res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "none"})
					g, j := res.Grounding, res.Provenance.Judge
					if res.Refused || res.Synthesizer != synth.GroundedName || j == nil || j.Calls != 1 || res.Provenance.Calls != 2 {
						t.Fatalf("answer %+v provenance %+v judge %+v", g, res.Provenance, j)
					}
					if tc.failed != "" {
						if !strings.Contains(j.Failed, tc.failed) || !strings.Contains(g.Notes, "verified offline alone") || g.CoverageRatio != 1 {
							t.Fatalf("a failed judge: %+v, notes %q", j, g.Notes)
						}
						return
					}
					if j.Failed != "" || j.Vetoed != min(tc.removed, 1) || res.Provenance.PromptTokens != 240 {
						t.Fatalf("judge %+v, prompt tokens %d", j, res.Provenance.PromptTokens)
					}
					var kept []string
					for i, c := range g.Claims {
						if c.Supported != (i+1 != tc.removed) {
							t.Fatalf("claim %d supported %v: %+v", i+1, c.Supported, g.Claims)
						}
						if c.Supported {
							kept = append(kept, c.Text)
						} else if !strings.Contains(c.Reason, tc.reason) || !strings.Contains(g.Notes, c.Text) ||
							strings.Contains(res.SynthesizedAnswer, c.Text) {
							t.Fatalf("the vetoed claim %+v: answer %q notes %q", c, res.SynthesizedAnswer, g.Notes)
						}
					}
					if len(g.Claims) != 3 || res.SynthesizedAnswer != strings.Join(kept, " ") || g.Answer != res.SynthesizedAnswer {
						t.Fatalf("answer %q; want the supported claims %q", res.SynthesizedAnswer, kept)
					}
					saved, err := eng.Thought(ctx, res.SavedThoughtID)
					if err != nil || saved.Content != res.SynthesizedAnswer {
						t.Fatalf("saved %q (%v); want the answer %q", saved.Content, err, res.SynthesizedAnswer)
					}
				})
			}
		})
	}
}

// The answer of a synthesiser without a model is verified like a
// model's: an accepted answer keeps only its supported sentences, and the
// one no source states is listed, with its reason, in grounding.claims
// and notes, and neither shown nor saved; too many unsupported sentences
// refuse the answer.
func TestInnerVoiceRemovesUnsupportedSentences(t *testing.T) {
	const made = "Priya disabled NTP on every auth host last winter."
	adding := func(extra ...string) synth.Synthesizer {
		return synth.Func(func(ctx context.Context, q string, sources []synth.Source) (synth.Answer, error) {
			ans, err := synth.Extractive{}.Synthesize(ctx, q, sources)
			for _, e := range extra {
				ans.Sentences = append(ans.Sentences, synth.Sentence{Text: e, Spans: []synth.Span{{SourceID: sources[0].ID, Start: 0, End: len([]rune(sources[0].Text))}}})
				ans.Text += " " + e
			}
			return ans, err
		})
	}
	for _, tc := range []struct {
		name    string
		extra   []string
		refused bool
	}{
		{"one made-up sentence", []string{made}, false},
		{"mostly made up", []string{made, "The auth-service stores tokens in DynamoDB.", "Omar rewrote the auth-service in Rust.",
			"Session tokens never expire on the auth hosts."}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng, _ := askEngine(t, &cairn.Options{Synthesizer: adding(tc.extra...)})
			res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Mode: "none"})
			g := res.Grounding
			if res.Refused != tc.refused || g.Refused != tc.refused {
				t.Fatalf("refused %v; want %v: %+v", res.Refused, tc.refused, g)
			}
			if strings.Contains(res.SynthesizedAnswer, made) || strings.Contains(g.Answer, made) {
				t.Fatalf("the made-up sentence is in the answer: %q", res.SynthesizedAnswer)
			}
			if tc.refused {
				if res.SavedThoughtID != "" || res.SynthesizedAnswer != "" || strings.Contains(g.Notes, made) {
					t.Fatalf("a refused answer: %+v", res)
				}
				return
			}
			i := slices.IndexFunc(g.Claims, func(c synth.ClaimCheck) bool { return c.Text == made })
			if i < 0 || g.Claims[i].Supported || g.Claims[i].Reason == "" || !strings.Contains(g.Notes, made) || g.CoverageRatio >= 1 {
				t.Fatalf("claims %+v notes %q", g.Claims, g.Notes)
			}
			for _, s := range res.Sentences {
				if s.Text == made {
					t.Fatalf("sentences %+v", res.Sentences)
				}
			}
			saved, err := eng.Thought(ctx, res.SavedThoughtID)
			if err != nil || saved.Content != res.SynthesizedAnswer || strings.Contains(saved.Content, "Priya") {
				t.Fatalf("saved %q (%v); want the answer %q", saved.Content, err, res.SynthesizedAnswer)
			}
		})
	}
}

// CAIRN_GROUNDING_JUDGE turns the judge on only with a model configured;
// a value that is neither on nor off, or on without a model, leaves it
// off with a warning. cairn config shows it.
func TestGroundingJudgeSetting(t *testing.T) {
	for _, tc := range []struct {
		judge, provider string
		want, warn      bool
	}{
		{"", "", false, false},
		{"", llm.ProviderOllama, false, false},
		{"1", llm.ProviderOllama, true, false},
		{"on", llm.ProviderOllama, true, false},
		{"0", llm.ProviderOllama, false, false},
		{"1", "", false, true},
		{"maybe", llm.ProviderOllama, false, true},
	} {
		s, err := cairn.SettingsFromEnv(env("CAIRN_GROUNDING_JUDGE", tc.judge, "CAIRN_LLM_PROVIDER", tc.provider, "CAIRN_LLM_MODEL", "llama3.2"))
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "CAIRN_GROUNDING_JUDGE") })
		b, _ := json.Marshal(s.Public())
		if s.Grounding.Judge != tc.want || warned != tc.warn || !strings.Contains(string(b), fmt.Sprintf(`"judge":%v`, tc.want)) {
			t.Errorf("%q with provider %q: judge %v, warnings %v; want %v, warned %v", tc.judge, tc.provider, s.Grounding.Judge, s.Warnings, tc.want, tc.warn)
		}
	}
}
