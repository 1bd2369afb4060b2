package synth

import (
	"context"
	"strings"
)

// GroundedName is the Name of answers Grounded gives.
const GroundedName = "grounded"

// Grounded adapts the grounded LLM synthesis to the Synthesizer seam: it
// asks LLM for an answer and turns the grounding contract into an Answer.
// Each supported claim of the answer becomes a sentence whose spans are
// the cited spans of the sources that support it, located in their text
// (the whole source when a quoted span cannot be found verbatim); the
// unsupported ones are left out, as they are of the text; a refusal
// becomes an Answer with Refused set, no Text and the verifier's Notes. The model
// calls' tokens and cost are in Last, when set.
type Grounded struct {
	LLM LLMSynthesizer
	// Last, when set, receives each call's Synthesis (for cost and token
	// accounting by the caller).
	Last func(Synthesis)
}

var _ Synthesizer = Grounded{}

// Synthesize implements Synthesizer.
func (g Grounded) Synthesize(ctx context.Context, question string, sources []Source) (Answer, error) {
	ans := Answer{Name: GroundedName, Sentences: []Sentence{}}
	s, err := g.LLM.Synthesize(ctx, question, sources)
	if g.Last != nil {
		g.Last(s)
	}
	if err != nil {
		return ans, err
	}
	if s.Refused {
		ans.Refused, ans.Notes = true, s.Notes
		return ans, nil
	}
	ans.Text, ans.Notes = s.Answer, s.Notes
	text := map[string]string{}
	for _, src := range sources {
		text[src.ID] = src.Text
	}
	for _, c := range s.Claims {
		if !c.Supported {
			continue // removed from the answer: its text is in Notes only
		}
		sent := Sentence{Text: c.Text, Spans: []Span{}}
		for _, id := range c.SourceIDs {
			for _, sc := range s.Sources {
				if sc.SourceID == id {
					sent.Spans = append(sent.Spans, locate(id, text[id], sc.Span))
				}
			}
		}
		ans.Sentences = append(ans.Sentences, sent)
	}
	return ans, nil
}

// locate finds span in a source's text and returns it in characters;
// when it is not there verbatim (in any case), the whole text.
func locate(id, text, span string) Span {
	i := strings.Index(text, span)
	if i < 0 {
		i = strings.Index(strings.ToLower(text), strings.ToLower(span))
		if i >= 0 && len(strings.ToLower(text)) != len(text) {
			i = -1 // lower-casing moved the bytes: offsets would be wrong
		}
	}
	if span == "" || i < 0 {
		return Span{SourceID: id, Start: 0, End: len([]rune(text))}
	}
	start := len([]rune(text[:i]))
	return Span{SourceID: id, Start: start, End: start + len([]rune(span))}
}
