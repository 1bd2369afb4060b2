package index

import (
	"math"

	"github.com/cairnhq/cairn/lexical"
)

// Shares are how much of a neighbouring record's text a record takes in
// ContextScores: Before from the record right before it in its capsule
// when that one asks a question (BeforeOther when it does not), After
// from the one right after it, Far from the ones two away.
type Shares struct {
	Before, BeforeOther, After, Far float32
}

// postingsOf collects a term's postings in every part and the number of
// live documents among them (its document frequency).
func (st *state) postingsOf(t string, docs [][]uint32, tfs [][]uint8) int {
	df := 0
	for pi, p := range st.parts {
		ds, fs := p.lex.postings(t)
		docs[pi], tfs[pi] = ds, fs
		if p.ndead == 0 {
			df += len(ds)
			continue
		}
		for _, d := range ds {
			if p.alive(d) {
				df++
			}
		}
	}
	return df
}

// ContextScores scores every document f allows that holds a query term,
// or neighbours one that does, as one BM25F document made of its own text
// and its neighbours' text at their shares (the hybrid provider's
// context): a term's frequencies from the record and its neighbours add up
// before saturation.
//
//	context(d) = Σ_t idf(t) · tf'·(k1+1) / (tf' + k1·(1 − b + b·len(d)/avglen))
//	tf'        = tf(t, d) + Σ_n share(n→d) · tf(t, n)
//
// It adds each document's own BM25 to own[doc] and its context score to
// ctx[doc]; ownDocs and ctxDocs list the documents given a score, in no
// order. tf is scratch space of Docs() length, all zero before and after.
// Scores are those of one in-memory index of the same live documents.
func (v *View) ContextScores(terms []string, f *Filter, sh Shares, own, ctx, tf []float32, ownDocs, ctxDocs []uint32) ([]uint32, []uint32) {
	st := v.st
	if st.lexDocs == 0 || f.Empty {
		return ownDocs, ctxDocs
	}
	avg := st.lexTotal / float64(st.lexDocs)
	n := float64(st.lexDocs)
	const k1, b = lexical.K1, lexical.B
	var hit []uint32
	put := func(doc uint32, f float32) {
		if tf[doc] == 0 {
			hit = append(hit, doc)
		}
		tf[doc] += f
	}
	type nb struct {
		k int32
		f float32
	}
	shares := [4]nb{{1, sh.Before}, {-1, sh.After}, {2, sh.Far}, {-2, sh.Far}}
	docsBy, tfsBy := make([][]uint32, len(st.parts)), make([][]uint8, len(st.parts))
	for _, t := range terms {
		df := float64(st.postingsOf(t, docsBy, tfsBy))
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		hit = hit[:0]
		for pi, p := range st.parts {
			ds, fs := docsBy[pi], tfsBy[pi]
			if len(ds) == 0 || f.parts[pi].none {
				continue
			}
			for i, l := range ds {
				if !f.allowIn(pi, p, l) {
					continue
				}
				doc := p.base + l
				tfv := float32(fs[i])
				fv := float64(tfv)
				if own[doc] == 0 {
					ownDocs = append(ownDocs, doc)
				}
				own[doc] += float32(idf * fv * (k1 + 1) / (fv + k1*(1-b+b*float64(p.length[l])/avg)))
				put(doc, tfv)
				c := p.capsule[l]
				if c == 0 {
					continue
				}
				slots, pos := st.slots[p.capG[c]], p.pos[l]
				asks := p.meta[l].attr&attrAsks != 0
				for _, s := range shares {
					share := s.f
					if s.k == 1 && !asks {
						share = sh.BeforeOther
					}
					if share <= 0 {
						continue
					}
					at := int(pos + s.k)
					if at < 0 || at >= len(slots) || slots[at] == noDoc {
						continue
					}
					if nd := slots[at]; f.Allow(nd) {
						put(nd, share*tfv)
					}
				}
			}
		}
		for _, d := range hit {
			fv := float64(tf[d])
			tf[d] = 0
			if ctx[d] == 0 {
				ctxDocs = append(ctxDocs, d)
			}
			p := st.partOf(d)
			ctx[d] += float32(idf * fv * (k1 + 1) / (fv + k1*(1-b+b*float64(p.length[d-p.base])/avg)))
		}
	}
	return ownDocs, ctxDocs
}

// Scores adds, for every live searchable document that allow accepts and
// that holds at least one query term, its BM25 score to scores[doc];
// touched lists the documents scored, in no order.
//
//	score = Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))
//	idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))
func (v *View) Scores(terms []string, allow func(doc uint32) bool, scores []float32, touched []uint32) []uint32 {
	st := v.st
	if st.lexDocs == 0 {
		return touched
	}
	avg := st.lexTotal / float64(st.lexDocs)
	n := float64(st.lexDocs)
	const k1, b = lexical.K1, lexical.B
	docsBy, tfsBy := make([][]uint32, len(st.parts)), make([][]uint8, len(st.parts))
	for _, t := range terms {
		df := float64(st.postingsOf(t, docsBy, tfsBy))
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for pi, p := range st.parts {
			fs := tfsBy[pi]
			for i, l := range docsBy[pi] {
				doc := p.base + l
				if !p.alive(l) || (allow != nil && !allow(doc)) {
					continue
				}
				tf := float64(fs[i])
				s := float32(idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(p.length[l])/avg)))
				if scores[doc] == 0 {
					touched = append(touched, doc)
				}
				scores[doc] += s
			}
		}
	}
	return touched
}

// IDF is ln(1 + (N − df + 0.5) / (df + 0.5)) of term t, or 0 when no live
// document holds it.
func (v *View) IDF(t string) float64 {
	st := v.st
	docsBy, tfsBy := make([][]uint32, len(st.parts)), make([][]uint8, len(st.parts))
	df := float64(st.postingsOf(t, docsBy, tfsBy))
	if df == 0 || st.lexDocs == 0 {
		return 0
	}
	return math.Log(1 + (float64(st.lexDocs)-df+0.5)/(df+0.5))
}
