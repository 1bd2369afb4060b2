package synth

import "context"

// Source is a retrieved record handed to a Synthesizer.
type Source struct {
	// ID is the record's id (th_…, kgo_…); Type is "thought",
	// "kg_entity" or "kg_observation".
	ID   string `json:"id"`
	Type string `json:"type"`
	// Text is the record's whole text: citations point into it.
	Text string `json:"text"`
	// Similarity is the record's similarity to the question, in [-1, 1].
	Similarity float64 `json:"similarity"`
}

// Citation ties a sentence of an answer to a span of a source's Text, in
// characters (Unicode code points): [Start, End).
type Citation struct {
	SourceID string `json:"source_id"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
}

// Sentence is one sentence of an answer and what it rests on.
type Sentence struct {
	Text      string     `json:"text"`
	Citations []Citation `json:"citations"`
}

// Answer is what a Synthesizer returns.
type Answer struct {
	// Text is the answer ("" when the sources do not answer).
	Text string `json:"text"`
	// Sentences are Text's sentences, in order, each with its citations.
	Sentences []Sentence `json:"sentences"`
	// Name names the synthesiser ("extractive").
	Name string `json:"synthesizer"`
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
