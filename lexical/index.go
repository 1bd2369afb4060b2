package lexical

import (
	"math"
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

// Index is an inverted index over documents with dense ids, held in
// memory (code memory searches a repository's entities with it; the
// retrieval index keeps its own postings on disk). It is safe for
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

// Add indexes text as document doc. Ids must grow, which keeps postings
// sorted.
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
