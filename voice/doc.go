// Package voice is cairn's inner voice: the inner_voice tool, which
// answers a question from the agent's own memories (seed 001), and its
// grounded synthesis and sessions (seed 002). An answer is a short
// sequence of steps: retrieve the records most similar to the question
// (through retrieve.InnerVoice, under a context policy), synthesise an
// answer (with a language model when one is configured, else
// extractively) and check it with the grounding verifier, stage
// knowledge-graph candidates from the thoughts among the sources, save
// the answer as a summary thought, mark the sources for removal, and
// record the exchange in its session, whose older exchanges fold into a
// rolling summary. The package also reads and deletes sessions and holds
// the settings of grounded answers.
//
// It uses the store through memory's seams only (thoughts, candidates,
// removals, sessions); the engine gives it its clock, ids, record check
// and embedder.
package voice
