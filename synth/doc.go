// Package synth turns what cairn remembers into answers. Its grounding
// verifier (Verifier) checks an answer a model wrote from a set of
// sources: every citation must name a source that was in the context and
// quote a span that occurs in it, each claim of the answer must be
// supported by what is cited, and an answer whose coverage or number of
// supporting sources is too low is refused. LLMSynthesizer asks a model
// for such an answer (retrying a malformed one once with the schema
// restated) and passes nothing through that the verifier did not accept.
package synth
