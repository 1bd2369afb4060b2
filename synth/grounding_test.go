package synth_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/synth"
)

var birds = []synth.Source{
	{ID: "t-1", Type: "thought", Text: "The grey heron nests in colonies called heronries, usually high in trees.", Relevance: 0.9},
	{ID: "t-2", Type: "kg_observation", Text: "Herons hunt fish by standing still in shallow water. They strike with their bill.", Relevance: 0.8},
	{ID: "t-3", Type: "thought", Text: "A heron was seen at the Elm Street pond on 3 May 2024 at 06:10.", Relevance: 0.6},
}

func verify(d synth.Draft, opts ...func(*synth.Verifier)) synth.GroundedResponse {
	var v synth.Verifier
	for _, o := range opts {
		o(&v)
	}
	return v.Verify(context.Background(), d, birds)
}

// A grounded answer is accepted with the figures cairn computes: every
// claim supported, the citations that support them with their relevance,
// confidence = coverage × mean support.
func TestVerifyAcceptsGroundedAnswer(t *testing.T) {
	res := verify(synth.Draft{
		Answer: "The grey heron nests in colonies called heronries. Herons hunt fish by standing still in shallow water.",
		Sources: []synth.Citation{
			{SourceID: "t-1", Span: "nests in colonies called heronries"},
			{SourceID: "t-2", Span: "Herons hunt fish by standing   STILL in shallow water"},
		},
	})
	if res.Refused || res.CoverageRatio != 1 || len(res.Sources) != 2 || len(res.Claims) != 2 {
		t.Fatalf("got %+v", res)
	}
	if res.Sources[0] != (synth.SourceCitation{SourceID: "t-1", SourceType: "thought", Span: "nests in colonies called heronries", Relevance: 1}) ||
		res.Sources[1].SourceType != "kg_observation" {
		t.Fatalf("sources %+v", res.Sources)
	}
	want := (res.Claims[0].Score + res.Claims[1].Score) / 2
	if math.Abs(res.Confidence-want) > 1e-4 || res.Confidence <= 0 || res.Confidence > 1 {
		t.Fatalf("confidence %v, want coverage × mean support %v", res.Confidence, want)
	}
	if res.Answer != "The grey heron nests in colonies called heronries. Herons hunt fish by standing still in shallow water." {
		t.Fatalf("answer %q", res.Answer)
	}
}

// Citations of sources not in the context, and spans that do not occur
// in their source, are dropped and say so; without them the answer lacks
// support and is refused, and the ungrounded answer is not passed on.
func TestVerifyDropsBadCitationsAndRefuses(t *testing.T) {
	res := verify(synth.Draft{
		Answer: "The grey heron nests in colonies called heronries. Herons migrate to Africa every winter.",
		Sources: []synth.Citation{
			{SourceID: "t-1", Span: "nests in colonies called heronries"},
			{SourceID: "t-99", Span: "Herons migrate to Africa every winter"},
			{SourceID: "t-2", Span: "herons migrate to Africa"},
			{SourceID: "t-3", Span: "the"},
		},
	})
	if !res.Refused || res.Answer != synth.RefusalText || len(res.Sources) != 0 || res.Claims != nil || res.Confidence != 0 {
		t.Fatalf("got %+v", res)
	}
	if res.CoverageRatio != 0.5 {
		t.Fatalf("coverage %v", res.CoverageRatio)
	}
	for _, want := range []string{"required coverage 0.60, actual 0.50 (1 of 2 claims supported)", "required sources 2, actual 1",
		`"t-99" is not in the context`, `the span cited from "t-2" does not occur in it`, `the span cited from "t-3" says nothing`} {
		if !strings.Contains(strings.ToLower(res.Notes), strings.ToLower(want)) {
			t.Errorf("notes %q lack %q", res.Notes, want)
		}
	}
	if strings.Contains(res.Notes, "Africa") || strings.Contains(res.Notes, "migrate") {
		t.Fatalf("the notes pass on the ungrounded claim: %q", res.Notes)
	}
}

// A claim that quotes a source but adds to it, or changes its numbers,
// names or polarity, is not supported by it.
func TestVerifyCatchesAlteredClaims(t *testing.T) {
	cites := []synth.Citation{{SourceID: "t-1", Span: "nests in colonies"}, {SourceID: "t-2", Span: "hunt fish"}, {SourceID: "t-3", Span: "Elm Street pond"}}
	for _, claim := range []string{
		"A heron was seen at the Elm Street pond on 3 May 2023.",                      // number
		"A heron was seen at the Oak Street pond on 3 May 2024.",                      // name
		"Herons do not hunt fish by standing still in shallow water.",                 // polarity
		"Herons hunt fish by standing still in shallow water, but only after sunset.", // addition
		"The grey heron nests in colonies called heronries, which are protected by law in France.",
	} {
		res := verify(synth.Draft{Answer: claim, Sources: cites}, func(v *synth.Verifier) { v.MinCoverage, v.MinSources = 1, 1 })
		if !res.Refused {
			t.Errorf("accepted %q: %+v", claim, res)
		}
	}
	res := verify(synth.Draft{Answer: "A heron was seen at the Elm Street pond on 3 May 2024.", Sources: cites},
		func(v *synth.Verifier) { v.MinCoverage, v.MinSources = 1, 1 })
	if res.Refused {
		t.Fatalf("the faithful claim was refused: %+v", res)
	}
}

// Coverage is supported claims over claims; a sentence that says nothing
// about the world is no claim; 3 of 4 clears 0.6.
func TestVerifyCoverage(t *testing.T) {
	res := verify(synth.Draft{
		Answer: "Here is what I found in memory. The grey heron nests in colonies called heronries. Herons strike with their bill. " +
			"A heron was seen at the Elm Street pond. Herons live for forty years.",
		Sources: []synth.Citation{{SourceID: "t-1", Span: "heronries"}, {SourceID: "t-2", Span: "strike with their bill"}, {SourceID: "t-3", Span: "Elm Street pond"}},
	})
	if res.Refused || res.CoverageRatio != 0.75 || len(res.Claims) != 4 || res.Claims[3].Supported || !strings.Contains(res.Notes, "Unsupported: claim 4 of 4.") {
		t.Fatalf("got %+v", res)
	}
	if res := verify(synth.Draft{Answer: "Here is what I found.", Sources: []synth.Citation{{SourceID: "t-1", Span: "heronries"}}}); !res.Refused ||
		!strings.Contains(res.Notes, "makes no claim") {
		t.Fatalf("an answer with no claim: %+v", res)
	}
}

// At least MinSources sources must support the answer: two citations of
// one source are one source.
func TestVerifyMinSources(t *testing.T) {
	d := synth.Draft{Answer: "Herons hunt fish by standing still in shallow water. They strike with their bill.",
		Sources: []synth.Citation{{SourceID: "t-2", Span: "hunt fish"}, {SourceID: "t-2", Span: "strike with their bill"}}}
	if res := verify(d); !res.Refused || !strings.Contains(res.Notes, "Required sources 2, actual 1.") {
		t.Fatalf("one source: %+v", res)
	}
	if res := verify(d, func(v *synth.Verifier) { v.MinSources = 1 }); res.Refused || res.CoverageRatio != 1 {
		t.Fatalf("one source required: %+v", res)
	}
}

// Inline markers, ellipses in spans, repeated citations and whitespace
// and case are all tolerated; the result does not depend on the run.
func TestVerifyToleratesFormatting(t *testing.T) {
	d := synth.Draft{
		Answer: "- The grey heron nests in colonies called heronries [t-1].\n- Herons hunt fish by standing still in shallow water (source: t-2).",
		Sources: []synth.Citation{
			{SourceID: " t-1 ", Span: "“The grey heron nests … usually high in trees”"},
			{SourceID: "t-1", Span: "The grey heron nests … usually high in trees"},
			{SourceID: "t-2", Span: "HERONS HUNT FISH\nby standing still"},
		},
	}
	res := verify(d)
	if res.Refused || res.CoverageRatio != 1 || len(res.Sources) != 2 {
		t.Fatalf("got %+v", res)
	}
	for i := 0; i < 5; i++ {
		if again := verify(d); !reflect.DeepEqual(again, res) {
			t.Fatalf("run %d differs: %+v", i, again)
		}
	}
	if res := verify(synth.Draft{Answer: d.Answer, Sources: []synth.Citation{{SourceID: "t-1", Span: "usually high … The grey heron"}, {SourceID: "t-2", Span: "hunt fish"}}}); !res.Refused {
		t.Fatalf("an ellipsis span whose parts are out of order occurs: %+v", res)
	}
}

// A verbatim extract of the sources with each sentence cited (what the
// extractive synthesiser produces) passes the verifier with full
// coverage, for every scenario of the fixture.
func TestVerbatimExtractsAreGrounded(t *testing.T) {
	items := loadFixture(t)
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.scenario] {
			continue
		}
		seen[it.scenario] = true
		var d synth.Draft
		for _, s := range it.sources[:3] {
			d.Answer += s.Text + " "
			d.Sources = append(d.Sources, synth.Citation{SourceID: s.ID, Span: s.Text})
		}
		res := synth.Verifier{}.Verify(context.Background(), d, it.sources)
		if res.Refused || res.CoverageRatio != 1 || len(res.Sources) != 3 {
			t.Errorf("%s: %+v", it.scenario, res)
		}
	}
}

// A failing embedder falls back to words and says so; a working one
// blends its cosine in.
func TestVerifySemanticFallback(t *testing.T) {
	d := synth.Draft{Answer: "The grey heron nests in colonies called heronries. Herons hunt fish by standing still in shallow water.",
		Sources: []synth.Citation{{SourceID: "t-1", Span: "heronries"}, {SourceID: "t-2", Span: "hunt fish"}}}
	fail := func(context.Context, []string) ([][]float32, error) { return nil, errors.New("down") }
	res := verify(d, func(v *synth.Verifier) { v.Embed, v.SemanticWeight = fail, 0.5 })
	if res.Refused || !strings.Contains(res.Notes, "semantic check was unavailable") {
		t.Fatalf("got %+v", res)
	}
	// An embedder that finds every text orthogonal halves a perfect
	// lexical score at weight 0.5.
	orth := func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = make([]float32, len(texts))
			out[i][i] = 1
		}
		return out, nil
	}
	res = verify(d, func(v *synth.Verifier) { v.Embed, v.SemanticWeight, v.Threshold = orth, 0.5, 0.4 })
	if res.Refused || res.Claims[0].Score != 0.5 {
		t.Fatalf("got %+v", res)
	}
}

// The contract marshals with the seed's field names.
func TestGroundedResponseJSON(t *testing.T) {
	res := verify(synth.Draft{Answer: "The grey heron nests in colonies called heronries. Herons hunt fish.",
		Sources: []synth.Citation{{SourceID: "t-1", Span: "heronries"}, {SourceID: "t-2", Span: "hunt fish"}}})
	b, _ := json.Marshal(res)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"answer", "sources", "confidence", "coverage_ratio", "refused"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	src := m["sources"].([]any)[0].(map[string]any)
	for _, k := range []string{"source_id", "source_type", "span", "relevance"} {
		if _, ok := src[k]; !ok {
			t.Errorf("no %q in a source: %s", k, b)
		}
	}
	refused, _ := json.Marshal(verify(synth.Draft{Answer: "Nothing."}))
	if !strings.Contains(string(refused), `"sources":[]`) || !strings.Contains(string(refused), `"refused":true`) {
		t.Fatalf("refused: %s", refused)
	}
}

func TestVerifierFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	v, notes := synth.VerifierFromEnv(env())
	if v.MinCoverage != 0.6 || v.MinSources != 2 || v.Threshold != synth.DefaultThreshold || len(notes) != 0 {
		t.Fatalf("defaults %+v %v", v, notes)
	}
	v, notes = synth.VerifierFromEnv(env("SURR_INNER_VOICE_MIN_COVERAGE", "0.8", "CAIRN_GROUNDING_MIN_SOURCES", "3", "CAIRN_GROUNDING_THRESHOLD", "0.7"))
	if v.MinCoverage != 0.8 || v.MinSources != 3 || v.Threshold != 0.7 || len(notes) != 0 {
		t.Fatalf("set %+v %v", v, notes)
	}
	v, notes = synth.VerifierFromEnv(env("SURR_INNER_VOICE_MIN_COVERAGE", "1.5", "CAIRN_GROUNDING_MIN_SOURCES", "0", "CAIRN_GROUNDING_THRESHOLD", "lots"))
	if v.MinCoverage != 1 || v.MinSources != 1 || v.Threshold != synth.DefaultThreshold || len(notes) != 3 {
		t.Fatalf("clamped %+v %v", v, notes)
	}
}

// The splitter keeps numbers, abbreviations, initials and units inside
// their sentence: every fixture answer splits into its labelled sentences
// (checked by TestGroundingVerifierOnFixture), and these do too.
func TestSentencesStayWhole(t *testing.T) {
	for answer, claims := range map[string]int{
		"Dr. Smith measured 2.5 ms. Then e.g. the cache warmed. J. R. Tolkien wrote it.": 3,
		"The p99 fell from 480 ms to 95 ms. The hit rate rose.":                          2,
		"Version 2.4 shipped! Did it? Yes: It did ship on time.":                         2, // "Did it?" and "Yes:" say nothing
		"1. Herons nest high.\n2. Herons hunt fish.\n\n* They strike fast.":              3,
	} {
		res := synth.Verifier{MinSources: 1, MinCoverage: 1e-9}.Check(context.Background(), synth.Draft{Answer: answer}, birds)
		if len(res.Claims) != claims {
			var got []string
			for _, c := range res.Claims {
				got = append(got, c.Text)
			}
			t.Errorf("%q: %d claims %q, want %d", answer, len(res.Claims), got, claims)
		}
	}
}
