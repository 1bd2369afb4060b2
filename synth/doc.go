// Package synth turns retrieved sources into an answer: the synthesis
// step of the inner_voice tool.
//
// # The Synthesizer seam
//
// Every synthesiser implements one method:
//
//	type Synthesizer interface {
//		Synthesize(ctx context.Context, question string, sources []Source) (Answer, error)
//	}
//
// The caller hands it the question and the sources it retrieved, best
// first: each Source carries the record's id, its type ("thought",
// "kg_entity", "kg_observation"), its whole text and its similarity to the
// question. The synthesiser returns an Answer: the answer's Text, and its
// Sentences, each with the Citations it rests on: a source id and a span
// of that source's Text, in characters (Unicode code points, [start,
// end)), so a reader (or a grounding verifier) can check every sentence
// against what it cites. An answer with no sentence says the sources do
// not answer the question; Text is then empty. Name says which
// synthesiser answered, for provenance.
//
// Rules every implementation keeps:
//
//   - Cite only the sources given, by their ids, with spans inside their
//     Text; never invent a source.
//   - Be deterministic for the same input where the method allows it
//     (the extractive synthesiser always is).
//   - Fail with a typed *memory.Error (invalid_params for bad input,
//     feature_disabled or embedder_unavailable-like codes for a provider
//     that cannot answer); the caller decides whether to fall back.
//   - Never write: saving the answer is the caller's (inner_voice's
//     save step).
//
// Extractive is the default: offline and deterministic, it picks the
// sentences of the sources that share most with the question, drops
// near-duplicates, keeps about 600 characters, and cites each sentence's
// source and span. A grounded synthesiser over an LLM (seed 002) plugs in
// behind the same interface; Func adapts a function.
package synth
