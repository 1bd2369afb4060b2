package postgres

import (
	"slices"
	"strings"
)

// match evaluates the query on a row whose terms sit at the given 0-based
// offsets, as FTS5 does (fts5_expr.c): a phrase occurs where its terms
// follow each other (at offset 0 for ^), a NEAR group keeps the
// occurrences that lie within its distance, and the result is whether the
// row matches and, per phrase, the occurrences bm25 counts: those of
// phrases whose NEAR group matches and whose every enclosing operator
// holds (a phrase under a failing AND, or right of a NOT, counts none).
func (q *ftsQuery) match(pos map[string][]int) ([]float64, bool) {
	lists := make([][]int, len(q.phrases))
	for i, ph := range q.phrases {
		lists[i] = phraseOccurrences(ph, pos)
	}
	tf := make([]float64, len(q.phrases))
	matched := map[*ftsNode]bool{}
	if !q.root.eval(lists, matched) {
		return tf, false
	}
	q.root.count(lists, tf, matched)
	return tf, true
}

// eval reports whether the node matches (recording it in matched for
// every node below), trimming the occurrence lists of NEAR groups to those
// within distance.
func (n *ftsNode) eval(lists [][]int, matched map[*ftsNode]bool) bool {
	ok := n.test(lists, matched)
	matched[n] = ok
	return ok
}

func (n *ftsNode) test(lists [][]int, matched map[*ftsNode]bool) bool {
	switch n.op {
	case opEOF:
		return false
	case opNear:
		if n.none {
			for _, ph := range n.phrases {
				lists[ph.idx] = nil
			}
			return false
		}
		for _, ph := range n.phrases {
			if len(lists[ph.idx]) == 0 {
				for _, o := range n.phrases {
					lists[o.idx] = nil
				}
				return false
			}
		}
		if len(n.phrases) == 1 {
			return true
		}
		return nearTrim(n, lists)
	case opAnd:
		ok := true
		for _, k := range n.kids {
			if !k.eval(lists, matched) {
				ok = false
			}
		}
		return ok
	case opOr:
		ok := false
		for _, k := range n.kids {
			if k.eval(lists, matched) {
				ok = true
			}
		}
		return ok
	case opNot:
		l := n.kids[0].eval(lists, matched)
		r := n.kids[1].eval(lists, matched)
		return l && !r
	}
	return false
}

// count adds the occurrences of the phrases of a matching node that
// count: every kid of an AND, the matching kids of an OR, the left side
// of a NOT.
func (n *ftsNode) count(lists [][]int, tf []float64, matched map[*ftsNode]bool) {
	switch n.op {
	case opNear:
		for _, ph := range n.phrases {
			tf[ph.idx] = float64(len(lists[ph.idx]))
		}
	case opAnd:
		for _, k := range n.kids {
			k.count(lists, tf, matched)
		}
	case opOr:
		for _, k := range n.kids {
			if matched[k] {
				k.count(lists, tf, matched)
			}
		}
	case opNot:
		n.kids[0].count(lists, tf, matched)
	}
}

// termPositions are the offsets of a term, or of every term starting
// with a prefix, in order.
func termPositions(t ftsTerm, pos map[string][]int) []int {
	if !t.prefix {
		return pos[t.text]
	}
	var out []int
	for lex, ps := range pos {
		if strings.HasPrefix(lex, t.text) {
			out = append(out, ps...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// phraseOccurrences are the offsets where a phrase starts, found as
// fts5ExprPhraseIsMatch finds them: after each occurrence every term's
// reader moves on by one.
func phraseOccurrences(ph *ftsPhrase, pos map[string][]int) []int {
	if len(ph.terms) == 0 {
		return nil
	}
	terms := make([][]int, len(ph.terms))
	for i, t := range ph.terms {
		terms[i] = termPositions(t, pos)
		if len(terms[i]) == 0 {
			return nil
		}
	}
	if len(terms) == 1 && !ph.first {
		return terms[0]
	}
	idx := make([]int, len(terms))
	var out []int
	for {
		at := terms[0][idx[0]]
		for {
			match := true
			for i := range terms {
				adj := at + i
				if terms[i][idx[i]] != adj {
					match = false
					for terms[i][idx[i]] < adj {
						idx[i]++
						if idx[i] == len(terms[i]) {
							return out
						}
					}
					if terms[i][idx[i]] > adj {
						at = terms[i][idx[i]] - i
					}
				}
			}
			if match {
				break
			}
		}
		if !ph.first || at == 0 {
			out = append(out, at)
		}
		for i := range idx {
			idx[i]++
			if idx[i] == len(terms[i]) {
				return out
			}
		}
	}
}

// nearEOF is FTS5_LOOKAHEAD_EOF.
const nearEOF = 1 << 62

// nearReader is FTS5's lookahead reader over an occurrence list.
type nearReader struct {
	list       []int
	i          int
	pos, ahead int
}

func (r *nearReader) next() bool {
	r.pos = r.ahead
	if r.i < len(r.list) {
		r.ahead = r.list[r.i]
		r.i++
	} else {
		r.ahead = nearEOF
	}
	return r.pos == nearEOF
}

// nearTrim is fts5ExprNearIsMatch: whether some occurrence of each phrase
// lies within the group's distance of the others (every phrase ending no
// more than near tokens before the last one starts), keeping in each list
// the occurrences that take part in such a set.
func nearTrim(n *ftsNode, lists [][]int) bool {
	rs := make([]nearReader, len(n.phrases))
	out := make([][]int, len(n.phrases))
	for i, ph := range n.phrases {
		rs[i] = nearReader{list: lists[ph.idx]}
		rs[i].next()
		rs[i].next()
	}
	done := func() bool {
		for i, ph := range n.phrases {
			lists[ph.idx] = out[i]
		}
		return len(out[0]) > 0
	}
	for {
		iMax := rs[0].pos
		for {
			match := true
			for i, ph := range n.phrases {
				iMin := iMax - len(ph.terms) - n.near
				if rs[i].pos < iMin || rs[i].pos > iMax {
					match = false
					for rs[i].pos < iMin {
						if rs[i].next() {
							return done()
						}
					}
					if rs[i].pos > iMax {
						iMax = rs[i].pos
					}
				}
			}
			if match {
				break
			}
		}
		for i := range rs {
			if len(out[i]) == 0 || out[i][len(out[i])-1] != rs[i].pos {
				out[i] = append(out[i], rs[i].pos)
			}
		}
		adv, least := 0, rs[0].ahead
		for i := range rs {
			if rs[i].ahead < least {
				least, adv = rs[i].ahead, i
			}
		}
		if rs[adv].next() {
			return done()
		}
	}
}
