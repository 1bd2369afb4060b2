package graph

import (
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// edgesOf finds the relations a sentence states between its mentions.
func (x *extractor) edgesOf(s sentence, ms []mention, prev sentMentions) {
	if len(ms) == 0 {
		return
	}
	toks := s.toks
	at := make([]int, len(toks)) // mention index + 1 covering each token
	for mi, m := range ms {
		for k := m.s; k < m.e; k++ {
			at[k] = mi + 1
		}
	}
	isMention := func(k int) bool { return at[k] != 0 }
	lower := func(k int) string { return strings.ToLower(toks[k].text) }
	lastSubject := -1 // mention index of the subject of the last relation
	lastObjectEnd := -1
	for i := 0; i < len(toks); i++ {
		if isMention(i) || !toks[i].word {
			continue
		}
		var r relation
		end, ok := 0, false
		for _, cand := range relations {
			if end, ok = matchAt(cand, toks, i, isMention); ok {
				r = cand
				break
			}
		}
		if !ok {
			continue
		}
		negated := false
		for k := max(0, i-3); k < i; k++ {
			if toks[k].word && negations[lower(k)] {
				negated = true
			}
		}
		// The subject: the nearest mention before the phrase with only
		// fillers between; else the last relation's subject when "and" or
		// a comma follows that relation's object.
		subj, conf := -1, confEdgeDirect
		k := i - 1
		for k >= 0 && !isMention(k) && toks[k].word && (fillers[lower(k)] || negations[lower(k)]) {
			k--
		}
		if k >= 0 && isMention(k) {
			subj = at[k] - 1
		} else if k == 0 && toks[0].word && (lower(0) == "it" || lower(0) == "they") && prev.source == s.source && len(prev.ms) == 1 {
			// "It" opening the sentence: the one entity of the sentence
			// before.
			subj, conf = -2, confEdgeCarried
		} else if lastSubject >= 0 && k >= 0 && k > lastObjectEnd-1 && (lower(k) == "and" || toks[k].text == ",") {
			subj, conf = lastSubject, confEdgeCarried
		}
		// The objects: the first mention after the phrase with only
		// determiners between, then those listed after it with "and",
		// "or" or commas.
		var objs []int
		k = end
		for k < len(toks) && !isMention(k) && toks[k].word && determiners[lower(k)] {
			k++
		}
		for k < len(toks) && isMention(k) {
			mi := at[k] - 1
			objs = append(objs, mi)
			k = ms[mi].e
			// A list goes on after "and", "or" or a comma.
			j := k
			for j < len(toks) && (toks[j].text == "," || toks[j].word && (lower(j) == "and" || lower(j) == "or" || determiners[lower(j)])) {
				j++
			}
			if j == k || j >= len(toks) || !isMention(j) || r.swap {
				break
			}
			k = j
		}
		// An entity followed by a noun only qualifies the real object
		// ("maintains the Terraform modules"): it is no object.
		objs = slices.DeleteFunc(objs, func(mi int) bool { return qualifies(toks, ms[mi].e) })
		// "stores receipts in S3 and metadata in PostgreSQL": a phrase
		// with a wildcard repeats after "and".
		if star := slices.Index(r.words, "*"); star >= 0 && len(objs) > 0 {
			tail := relation{words: r.words[star+1:]}
			j := ms[objs[len(objs)-1]].e
			for j+1 < len(toks) && toks[j].word && lower(j) == "and" {
				found := false
				for skip := 1; skip <= 3 && j+1+skip <= len(toks); skip++ {
					if !toks[j+skip].word || isMention(j+skip) {
						break
					}
					if e2, ok := tail.match(toks, j+1+skip); ok && e2 < len(toks) && isMention(e2) && !qualifies(toks, ms[at[e2]-1].e) {
						objs = append(objs, at[e2]-1)
						j, found = ms[at[e2]-1].e, true
						break
					}
				}
				if !found {
					break
				}
			}
		}
		if len(objs) == 0 {
			i = end - 1
			continue
		}
		if r.swap {
			// "replaced X with Y", "migrated from X to Y": Y replaces X.
			j := ms[objs[0]].e
			if j < len(toks) && toks[j].word && (lower(j) == "with" || lower(j) == "to" || lower(j) == "by") {
				j++
				for j < len(toks) && toks[j].word && determiners[lower(j)] {
					j++
				}
				if j < len(toks) && isMention(j) && !negated {
					x.addEdge(ms[at[j]-1].name, r.rel, ms[objs[0]].name, confEdgeDirect, "replace-with", s)
				}
				lastSubject, lastObjectEnd = -1, j
				i = j
				continue
			}
			if subj < 0 {
				i = end - 1
				continue
			}
			r.swap = false
		}
		if subj != -1 && !negated {
			for n, o := range objs {
				c := conf
				if n > 0 {
					c = min(c, confEdgeCarried)
				}
				src, dst := "", ms[o].name
				if subj >= 0 {
					src = ms[subj].name
				} else {
					src = prev.ms[0].name
				}
				if r.passive {
					src, dst = dst, src
				}
				if memory.NameKey(src) != memory.NameKey(dst) {
					x.addEdge(src, r.rel, dst, c, strings.Join(r.words, " "), s)
				}
			}
		}
		if subj >= 0 {
			lastSubject = subj
		}
		lastObjectEnd = ms[objs[len(objs)-1]].e
		i = lastObjectEnd - 1
	}
}

func (x *extractor) addEdge(src, rel, dst string, conf float64, rule string, s sentence) {
	for i, g := range x.edges {
		if memory.EdgeKey(g.Source, g.Relation, g.Target) == memory.EdgeKey(src, rel, dst) {
			if conf > g.Confidence {
				x.edges[i].Confidence, x.edges[i].SourceID, x.edges[i].Sentence, x.edges[i].Rule = conf, s.source, s.text, rule
			}
			return
		}
	}
	x.edges = append(x.edges, ExtractedEdge{Source: src, Relation: rel, Target: dst, Confidence: conf, SourceID: s.source, Sentence: s.text, Rule: rule})
}

// qualifies reports whether the entity ending before token e qualifies a
// noun that follows it (a lower-case word that is no clause break,
// adverb or number; numbers after it are skipped).
func qualifies(toks []token, e int) bool {
	for e < len(toks) && toks[e].word && isNumeric(toks[e].text) {
		e++
	}
	if e >= len(toks) || !toks[e].word {
		return false
	}
	w := toks[e].text
	lw := strings.ToLower(w)
	return !isCapitalised(w) && !clauseBreaks[lw] && !strings.HasSuffix(lw, "ly") && !negations[lw]
}
