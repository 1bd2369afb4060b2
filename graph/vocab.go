package graph

import (
	"strings"
	"sync"

	"github.com/cairnhq/cairn/embed/glove"
)

// The embedder's vocabulary as a signal of ordinary English: GloVe keeps
// the 80,000 most frequent words of a large English corpus, in lower case,
// with their frequency ranks. A word ranked within commonRank is an
// ordinary word (a capitalised one opening a sentence is no name, an
// identifier made of such words is a phrase); a lower-case word the table
// lacks is rare in English: a name, an identifier or jargon.

// commonRank is the frequency rank below which a word is ordinary English
// (error 3,858, cache 12,738; rarer: samba 22,294, perl 37,338).
const commonRank = 20000

// vocabulary loads GloVe's table once, on the first extraction; nil when
// the embedded file cannot be read (the word lists alone decide then).
var vocabulary = sync.OnceValue(func() *glove.Vectors {
	v, err := glove.Load()
	if err != nil {
		return nil
	}
	return v
})

// rank returns a lower-case word's frequency rank and whether the
// vocabulary holds it.
func rank(w string) (int, bool) {
	v := vocabulary()
	if v == nil {
		return 0, false
	}
	return v.Rank(w)
}

// isCommon reports an ordinary English word (any case): on the word lists,
// or ranked within commonRank.
func isCommon(w string) bool {
	lw := strings.ToLower(w)
	if commonWords[lw] {
		return true
	}
	r, ok := rank(lw)
	return ok && r < commonRank
}

// isKnownWord reports a word the vocabulary holds at any rank (or one of
// the word lists'), or an inflection of one (plurals, -ed, -ing, -er):
// "symlinks" is not, "callbacks" is.
func isKnownWord(w string) bool {
	lw := strings.ToLower(w)
	if commonWords[lw] {
		return true
	}
	if _, ok := rank(lw); ok {
		return true
	}
	for _, suf := range []string{"s", "es", "ed", "d", "ing", "er", "ers", "or", "ors", "izer", "iser", "ize", "ise", "ization", "isation", "ist", "ists"} {
		if base, ok := strings.CutSuffix(lw, suf); ok && len(base) >= 3 {
			if _, ok := rank(base); ok {
				return true
			}
			if _, ok := rank(base + "e"); ok && (suf == "ing" || suf == "ed" || suf == "er" || suf == "or" || suf == "ors" || suf == "ers") {
				return true
			}
		}
	}
	return false
}

// isLanguageOrNation reports a word whose vector lies near the words
// "language", "ethnic", "dialect" and "nationality" in GloVe's space (the
// mean of its cosine similarities to them at least nationCosine): a
// language or a nationality (Spanish 0.36, Serbian 0.33, German 0.32),
// which a graph does not stage as an entity. Names and words of code lie
// farther (Write 0.28, Seek 0.24, Google 0.17, Debian -0.07).
func isLanguageOrNation(lw string) bool {
	v := vocabulary()
	ps := nationPrototypes()
	if v == nil || len(ps) == 0 {
		return false
	}
	ids := v.WordIDs(lw, nil)
	if len(ids) != 1 {
		return false
	}
	var sum float32
	for _, p := range ps {
		sum += v.WordCosine(ids[0], p)
	}
	return sum/float32(len(ps)) >= nationCosine
}

const nationCosine = 0.30

var nationPrototypes = sync.OnceValue(func() []int32 {
	if v := vocabulary(); v != nil {
		return v.WordIDs("language ethnic dialect nationality", nil)
	}
	return nil
})

// personScore is how close a word lies to personal names in GloVe's
// space: its greatest cosine similarity to a few common names of several
// origins (Paul 0.81, Chen 0.85, Alice 0.69; Increase 0.22, Declare 0.20,
// Module 0.09).
func personScore(lw string) float32 {
	v := vocabulary()
	ps := personPrototypes()
	if v == nil || len(ps) == 0 {
		return 0
	}
	ids := v.WordIDs(lw, nil)
	if len(ids) != 1 {
		return 0
	}
	var best float32
	for _, p := range ps {
		best = max(best, v.WordCosine(ids[0], p))
	}
	return best
}

var personPrototypes = sync.OnceValue(func() []int32 {
	if v := vocabulary(); v != nil {
		return v.WordIDs("john mary smith wang garcia kumar", nil)
	}
	return nil
})
