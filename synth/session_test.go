package synth_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/synth"
)

// Without MinSources an answer may rest on one source; with it, the best
// relevant sentence of a second source joins, and the answer still fits
// and still quotes its sources.
func TestExtractiveMinSources(t *testing.T) {
	src := []synth.Source{
		{ID: "a", Relevance: 0.9, Text: "Session tokens expire early when the clock drifts. Clock drift past five seconds breaks session tokens. " +
			"The session token clock check runs on every request."},
		{ID: "b", Relevance: 0.5, Text: "NTP keeps the clock in sync."},
	}
	q := "why do session tokens expire with clock drift?"
	one, err := synth.Extractive{MaxChars: 160}.Synthesize(ctx, q, src)
	if err != nil {
		t.Fatal(err)
	}
	if cited(one) != 1 {
		t.Fatalf("without MinSources the answer cites %d sources: %q", cited(one), one.Text)
	}
	two, err := synth.Extractive{MaxChars: 160, MinSources: 2}.Synthesize(ctx, q, src)
	if err != nil {
		t.Fatal(err)
	}
	checkGrounded(t, two, src)
	if cited(two) != 2 || len([]rune(two.Text)) > 160 || !strings.Contains(two.Text, "NTP keeps the clock in sync.") {
		t.Fatalf("with MinSources 2: %q cites %d", two.Text, cited(two))
	}
	// A source with nothing relevant is not dragged in.
	unrelated := []synth.Source{src[0], {ID: "c", Relevance: 0.5, Text: "The billing-service calls payments-api."}}
	ans, _ := synth.Extractive{MinSources: 2}.Synthesize(ctx, q, unrelated)
	if cited(ans) != 1 {
		t.Fatalf("an unrelated source was added: %q", ans.Text)
	}
}

func cited(a synth.Answer) int {
	ids := map[string]bool{}
	for _, s := range a.Sentences {
		for _, sp := range s.Spans {
			ids[sp.SourceID] = true
		}
	}
	return len(ids)
}

// An extractive answer goes through the grounding verifier as a draft
// quoting its spans, and passes it with full coverage; a sentence that
// does not rest on its citation does not.
func TestExtractiveAnswersPassTheVerifier(t *testing.T) {
	ans, err := synth.Extractive{MinSources: 2}.Synthesize(ctx, "why do session tokens expire early with clock drift?", sources)
	if err != nil {
		t.Fatal(err)
	}
	d := ans.Draft(sources)
	if d.Answer != ans.Text || len(d.Sources) != len(ans.Sentences) {
		t.Fatalf("draft %+v", d)
	}
	res := synth.Verifier{}.Verify(ctx, d, sources)
	if res.Refused || res.CoverageRatio != 1 || len(res.Sources) < 2 {
		t.Fatalf("the extractive answer %q was not accepted: %+v", ans.Text, res)
	}
	// Tampered: a sentence the span does not say.
	bad := ans
	bad.Text = ans.Text + " The database was rebuilt from backups on Friday."
	bad.Sentences = append(slices.Clone(ans.Sentences), synth.Sentence{Text: "The database was rebuilt from backups on Friday.",
		Spans: []synth.Span{{SourceID: "th_3", Start: 0, End: 10}}})
	if res := (synth.Verifier{MinCoverage: 1}).Verify(ctx, bad.Draft(sources), sources); !res.Refused {
		t.Fatalf("a sentence without support passed: %+v", res)
	}
	// Spans outside their source are left out of the draft.
	out := synth.Answer{Text: "x", Sentences: []synth.Sentence{{Text: "x", Spans: []synth.Span{{SourceID: "th_1", Start: 5, End: 9999}, {SourceID: "nope", Start: 0, End: 1}}}}}
	if d := out.Draft(sources); len(d.Sources) != 0 {
		t.Fatalf("draft of bad spans: %+v", d)
	}
}

func words(n int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }

// The context keeps the summary and the recent exchanges within a third
// of the budget, newest first, then the most relevant sources while the
// whole prompt fits; the prompt as counted never passes the budget.
func TestBuildContextBudget(t *testing.T) {
	var turns []synth.Turn
	for i := range 12 {
		turns = append(turns, synth.Turn{Query: fmt.Sprintf("question %d", i), Answer: words(60, fmt.Sprintf("answer%d", i))})
	}
	var srcs []synth.Source
	for i := range 30 {
		srcs = append(srcs, synth.Source{ID: fmt.Sprintf("e%02d", i), Type: "kg_entity", Text: words(40, fmt.Sprintf("fact%d", i)), Relevance: 1 - float64(i)/100})
	}
	conv := synth.Conversation{Topic: "deploys", Summary: words(100, "summary"), Turns: turns}
	for _, budget := range []int{1500, 3000, 8000} {
		c, err := synth.BuildContext("why did the deploy fail?", conv, srcs, synth.ContextOptions{MaxTokens: budget})
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if c.PromptTokens+c.Reserved > budget || c.PromptTokens <= 0 || c.Reserved <= 0 {
			t.Fatalf("budget %d: prompt %d + reserve %d", budget, c.PromptTokens, c.Reserved)
		}
		// What the counter says of the prompt as rendered.
		system, user := synth.SessionPrompt(c.Conversation)("why did the deploy fail?", c.Sources)
		if strings.Contains(system, "not a source") != (c.Summary || c.Exchanges > 0 || c.Conversation.Topic != "") {
			t.Fatalf("budget %d: the system prompt does not say the conversation is not a source", budget)
		}
		// The summary and the turns take at most a third of the budget.
		conversation := 0
		if c.Summary {
			conversation += len(conv.Summary) / 4
		}
		for _, tr := range c.Conversation.Turns {
			conversation += len(tr.Answer) / 4
		}
		if conversation > budget/3 {
			t.Fatalf("budget %d: the conversation takes %d tokens", budget, conversation)
		}
		// The turns kept are the most recent, in order.
		if k := len(c.Conversation.Turns); k > 0 && c.Conversation.Turns[k-1] != turns[len(turns)-1] {
			t.Fatalf("budget %d: the newest turn is not kept", budget)
		}
		if c.Exchanges+c.DroppedExchanges != len(turns) || c.SourceCount+c.DroppedSources != len(srcs) {
			t.Fatalf("budget %d: %+v", budget, c)
		}
		// The sources kept are the most relevant.
		for i, s := range c.Sources {
			if s.ID != srcs[i].ID {
				t.Fatalf("budget %d: source %d is %s", budget, i, s.ID)
			}
		}
		if !strings.Contains(user, "Question: why did the deploy fail?") {
			t.Fatalf("the question is missing: %q", user)
		}
		t.Logf("budget %d: summary %v, %d exchanges, %d sources, %d tokens", budget, c.Summary, c.Exchanges, c.SourceCount, c.PromptTokens)
	}
	small, _ := synth.BuildContext("q", conv, srcs, synth.ContextOptions{MaxTokens: 1500})
	big, _ := synth.BuildContext("q", conv, srcs, synth.ContextOptions{MaxTokens: 8000})
	if small.SourceCount >= big.SourceCount || !big.Summary || big.Exchanges == 0 {
		t.Fatalf("a larger budget holds no more: %+v vs %+v", small, big)
	}
	// A question that cannot fit is refused.
	if _, err := synth.BuildContext(words(3000, "why"), conv, srcs, synth.ContextOptions{MaxTokens: 1000}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("an oversized question: %v", err)
	}
	// The final count has the last word: a counter that sees more than
	// the estimate makes the builder drop sources until it fits.
	strict := func(system, user string) int { return (len(system) + len(user)) / 2 }
	c, err := synth.BuildContext("q", conv, srcs, synth.ContextOptions{MaxTokens: 3000, CountPrompt: strict})
	if err != nil {
		t.Fatal(err)
	}
	system, user := synth.SessionPrompt(c.Conversation)("q", c.Sources)
	if strict(system, user)+c.Reserved > 3000 || c.PromptTokens != strict(system, user) {
		t.Fatalf("the strict count %d (+%d) passes the budget", strict(system, user), c.Reserved)
	}
}

// A retry that would pass the prompt budget with the malformed answer
// shown asks in one message; one that cannot fit at all is refused
// without a second call.
func TestLLMSynthesizerRetryWithinBudget(t *testing.T) {
	s := &script{replies: []synth.ModelReply{reply(prose), reply(goodAnswer)}}
	fits := func(r synth.ModelRequest) bool { return len(r.Messages) == 1 }
	res, err := synth.LLMSynthesizer{Model: s.model, Fits: fits}.Synthesize(ctx, "How do herons live?", birds)
	if err != nil || res.Refused || len(s.requests) != 2 || len(s.requests[1].Messages) != 1 ||
		!strings.Contains(s.requests[1].Messages[0].Content, "Answer again") {
		t.Fatalf("%+v %v %+v", res, err, s.requests)
	}
	s = &script{replies: []synth.ModelReply{reply(prose), reply(goodAnswer)}}
	never := func(r synth.ModelRequest) bool {
		return len(r.Messages) == 1 && !strings.Contains(r.Messages[0].Content, "Answer again")
	}
	res, err = synth.LLMSynthesizer{Model: s.model, Fits: never}.Synthesize(ctx, "How do herons live?", birds)
	if err != nil || !res.Refused || len(s.requests) != 1 || !strings.Contains(res.Notes, "prompt budget") {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestSessionConfigFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	c, warns, err := synth.SessionConfigFromEnv(env())
	if err != nil || c.MaxPromptTokens != 8000 || c.Timeout != 24*time.Hour || c.Context != "" || len(warns) != 0 {
		t.Fatalf("defaults: %+v %v %v", c, warns, err)
	}
	c, warns, err = synth.SessionConfigFromEnv(env("SURR_INNER_VOICE_MAX_TOKENS", "100", "SURR_INNER_VOICE_TIMEOUT", "2", "CAIRN_INNER_VOICE_CONTEXT", "both"))
	if err != nil || c.MaxPromptTokens != synth.MinMaxPromptTokens || c.Timeout != 2*time.Hour || c.Context != synth.ContextBoth || len(warns) != 1 {
		t.Fatalf("set: %+v %v %v", c, warns, err)
	}
	c, warns, _ = synth.SessionConfigFromEnv(env("SURR_INNER_VOICE_MAX_TOKENS", "lots", "SURR_INNER_VOICE_TIMEOUT", "90m"))
	if c.MaxPromptTokens != 8000 || c.Timeout != 90*time.Minute || len(warns) != 1 {
		t.Fatalf("unreadable: %+v %v", c, warns)
	}
	c, warns, _ = synth.SessionConfigFromEnv(env("SURR_INNER_VOICE_TIMEOUT", "1s"))
	if c.Timeout != time.Minute || len(warns) != 1 {
		t.Fatalf("too short: %+v %v", c, warns)
	}
	if _, _, err := synth.SessionConfigFromEnv(env("CAIRN_INNER_VOICE_CONTEXT", "everything")); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("unknown policy: %v", err)
	}
}

// A rolling summary folds all but the most recent exchanges of a window
// past ten, from the answers that were given, and is itself grounded in
// them.
func TestRollingSummaryInput(t *testing.T) {
	var window []memory.InnerVoiceExchange
	for i := range 10 {
		window = append(window, memory.InnerVoiceExchange{ID: fmt.Sprintf("x%d", i), Seq: i + 1, Query: fmt.Sprintf("what about service %d?", i),
			Answer: fmt.Sprintf("Service %d depends on the auth-service and runs in the eu-west region.", i)})
	}
	if f := synth.SummaryFold(window); f != nil {
		t.Fatalf("ten exchanges were folded: %d", len(f))
	}
	window = append(window, memory.InnerVoiceExchange{ID: "x10", Seq: 11, Query: "and then?", Refused: true})
	fold := synth.SummaryFold(window)
	if len(fold) != 11-synth.SummaryKeep || fold[0].ID != "x0" {
		t.Fatalf("fold %d", len(fold))
	}
	q, src := synth.SummaryInput("services", "Earlier: service A depends on the auth-service.", fold)
	if len(src) != 1+len(fold) || src[0].Type != synth.SourceSummary || src[1].Type != synth.SourceExchange || !strings.Contains(q, "services") || !strings.Contains(q, "service 0") {
		t.Fatalf("question %q, sources %+v", q, src)
	}
	ans, err := synth.Extractive{MinSources: 2}.Synthesize(ctx, q, src)
	if err != nil {
		t.Fatal(err)
	}
	if res := (synth.Verifier{}).Verify(ctx, ans.Draft(src), src); res.Refused {
		t.Fatalf("the extractive summary %q was refused: %s", ans.Text, res.Notes)
	}
	// Refused and redacted exchanges are no source.
	_, src = synth.SummaryInput("", "", []memory.InnerVoiceExchange{{ID: "a", Refused: true}, {ID: "b", Redacted: true, Answer: memory.RedactedContent}})
	if len(src) != 0 {
		t.Fatalf("sources %+v", src)
	}
}

// An answer's declared sentences are its claims when they are the answer:
// quotes of sources whose sentences begin in lower case ("grep -rn ...")
// pass as quoted. Declared claims that are not the answer are ignored.
func TestVerifierUsesDeclaredClaims(t *testing.T) {
	src := []synth.Source{
		{ID: "a", Type: "thought", Relevance: 0.8, Text: "user: Checkout fails for some customers with 'session expired' right after they log in. Can you look into it?"},
		{ID: "b", Type: "thought", Relevance: 0.7, Text: `grep -rn "session expired" internal/ -> internal/auth/session.go:88 returns ErrSessionExpired when token.IssuedAt is after now`},
		{ID: "c", Type: "thought", Relevance: 0.6, Text: "internal/auth/session.go: accept tokens whose IssuedAt is at most 5s ahead of now (clockSkewLeeway = 5 * time.Second)"},
		{ID: "d", Type: "thought", Relevance: 0.6, Text: "internal/auth/session.go: read the clock once per request instead of calling time.Now() twice in validateToken"},
		{ID: "e", Type: "thought", Relevance: 0.6, Text: "go test ./internal/auth/... -> FAIL TestValidateToken_ClockSkew: token issued 2s in the future is rejected"},
	}
	ans, err := synth.Extractive{MinSources: 2}.Synthesize(ctx, "why does checkout fail with session expired after login?", src)
	if err != nil {
		t.Fatal(err)
	}
	d := ans.Draft(src)
	if res := (synth.Verifier{}).Verify(ctx, d, src); res.Refused || res.CoverageRatio != 1 {
		t.Fatalf("declared claims: %+v", res)
	}
	// Without declared claims (or with ones that are not the answer), the
	// verifier splits the answer itself, sentences that open in lower
	// case included, and finds the same quotes.
	for name, claims := range map[string][]string{"none": nil, "not the answer": {"Checkout fails."}} {
		d.Claims = claims
		res := (synth.Verifier{}).Verify(ctx, d, src)
		if res.Refused || res.CoverageRatio != 1 || len(res.Claims) != len(ans.Sentences) {
			t.Fatalf("%s: the verifier's own split gave %+v for %q", name, res, ans.Text)
		}
	}
}
