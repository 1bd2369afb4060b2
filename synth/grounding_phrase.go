package synth

import (
	"fmt"
	"strings"
)

// Which noun a modifier goes with: "a nasty flood last week" is not "a
// nasty week", and "the LGBTQ support group ... was so powerful" is not
// "a LGBTQ powerful group". A claim's noun phrase puts its modifiers
// (adjectives and nouns) before the noun it ends with; the piece must
// have each modifier with that noun too, before it in one noun phrase
// ("a new car" for "a new luxury car") or after it across a preposition
// ("handling of extended header prefixes" for "extended header prefix
// handling").

// maxPhraseGap is the most words a modifier may stand from its noun.
const maxPhraseGap = 6

// phrasePairs are the part's modifiers with the noun each goes with, as
// indexes into p.need.
func phrasePairs(p claimPart) [][2]int {
	at := map[int]int{} // token index -> index into need
	for k, i := range p.need {
		at[i] = k
	}
	toks := p.a.toks
	var out [][2]int
	for i := 0; i < len(toks); {
		j := i
		for j < len(toks) && phraseWord(p.a, j) {
			j++
		}
		if j-i >= 2 {
			head, ok := at[j-1]
			if ok && toks[j-1].noun && p.a.role[j-1] != roleNone {
				for m := i; m < j-1; m++ {
					// The words of one phrase share its role; a verb the
					// tagger took for a noun ("James plays Apex Legends")
					// follows its subject.
					if k, ok := at[m]; ok && p.a.role[m] == p.a.role[j-1] && !(m == i && afterSubject(toks, m)) {
						out = append(out, [2]int{k, head})
					}
				}
			}
		}
		i = max(j, i+1)
	}
	return out
}

// afterSubject reports whether the word at i follows a name or a subject
// pronoun, where a verb stands.
func afterSubject(toks []token, i int) bool {
	prev := previousWord(toks, i)
	return prev != nil && (prev.kind == kName && !prev.poss || subjectPron[prev.low]) && strings.HasSuffix(toks[i].low, "s")
}

// phraseWord reports whether the token at i may stand inside a noun
// phrase as a modifier or its noun: not a verb, a possessor ("John's"
// moves freely) or a time.
func phraseWord(a analysis, i int) bool {
	t := a.toks[i]
	if !t.isWord() || t.verb || t.poss || t.kind == kFn || t.kind == kNeg || a.role[i] == roleTime || timeWords[t.low] {
		return false
	}
	return t.noun || t.adj
}

// attached reports whether the piece's word at jm modifies its word at
// jh: before it with nothing between that ends a phrase (a stop, a
// coordinator, a preposition, the clause's verb), or after it across a
// preposition.
func attached(pc *srcPiece, jm, jh int) bool {
	toks := pc.a.toks
	if jm < 0 || jh < 0 || jm == jh || max(jm, jh)-min(jm, jh) > maxPhraseGap {
		return false
	}
	prep := false
	for x := min(jm, jh) + 1; x < max(jm, jh); x++ {
		t := toks[x]
		switch {
		case !t.isWord() && strings.IndexByte(".!?;:", t.punct) >= 0, coordinators[t.low], t.verb && pc.a.pred[pc.a.clause[x]] == x:
			return false
		case prepositions[t.low]:
			prep = true
		}
	}
	return jm < jh && !prep || jh < jm && prep
}

// modifierDetached returns a reason when a modifier of the part's noun
// phrase goes with another noun in the piece, or with none: any of the
// words the piece may stand for it will do.
func modifierDetached(p claimPart, pc *srcPiece, cands [][]int) string {
	for _, pr := range phrasePairs(p) {
		ms, hs := cands[pr[0]], cands[pr[1]]
		if len(ms) == 0 || len(hs) == 0 || (ms[0] < 0 && len(ms) == 1) || (hs[0] < 0 && len(hs) == 1) {
			continue // missing (said elsewhere), or the source's label
		}
		found := false
		for _, jm := range ms {
			for _, jh := range hs {
				if jm == jh || attached(pc, jm, jh) {
					found = true
				}
			}
		}
		if !found {
			m, h := p.a.toks[p.need[pr[0]]], p.a.toks[p.need[pr[1]]]
			return fmt.Sprintf("the source does not say %q of %q", m.text, h.text)
		}
	}
	return ""
}
