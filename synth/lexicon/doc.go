// Package lexicon is the word knowledge the grounding verifier uses to
// tell a paraphrase from a change of meaning: which words share a sense
// (synonyms), which are opposites (antonyms), which parts of speech a word
// usually takes, and the base forms of inflected words ("went" is "go").
//
// The data, wordnet.txt.gz, is derived from WordNet 3.0 (Copyright 2006 by
// Princeton University; the licence and its notice are in
// LICENSE.wordnet) as Debian's wordnet-base package installs it, kept to
// the single words the built-in embedder's vocabulary holds;
// scripts/gen-wordnet.sh rebuilds it with ./gen. It is embedded in the
// binary and read on first use (a few tens of milliseconds, once per
// process).
package lexicon
