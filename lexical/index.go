package lexical

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// BM25 parameters, chosen for short records (turns, tool outputs,
// notes): term frequency saturates early and length matters less than in
// long documents. On LoCoMo they beat the textbook k1 1.2, b 0.75 by 2.4
// points of recall@10 (docs/BENCHMARKS.md).
const (
	K1 = 0.6
	B  = 0.3
)

type posting struct {
	doc uint32
	tf  uint16
}

// Index is an inverted index over documents with dense ids. It is safe for
// concurrent use: searches share a read lock, writes take the write lock.
type Index struct {
	mu       sync.RWMutex
	postings map[string][]posting
	df       map[string]int32 // live documents holding the term
	length   []uint16         // terms per document (0 for absent)
	live     []bool
	docs     int     // live documents
	total    float64 // terms in live documents
}

// New returns an empty index.
func New() *Index {
	return &Index{postings: map[string][]posting{}, df: map[string]int32{}}
}

// Add indexes text as document doc. Ids must grow: a document replaced is
// removed and added again under a new id, which keeps postings sorted.
func (x *Index) Add(doc uint32, text string) {
	terms := Terms(text)
	x.mu.Lock()
	defer x.mu.Unlock()
	if int(doc) < len(x.live) && x.live[doc] {
		panic("lexical: document added twice; give a replacement a new id")
	}
	for int(doc) >= len(x.live) {
		x.live = append(x.live, false)
		x.length = append(x.length, 0)
	}
	counts := map[string]uint16{}
	for _, t := range terms {
		if counts[t] < math.MaxUint16 {
			counts[t]++
		}
	}
	for t, n := range counts {
		x.postings[t] = append(x.postings[t], posting{doc: doc, tf: n})
		x.df[t]++
	}
	x.live[doc] = true
	x.length[doc] = uint16(min(len(terms), math.MaxUint16))
	x.docs++
	x.total += float64(x.length[doc])
}

// Remove drops a document: its postings go and the statistics no longer
// count it. It costs a binary search in every term's postings, so it suits
// rare removals (a forgotten record, a replaced summary).
func (x *Index) Remove(doc uint32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if int(doc) >= len(x.live) || !x.live[doc] {
		return
	}
	for t, ps := range x.postings {
		i, found := slices.BinarySearchFunc(ps, doc, func(p posting, d uint32) int { return cmp.Compare(p.doc, d) })
		if !found {
			continue
		}
		ps = slices.Delete(ps, i, i+1)
		if len(ps) == 0 {
			delete(x.postings, t)
			delete(x.df, t)
		} else {
			x.postings[t] = ps
			x.df[t]--
		}
	}
	x.live[doc] = false
	x.docs--
	x.total -= float64(x.length[doc])
	x.length[doc] = 0
}

// Len is the number of live documents.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.docs
}

// Scores adds, for every live document that allow accepts and that holds
// at least one query term, its BM25 score to scores[doc]; touched lists the
// documents scored, in no order. Query terms come from QueryTerms.
//
//	score = Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))
//	idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))
func (x *Index) Scores(terms []string, allow func(doc uint32) bool, scores []float32, touched []uint32) []uint32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.docs == 0 {
		return touched
	}
	avg := x.total / float64(x.docs)
	n := float64(x.docs)
	for _, t := range terms {
		df := float64(x.df[t])
		if df <= 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range x.postings[t] {
			if !x.live[p.doc] || (allow != nil && !allow(p.doc)) {
				continue
			}
			tf := float64(p.tf)
			s := float32(idf * tf * (K1 + 1) / (tf + K1*(1-B+B*float64(x.length[p.doc])/avg)))
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += s
		}
	}
	return touched
}

// Cap returns one more than the highest document id seen, the length a
// scores slice needs.
func (x *Index) Cap() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.live)
}

// ContextScores scores every live document that allow accepts and that
// holds a query term, or neighbours one that does, as one BM25F document
// made of its own text and its neighbours' text at their weights:
// neighbours(doc, visit) calls visit for each document that takes a share
// of doc's text, with that share. A term's frequencies from the record and
// its neighbours add up before saturation, so a term found both in a record
// and next to it counts about once, while different terms add:
//
//	context(d) = Σ_t idf(t) · tf'·(k1+1) / (tf' + k1·(1 − b + b·len(d)/avglen))
//	tf'        = tf(t, d) + Σ_n share(n→d) · tf(t, n)
//
// It adds each document's own BM25 (as Scores computes it) to own[doc]
// and its context score to ctx[doc]; ownDocs and ctxDocs list the
// documents given a score, in no order. tf is scratch space of the same
// length, all zero before and after. Query terms come from QueryTerms or
// Analyze.
func (x *Index) ContextScores(terms []string, allow func(doc uint32) bool, neighbours func(doc uint32, visit func(n uint32, share float32)),
	own, ctx, tf []float32, ownDocs, ctxDocs []uint32) ([]uint32, []uint32) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.docs == 0 {
		return ownDocs, ctxDocs
	}
	avg := x.total / float64(x.docs)
	n := float64(x.docs)
	norm := func(doc uint32) float64 { return K1 * (1 - B + B*float64(x.length[doc])/avg) }
	var hit []uint32
	put := func(doc uint32, f float32) {
		if tf[doc] == 0 {
			hit = append(hit, doc)
		}
		tf[doc] += f
	}
	for _, t := range terms {
		df := float64(x.df[t])
		if df <= 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		hit = hit[:0]
		for _, p := range x.postings[t] {
			if !x.live[p.doc] || (allow != nil && !allow(p.doc)) {
				continue
			}
			f := float64(p.tf)
			if own[p.doc] == 0 {
				ownDocs = append(ownDocs, p.doc)
			}
			own[p.doc] += float32(idf * f * (K1 + 1) / (f + norm(p.doc)))
			put(p.doc, float32(p.tf))
			if neighbours != nil {
				neighbours(p.doc, func(nb uint32, share float32) {
					if share > 0 && x.live[nb] && (allow == nil || allow(nb)) {
						put(nb, share*float32(p.tf))
					}
				})
			}
		}
		for _, d := range hit {
			f := float64(tf[d])
			tf[d] = 0
			if ctx[d] == 0 {
				ctxDocs = append(ctxDocs, d)
			}
			ctx[d] += float32(idf * f * (K1 + 1) / (f + norm(d)))
		}
	}
	return ownDocs, ctxDocs
}

// IDF is ln(1 + (N − df + 0.5) / (df + 0.5)) of term t, or 0 when no live
// document holds it.
func (x *Index) IDF(t string) float64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	df := float64(x.df[t])
	if df <= 0 || x.docs == 0 {
		return 0
	}
	return math.Log(1 + (float64(x.docs)-df+0.5)/(df+0.5))
}
