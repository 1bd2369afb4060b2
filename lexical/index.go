package lexical

import (
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

// postings are a term's documents, ascending, and the term's frequency in
// each, held as two arrays: 5 bytes a posting rather than 8 for a struct.
// Frequencies stop at 255; with k1 0.6 BM25 has long saturated by then.
type postings struct {
	docs []uint32
	tfs  []uint8
}

// Index is an inverted index over documents with dense ids. It is safe for
// concurrent use: searches share a read lock, writes take the write lock.
type Index struct {
	mu sync.RWMutex
	// postings hold the live documents only, so a term's document
	// frequency is the length of its list.
	postings map[string]postings
	length   []uint16 // terms per document (0 for absent)
	live     []bool
	docs     int     // live documents
	total    float64 // terms in live documents
}

// New returns an empty index.
func New() *Index {
	return &Index{postings: map[string]postings{}}
}

// Add indexes text as document doc. Ids must grow: a document replaced is
// removed and added again under a new id, which keeps postings sorted.
func (x *Index) Add(doc uint32, text string) { x.AddTerms(doc, Terms(text)) }

// AddTerms indexes a document from its terms, as Terms gives them: a
// caller adding many documents can analyse their texts in parallel.
func (x *Index) AddTerms(doc uint32, terms []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if int(doc) < len(x.live) && x.live[doc] {
		panic("lexical: document added twice; give a replacement a new id")
	}
	for int(doc) >= len(x.live) {
		x.live = append(x.live, false)
		x.length = append(x.length, 0)
	}
	counts := map[string]uint8{}
	for _, t := range terms {
		if counts[t] < math.MaxUint8 {
			counts[t]++
		}
	}
	for t, n := range counts {
		ps := x.postings[t]
		ps.docs, ps.tfs = append(ps.docs, doc), append(ps.tfs, n)
		x.postings[t] = ps
	}
	x.live[doc] = true
	x.length[doc] = uint16(min(len(terms), math.MaxUint16))
	x.docs++
	x.total += float64(x.length[doc])
}

// Remove drops documents: their postings go and the statistics no longer
// count them. A few documents cost a binary search in every term's
// postings each; from removeSweep documents on, one pass over all the
// postings drops them together, so replacing many records at once (a
// re-embedding) costs no more than a rebuild.
func (x *Index) Remove(docs ...uint32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var gone []uint32
	for _, doc := range docs {
		if int(doc) >= len(x.live) || !x.live[doc] {
			continue
		}
		x.live[doc] = false
		x.docs--
		x.total -= float64(x.length[doc])
		x.length[doc] = 0
		gone = append(gone, doc)
	}
	if len(gone) >= removeSweep {
		x.sweep()
		return
	}
	for _, doc := range gone {
		for t, ps := range x.postings {
			i, found := slices.BinarySearch(ps.docs, doc)
			if !found {
				continue
			}
			if len(ps.docs) == 1 {
				delete(x.postings, t)
				continue
			}
			ps.docs, ps.tfs = slices.Delete(ps.docs, i, i+1), slices.Delete(ps.tfs, i, i+1)
			x.postings[t] = ps
		}
	}
}

// removeSweep is the number of documents removed at once from which Remove
// sweeps all postings rather than searching each term per document.
const removeSweep = 8

// sweep drops the postings of documents no longer live.
func (x *Index) sweep() {
	for t, ps := range x.postings {
		n := 0
		for i, doc := range ps.docs {
			if x.live[doc] {
				ps.docs[n], ps.tfs[n] = doc, ps.tfs[i]
				n++
			}
		}
		switch {
		case n == 0:
			delete(x.postings, t)
		case n < len(ps.docs):
			ps.docs, ps.tfs = slices.Clip(ps.docs[:n]), slices.Clip(ps.tfs[:n])
			x.postings[t] = ps
		}
	}
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
		ps := x.postings[t]
		df := float64(len(ps.docs))
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, doc := range ps.docs {
			if !x.live[doc] || (allow != nil && !allow(doc)) {
				continue
			}
			tf := float64(ps.tfs[i])
			s := float32(idf * tf * (K1 + 1) / (tf + K1*(1-B+B*float64(x.length[doc])/avg)))
			if scores[doc] == 0 {
				touched = append(touched, doc)
			}
			scores[doc] += s
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
		ps := x.postings[t]
		df := float64(len(ps.docs))
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		hit = hit[:0]
		for i, doc := range ps.docs {
			if !x.live[doc] || (allow != nil && !allow(doc)) {
				continue
			}
			tf := float32(ps.tfs[i])
			f := float64(tf)
			if own[doc] == 0 {
				ownDocs = append(ownDocs, doc)
			}
			own[doc] += float32(idf * f * (K1 + 1) / (f + norm(doc)))
			put(doc, tf)
			if neighbours != nil {
				neighbours(doc, func(nb uint32, share float32) {
					if share > 0 && x.live[nb] && (allow == nil || allow(nb)) {
						put(nb, share*tf)
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
	df := float64(len(x.postings[t].docs))
	if df == 0 || x.docs == 0 {
		return 0
	}
	return math.Log(1 + (float64(x.docs)-df+0.5)/(df+0.5))
}
