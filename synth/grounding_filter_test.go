package synth_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/synth"
)

// team are memories of a small team, for the filtering tests.
var team = []synth.Source{
	{ID: "t-1", Type: "thought", Text: "Omar approved the release on Friday."},
	{ID: "t-2", Type: "thought", Text: "Priya fixed the flaky login test."},
	{ID: "t-3", Type: "thought", Text: "The staging database runs PostgreSQL 15."},
	{ID: "t-4", Type: "thought", Text: "Priya reviewed the migration plan."},
}

func teamCites() []synth.Citation {
	return []synth.Citation{{SourceID: "t-1", Span: "Omar approved the release"}, {SourceID: "t-2", Span: "Priya fixed the flaky login test"},
		{SourceID: "t-3", Span: "The staging database runs PostgreSQL 15"}}
}

// An accepted answer keeps only its supported claims: the unsupported
// one is out of the answer, listed among the claims with its reason,
// named in the notes and returned by Removed.
func TestAcceptedAnswerCarriesOnlySupportedClaims(t *testing.T) {
	d := synth.Draft{Answer: "Omar approved the release on Friday [t-1]. Priya fixed the flaky login test. " +
		"Omar rotated the production keys. The staging database runs PostgreSQL 15.", Sources: teamCites()}
	v := synth.Verifier{}.Check(context.Background(), d, team)
	r := v.Response
	if r.Refused || r.CoverageRatio != 0.75 {
		t.Fatalf("got %+v", r)
	}
	want := "Omar approved the release on Friday [t-1]. Priya fixed the flaky login test. The staging database runs PostgreSQL 15."
	if r.Answer != want {
		t.Fatalf("answer %q, want %q", r.Answer, want)
	}
	removed := r.Removed()
	if len(removed) != 1 || removed[0].Text != "Omar rotated the production keys." || removed[0].Reason == "" || removed[0].Supported {
		t.Fatalf("removed %+v", removed)
	}
	if len(v.Removed) != 1 || v.Removed[0].Text != removed[0].Text {
		t.Fatalf("verdict removed %+v", v.Removed)
	}
	if len(r.Claims) != 4 || !strings.Contains(r.Notes, `Removed from the answer as unsupported: "Omar rotated the production keys."`) {
		t.Fatalf("claims %+v notes %q", r.Claims, r.Notes)
	}
	// A refusal lists nothing of the answer.
	d.Answer = "Omar rotated the production keys. Priya deleted the staging database."
	r = synth.Verifier{}.Verify(context.Background(), d, team)
	if !r.Refused || len(r.Removed()) != 0 || strings.Contains(r.Notes, "rotated") {
		t.Fatalf("refused: %+v", r)
	}
}

// A list loses the items that are not supported, and a label whose items
// are all gone goes too; the lines, bullets and the lead-in stay.
func TestFilteringKeepsTheAnswersShape(t *testing.T) {
	d := synth.Draft{Sources: teamCites(), Answer: "Here is what I found.\nOmar:\n- Approved the release on Friday.\n" +
		"Priya:\n- Rotated the production keys.\nInfrastructure:\n- The staging database runs PostgreSQL 15.\n- It runs on three nodes."}
	r := synth.Verifier{MinSources: 1, MinCoverage: 0.5}.Verify(context.Background(), d, team)
	want := "Here is what I found.\nOmar:\n- Approved the release on Friday.\nInfrastructure:\n- The staging database runs PostgreSQL 15."
	if r.Refused || r.Answer != want {
		t.Fatalf("got %q (%+v), want %q", r.Answer, r, want)
	}
	if len(r.Removed()) != 2 {
		t.Fatalf("removed %+v", r.Removed())
	}
}

// A synthesiser's answer, once verified, keeps only the accepted
// sentences; a refused one keeps none.
func TestAnswerVerified(t *testing.T) {
	ans := synth.Answer{Name: "extractive", Text: "Omar approved the release on Friday. Omar rotated the production keys.",
		Sentences: []synth.Sentence{
			{Text: "Omar approved the release on Friday.", Spans: []synth.Span{{SourceID: "t-1", Start: 0, End: 36}}},
			{Text: "Omar rotated the production keys.", Spans: []synth.Span{{SourceID: "t-1", Start: 0, End: 36}}},
		}}
	r := synth.GroundedResponse{Answer: "Omar approved the release on Friday.", Claims: []synth.ClaimCheck{
		{Text: "Omar approved the release on Friday.", Supported: true}, {Text: "Omar rotated the production keys.", Reason: "x"}}}
	got := ans.Verified(r)
	if got.Text != "Omar approved the release on Friday." || len(got.Sentences) != 1 || got.Refused || got.Name != "extractive" {
		t.Fatalf("verified %+v", got)
	}
	got = ans.Verified(synth.GroundedResponse{Refused: true, Notes: "Required sources 2, actual 1."})
	if !got.Refused || got.Text != "" || len(got.Sentences) != 0 || got.Notes == "" {
		t.Fatalf("refused %+v", got)
	}
}

// Through the grounded seam, the answer's text and sentences hold only
// the supported claims.
func TestGroundedSeamDropsUnsupportedSentences(t *testing.T) {
	reply := `{"answer": "Omar approved the release on Friday. Priya fixed the flaky login test. Omar rotated the production keys. The staging database runs PostgreSQL 15.",
		"sources": [{"source_id": "t-1", "span": "Omar approved the release"}, {"source_id": "t-2", "span": "Priya fixed the flaky login test"},
		{"source_id": "t-3", "span": "The staging database runs PostgreSQL 15"}]}`
	s := &script{replies: []synth.ModelReply{{Text: reply, FinishReason: "stop"}}}
	ans, err := synth.Grounded{LLM: synth.LLMSynthesizer{Model: s.model}}.Synthesize(context.Background(), "What happened?", team)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ans.Text, "rotated") || len(ans.Sentences) != 3 || !strings.Contains(ans.Notes, "rotated") {
		t.Fatalf("answer %+v", ans)
	}
	for _, sent := range ans.Sentences {
		if strings.Contains(sent.Text, "rotated") || len(sent.Spans) == 0 {
			t.Fatalf("sentence %+v", sent)
		}
	}
}

// A label that came from the prompt is no claim, wherever it stands: on
// a line of its own, or opening a line whose sentence starts with a
// capital ("payments-api: Orders are stored in postgres."). The sentence
// after it needs the label, so a claim put under another source's label
// is unsupported, and removing it takes its label along.
func TestLabelsAreNoClaims(t *testing.T) {
	srcs := []synth.Source{
		{ID: "a", Type: "thought", Text: "payments-api: orders are stored in postgres. The service runs on Kubernetes."},
		{ID: "b", Type: "thought", Text: "billing: retries are capped at five."},
		{ID: "c", Type: "thought", Text: "Caroline: I went to a support group yesterday."},
	}
	cites := []synth.Citation{{SourceID: "a", Span: "orders are stored in postgres"}, {SourceID: "a", Span: "The service runs on Kubernetes."},
		{SourceID: "b", Span: "retries are capped at five"}, {SourceID: "c", Span: "I went to a support group yesterday"}}
	for _, tc := range []struct {
		answer    string
		claims    []string // the claims, in order
		supported []bool
		kept      string // the answer once unsupported claims are out
	}{
		{"payments-api: Orders are stored in postgres. billing: Retries are capped at five.",
			[]string{"Orders are stored in postgres.", "Retries are capped at five."}, []bool{true, true},
			"payments-api: Orders are stored in postgres. billing: Retries are capped at five."},
		// The label is what the sentence is about: billing's retries are not payments-api's.
		{"payments-api: Orders are stored in postgres. payments-api: Retries are capped at five. billing: Retries are capped at five.",
			[]string{"Orders are stored in postgres.", "Retries are capped at five.", "Retries are capped at five."}, []bool{true, false, true},
			"payments-api: Orders are stored in postgres. billing: Retries are capped at five."},
		{"payments-api: The service runs on Nomad.\nbilling: Retries are capped at five.\nCaroline: She went to a support group yesterday.",
			[]string{"The service runs on Nomad.", "Retries are capped at five.", "She went to a support group yesterday."}, []bool{false, true, true},
			"billing: Retries are capped at five.\nCaroline: She went to a support group yesterday."},
		{"Melanie: She went to a support group yesterday.\npayments-api: Orders are stored in postgres.\nbilling: Retries are capped at five.",
			[]string{"She went to a support group yesterday.", "Orders are stored in postgres.", "Retries are capped at five."}, []bool{false, true, true},
			"payments-api: Orders are stored in postgres.\nbilling: Retries are capped at five."},
		// A label line over a plain line stands over it too.
		{"billing:\nOrders are stored in postgres.\n\npayments-api:\nOrders are stored in postgres.\nbilling: Retries are capped at five.",
			[]string{"Orders are stored in postgres.", "Orders are stored in postgres.", "Retries are capped at five."}, []bool{false, true, true},
			"payments-api:\nOrders are stored in postgres.\nbilling: Retries are capped at five."},
		// With brackets it is no label but a quote of a source (an
		// entity's "payments-api (service)" before an observation).
		{"payments-api (service) payments-api: Orders are stored in postgres.",
			[]string{"payments-api (service) payments-api:", "Orders are stored in postgres."}, []bool{true, true},
			"payments-api (service) payments-api: Orders are stored in postgres."},
		// A word that only frames the answer is no label to find.
		{"Summary: Orders are stored in postgres. Retries are capped at five.",
			[]string{"Orders are stored in postgres.", "Retries are capped at five."}, []bool{true, true},
			"Summary: Orders are stored in postgres. Retries are capped at five."},
	} {
		r := synth.Verifier{MinSources: 1}.Verify(context.Background(), synth.Draft{Answer: tc.answer, Sources: cites}, srcs)
		var got []string
		var sup []bool
		for _, c := range r.Claims {
			got = append(got, c.Text)
			sup = append(sup, c.Supported)
		}
		if strings.Join(got, "|") != strings.Join(tc.claims, "|") || fmt.Sprint(sup) != fmt.Sprint(tc.supported) {
			t.Errorf("%q: claims %q supported %v, want %q %v", tc.answer, got, sup, tc.claims, tc.supported)
			continue
		}
		if r.Refused || r.Answer != tc.kept {
			t.Errorf("%q: answer %q (refused %v, %s), want %q", tc.answer, r.Answer, r.Refused, r.Notes, tc.kept)
		}
	}
}
