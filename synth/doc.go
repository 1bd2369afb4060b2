// Package synth turns what cairn remembers into answers: the synthesis
// step of the inner_voice tool.
//
// # The Synthesizer seam
//
// Every synthesiser inner_voice can use implements one method:
//
//	type Synthesizer interface {
//		Synthesize(ctx context.Context, question string, sources []Source) (Answer, error)
//	}
//
// The caller hands it the question and the sources it retrieved, best
// first: each Source carries the record's id, its type ("thought",
// "kg_entity", "kg_observation"), its whole text and its relevance to the
// question. The synthesiser returns an Answer: the answer's Text, and its
// Sentences, each with the Spans it rests on: a source id and a span of
// that source's Text, in characters (Unicode code points, [start, end)),
// so a reader can check every sentence against what it cites. An answer
// with no sentence says the sources do not answer the question; Text is
// then empty, and Refused says a synthesiser declined to answer (Notes:
// why). Name says which synthesiser answered, for provenance.
//
// Rules every implementation keeps:
//
//   - Cite only the sources given, by their ids, with spans inside their
//     Text; never invent a source.
//   - Be deterministic for the same input where the method allows it
//     (the extractive synthesiser always is).
//   - Fail with a typed *memory.Error (invalid_params for bad input,
//     feature_disabled when nothing can answer); the caller decides
//     whether to fall back.
//   - Never write: saving the answer is the caller's (inner_voice's save
//     step).
//
// Extractive is the default: offline and deterministic, it picks the
// sentences of the sources that share most with the question, drops
// near-duplicates, keeps about 600 characters, and cites each sentence's
// source and span. Grounded adapts the grounded LLM synthesis (below) to
// the seam; Func adapts a function.
//
// # Grounding
//
// The grounding verifier (Verifier) checks an answer a model wrote from a
// set of sources: every citation must name a source that was in the
// context and quote a span that occurs in it, and each claim of the answer
// must rest on one piece of a cited source that says who did what: every
// name, number, noun and adjective there, in the same roles (subject,
// object, the object of each preposition, passives undone), with the
// same polarity, no antonym, and a cause the same way round (the word
// knowledge is the lexicon subpackage, from WordNet). An answer whose
// coverage or number of supporting sources is too low is refused; an
// accepted one keeps only its supported claims. LLMSynthesizer asks a
// model for such an answer (retrying a malformed one once with the schema
// restated), optionally puts the supported claims to a Judge, and passes
// nothing through that the verifier did not accept.
package synth
