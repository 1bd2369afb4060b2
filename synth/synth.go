package synth

import "context"

// Span ties a sentence of an answer to a span of a source's Text, in
// characters (Unicode code points): [Start, End).
type Span struct {
	SourceID string `json:"source_id"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
}

// Sentence is one sentence of an answer and what it rests on.
type Sentence struct {
	Text  string `json:"text"`
	Spans []Span `json:"citations"`
}

// Answer is what a Synthesizer returns.
type Answer struct {
	// Text is the answer ("" when the sources do not answer).
	Text string `json:"text"`
	// Sentences are Text's sentences, in order, each with its citations.
	Sentences []Sentence `json:"sentences"`
	// Name names the synthesiser ("extractive", "grounded").
	Name string `json:"synthesizer"`
	// Refused says the synthesiser declined to answer from these sources
	// (Text is then empty); Notes says why.
	Refused bool   `json:"refused,omitempty"`
	Notes   string `json:"notes,omitempty"`
}

// Synthesizer answers a question from sources. See the package
// documentation for the rules an implementation keeps.
type Synthesizer interface {
	Synthesize(ctx context.Context, question string, sources []Source) (Answer, error)
}

// Func adapts a function to a Synthesizer.
type Func func(ctx context.Context, question string, sources []Source) (Answer, error)

// Synthesize implements Synthesizer.
func (f Func) Synthesize(ctx context.Context, question string, sources []Source) (Answer, error) {
	return f(ctx, question, sources)
}

// Draft is the answer as the grounding verifier reads it: its text, its
// sentences as claims, and for each span of each sentence a citation
// quoting that span of the source. Spans outside their source's text are left out (the verifier
// then finds the sentence unsupported).
func (a Answer) Draft(sources []Source) Draft {
	text := map[string][]rune{}
	for _, s := range sources {
		if _, ok := text[s.ID]; !ok {
			text[s.ID] = []rune(s.Text)
		}
	}
	d := Draft{Answer: a.Text, Sources: []Citation{}}
	for _, s := range a.Sentences {
		d.Claims = append(d.Claims, s.Text)
		for _, sp := range s.Spans {
			rs, ok := text[sp.SourceID]
			if !ok || sp.Start < 0 || sp.End > len(rs) || sp.Start >= sp.End {
				continue
			}
			d.Sources = append(d.Sources, Citation{SourceID: sp.SourceID, Span: string(rs[sp.Start:sp.End])})
		}
	}
	return d
}
