// Package reword says English questions in other words, by rules: a
// thesaurus (WordNet) replaces content words by their most common
// synonym, and a change of form (passive voice, an indirect question, a
// date phrase moved to the front, the question word said otherwise)
// reshapes the question. It builds the reworded LoCoMo questions that
// measure how retrieval holds when a memory is asked for in other words
// than it was written in (command gen; docs/BENCHMARKS.md).
package reword
