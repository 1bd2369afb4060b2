package synth_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnhq/cairn/synth"
)

var ctx = context.Background()

func spanText(t *testing.T, sources []synth.Source, c synth.Span) string {
	t.Helper()
	for _, s := range sources {
		if s.ID == c.SourceID {
			rs := []rune(s.Text)
			if c.Start < 0 || c.End > len(rs) || c.Start >= c.End {
				t.Fatalf("citation %+v is outside %s (%d characters)", c, s.ID, len(rs))
			}
			return string(rs[c.Start:c.End])
		}
	}
	t.Fatalf("citation of an unknown source %s", c.SourceID)
	return ""
}

// checkGrounded holds every sentence to its citation: the sentence is the
// cited span (with a full stop added when the span has none), and the
// answer is the sentences joined.
func checkGrounded(t *testing.T, ans synth.Answer, sources []synth.Source) {
	t.Helper()
	var texts []string
	for _, s := range ans.Sentences {
		if len(s.Spans) == 0 {
			t.Fatalf("sentence %q has no citation", s.Text)
		}
		// The first citation is the sentence; any other is the same
		// sentence in another source.
		seen := map[string]bool{}
		for i, c := range s.Spans {
			span := spanText(t, sources, c)
			if i == 0 && s.Text != span && s.Text != span+"." {
				t.Fatalf("sentence %q is not its cited span %q", s.Text, span)
			}
			if i > 0 && !strings.EqualFold(strings.TrimSuffix(s.Text, "."), strings.TrimSuffix(span, ".")) {
				t.Fatalf("sentence %q also cites %q", s.Text, span)
			}
			if seen[c.SourceID] {
				t.Fatalf("sentence %q cites %s twice", s.Text, c.SourceID)
			}
			seen[c.SourceID] = true
		}
		texts = append(texts, s.Text)
	}
	if ans.Text != strings.Join(texts, " ") {
		t.Fatalf("answer %q is not its sentences joined", ans.Text)
	}
}

var sources = []synth.Source{
	{ID: "th_1", Type: "thought", Relevance: 0.82, Text: "The auth-service depends on NTP for clock sync. When clocks drift by more than five seconds, session tokens expire early. We saw it twice in March."},
	{ID: "th_2", Type: "thought", Relevance: 0.74, Text: "Session tokens expire early when the clock drifts.\n- Fix: tolerate 5s of clock skew in auth/session.go\n- Sources: incident review"},
	{ID: "th_3", Type: "thought", Relevance: 0.61, Text: "Unrelated: the billing-service calls payments-api synchronously."},
}

func TestExtractiveAnswersFromTheRelevantSentences(t *testing.T) {
	ans, err := synth.Extractive{}.Synthesize(ctx, "why do session tokens expire early?", sources)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Name != "extractive" || len(ans.Sentences) == 0 {
		t.Fatalf("answer %+v", ans)
	}
	checkGrounded(t, ans, sources)
	if !strings.Contains(strings.ToLower(ans.Text), "session tokens expire early") || !strings.Contains(ans.Text, "clock") {
		t.Fatalf("the answer misses the relevant sentence: %q", ans.Text)
	}
	// "Session tokens expire early when the clock drifts." says what the
	// first source says: it is kept once.
	if strings.Count(strings.ToLower(ans.Text), "tokens expire early") != 1 {
		t.Fatalf("a near-duplicate sentence was kept: %q", ans.Text)
	}
	if n := utf8.RuneCountInString(ans.Text); n > synth.DefaultMaxChars {
		t.Fatalf("the answer has %d characters, over %d", n, synth.DefaultMaxChars)
	}
	if strings.Contains(ans.Text, "Sources:") || strings.Contains(ans.Text, "- ") {
		t.Fatalf("markup leaked into the answer: %q", ans.Text)
	}
	if strings.Contains(ans.Text, "billing") || strings.Contains(ans.Text, "March") {
		t.Fatalf("a sentence that shares nothing with the question is in the answer: %q", ans.Text)
	}
	t.Logf("answer: %s", ans.Text)
}

// A sentence several sources hold word for word (a summary and the thought
// it quotes) cites each of them, so an answer drawn from a summary still
// rests on the sources it shares its sentences with, and passes the
// verifier's two-source rule.
func TestExtractiveCitesEverySourceOfASentence(t *testing.T) {
	src := []synth.Source{
		{ID: "th_summary", Type: "thought", Relevance: 0.95, Text: "The auth-service depends on NTP. Clock drift breaks session token expiry."},
		{ID: "th_ntp", Type: "thought", Relevance: 0.6, Text: "The auth-service depends on NTP."},
		{ID: "th_drift", Type: "thought", Relevance: 0.55, Text: "Budget review on Friday. Clock drift breaks session token expiry."},
	}
	q := "why does clock drift break session token expiry on the auth-service?"
	ans, err := synth.Extractive{MinSources: 2}.Synthesize(ctx, q, src)
	if err != nil {
		t.Fatal(err)
	}
	checkGrounded(t, ans, src)
	want := map[string][]string{
		"The auth-service depends on NTP.":         {"th_summary", "th_ntp"},
		"Clock drift breaks session token expiry.": {"th_summary", "th_drift"},
	}
	if len(ans.Sentences) != len(want) {
		t.Fatalf("answer %+v", ans.Sentences)
	}
	for _, s := range ans.Sentences {
		var ids []string
		for _, c := range s.Spans {
			ids = append(ids, c.SourceID)
		}
		if strings.Join(ids, ",") != strings.Join(want[s.Text], ",") {
			t.Fatalf("%q cites %v; want %v", s.Text, ids, want[s.Text])
		}
	}
	g := synth.Verifier{}.Verify(ctx, ans.Draft(src), src)
	if g.Refused || g.CoverageRatio != 1 {
		t.Fatalf("the verifier refused it: %+v", g)
	}
}

func TestExtractiveIsDeterministicAndBounded(t *testing.T) {
	long := strings.Repeat("Kafka partitions rebalance when a consumer joins the group and every consumer pauses. ", 20)
	src := append([]synth.Source{{ID: "th_long", Relevance: 0.9, Text: long}}, sources...)
	var first []byte
	for range 3 {
		ans, err := synth.Extractive{MaxChars: 200}.Synthesize(ctx, "kafka consumer rebalance pauses", src)
		if err != nil {
			t.Fatal(err)
		}
		checkGrounded(t, ans, src)
		if n := utf8.RuneCountInString(ans.Text); n > 200 {
			t.Fatalf("%d characters over MaxChars 200: %q", n, ans.Text)
		}
		b, _ := json.Marshal(ans)
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatal("the same input gave two answers")
		}
	}
	// One sentence longer than the bound is cut at a space.
	one := []synth.Source{{ID: "th_x", Relevance: 0.9, Text: strings.Repeat("word ", 300)}}
	ans, err := synth.Extractive{}.Synthesize(ctx, "word", one)
	if err != nil {
		t.Fatal(err)
	}
	checkGrounded(t, ans, one)
	if n := utf8.RuneCountInString(ans.Text); n > synth.DefaultMaxChars || n < synth.DefaultMaxChars-10 {
		t.Fatalf("a long sentence cut to %d characters", n)
	}
}

func TestExtractiveWithoutSources(t *testing.T) {
	for _, src := range [][]synth.Source{nil, {{ID: "th_e", Text: "  \n- \n## "}}} {
		ans, err := synth.Extractive{}.Synthesize(ctx, "anything", src)
		if err != nil {
			t.Fatal(err)
		}
		if ans.Text != "" || len(ans.Sentences) != 0 {
			t.Fatalf("an answer from nothing: %+v", ans)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (synth.Extractive{}).Synthesize(cancelled, "q", sources); err == nil {
		t.Fatal("a cancelled synthesis succeeded")
	}
}

// Characters, not bytes: spans stay right past multi-byte text.
func TestExtractiveSpansAreCharacters(t *testing.T) {
	src := []synth.Source{{ID: "th_u", Relevance: 0.8, Text: "Café crème — très bien. Zoë prefers naïve résumés over CVs! Ünïcödé everywhere."}}
	ans, err := synth.Extractive{}.Synthesize(ctx, "Zoë résumés", src)
	if err != nil {
		t.Fatal(err)
	}
	checkGrounded(t, ans, src)
	if !strings.Contains(ans.Text, "Zoë prefers naïve résumés over CVs!") {
		t.Fatalf("answer %q", ans.Text)
	}
}

func TestSentences(t *testing.T) {
	text := "## Title\nFirst one. Second one!\n- bullet item\n  \n1. numbered? yes\nv1.2 stays whole."
	var got []string
	rs := []rune(text)
	for _, sp := range synth.Sentences(text) {
		got = append(got, string(rs[sp[0]:sp[1]]))
	}
	want := []string{"Title", "First one.", "Second one!", "bullet item", "numbered?", "yes", "v1.2 stays whole."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Sentences = %q; want %q", got, want)
	}
}

func TestFuncAdaptsAFunction(t *testing.T) {
	var s synth.Synthesizer = synth.Func(func(_ context.Context, q string, src []synth.Source) (synth.Answer, error) {
		return synth.Answer{Text: q + "!", Name: "echo"}, nil
	})
	ans, err := s.Synthesize(ctx, "hi", nil)
	if err != nil || ans.Text != "hi!" || ans.Name != "echo" {
		t.Fatalf("%+v %v", ans, err)
	}
}

func FuzzExtractive(f *testing.F) {
	f.Add("q", "One. Two!\n- three")
	f.Add("é", "é.é. é")
	f.Fuzz(func(t *testing.T, q, text string) {
		src := []synth.Source{{ID: "a", Text: text, Relevance: 0.5}}
		ans, err := synth.Extractive{MaxChars: 80}.Synthesize(ctx, q, src)
		if err != nil {
			t.Fatal(err)
		}
		rs := []rune(text)
		for _, s := range ans.Sentences {
			c := s.Spans[0]
			if c.Start < 0 || c.End > len(rs) || c.Start >= c.End {
				t.Fatalf("citation %+v outside %q", c, text)
			}
		}
		if utf8.RuneCountInString(ans.Text) > 80 {
			t.Fatalf("answer over 80 characters: %q", ans.Text)
		}
	})
}

// BenchmarkExtractive answers from five sources of a few sentences each,
// the default top_k.
func BenchmarkExtractive(b *testing.B) {
	var src []synth.Source
	for i := range 5 {
		src = append(src, synth.Source{ID: string(rune('a' + i)), Relevance: 0.8 - float64(i)/20,
			Text: strings.Repeat("Clock drift breaks session token expiry on the auth hosts. The auth-service depends on NTP. Alice owns it; retries are capped at five. ", 3)})
	}
	for b.Loop() {
		if _, err := (synth.Extractive{}).Synthesize(ctx, "why does clock drift break session token expiry?", src); err != nil {
			b.Fatal(err)
		}
	}
}
