package index

import (
	"math"
	"sort"

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
		df += p.liveDF(t, ds)
	}
	return df
}

// liveDF is how many of a term's postings ds are live. A segment with
// deletions counts once per term and remembers (its deletions change only
// with the state); the delta counts each time.
func (p *part) liveDF(t string, ds []uint32) int {
	if p.ndead == 0 {
		return len(ds)
	}
	if p.delta == nil {
		if n, ok := p.dfs.Load(t); ok {
			return n.(int)
		}
	}
	n := 0
	for _, d := range ds {
		if p.alive(d) {
			n++
		}
	}
	if p.delta == nil {
		p.dfs.Store(t, n)
	}
	return n
}

// within returns the postings of ds (ascending documents) in [lo, hi).
func within(ds []uint32, fs []uint8, lo, hi uint32, n int) ([]uint32, []uint8) {
	if lo == 0 && int(hi) >= n {
		return ds, fs
	}
	i := sort.Search(len(ds), func(i int) bool { return ds[i] >= lo })
	j := i + sort.Search(len(ds)-i, func(k int) bool { return ds[i+k] >= hi })
	return ds[i:j], fs[i:j]
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
// A document's frequencies add up in float64, where the few shares of
// small counts they sum are exact: the scores do not depend on the order
// the documents lie in (segments keep each repository's together).
func (v *View) ContextScores(terms []string, f *Filter, sh Shares, own, ctx []float32, tf []float64, ownDocs, ctxDocs []uint32) ([]uint32, []uint32) {
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
		tf[doc] += float64(f)
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
			pf := &f.parts[pi]
			if len(docsBy[pi]) == 0 || pf.none {
				continue
			}
			ds, fs := within(docsBy[pi], tfsBy[pi], pf.lo, pf.hi, p.n)
			if len(ds) > 0 && int(ds[len(ds)-1]) >= p.n {
				panic(corruption{errPart(p.name, "postings name document %d of %d", ds[len(ds)-1], p.n)})
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
			fv := tf[d]
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

// Scores adds, for every live searchable document within f's stretches
// (f nil: all) that allow accepts and that holds at least one query term,
// its BM25 score to scores[doc]; touched lists the documents scored, in no
// order.
//
//	score = Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))
//	idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))
func (v *View) Scores(terms []string, f *Filter, allow func(doc uint32) bool, scores []float32, touched []uint32) []uint32 {
	return v.bm25(terms, v.st.lexDocs, v.st.lexTotal, lexical.B, f, allow, scores, touched)
}

// bm25 is Scores over a collection of docs documents holding total terms
// (the memories' or the code entities'), with length normalisation b.
func (v *View) bm25(terms []string, docs int, total, b float64, f *Filter, allow func(doc uint32) bool, scores []float32, touched []uint32) []uint32 {
	st := v.st
	if docs == 0 || (f != nil && f.Empty) {
		return touched
	}
	avg := total / float64(docs)
	n := float64(docs)
	const k1 = lexical.K1
	docsBy, tfsBy := make([][]uint32, len(st.parts)), make([][]uint8, len(st.parts))
	for _, t := range terms {
		df := float64(st.postingsOf(t, docsBy, tfsBy))
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for pi, p := range st.parts {
			ds, fs := docsBy[pi], tfsBy[pi]
			if f != nil {
				pf := &f.parts[pi]
				if pf.none {
					continue
				}
				ds, fs = within(ds, fs, pf.lo, pf.hi, p.n)
			}
			if len(ds) > 0 && int(ds[len(ds)-1]) >= p.n {
				panic(corruption{errPart(p.name, "postings name document %d of %d", ds[len(ds)-1], p.n)})
			}
			for i, l := range ds {
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
