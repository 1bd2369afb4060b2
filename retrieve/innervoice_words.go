package retrieve

import (
	"cmp"
	"math"

	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
)

// The inner voice ranked by words, for a caller that would rather answer
// than fail while the embedder is unavailable (the inner_voice tool). No
// lexical index holds thoughts and graph records, so this reads a bounded
// pool: the most recent records of each kind the filters allow, at most
// the candidate cap (SURR_DB_LIMIT for inner_voice), and scores them by
// the words of the query they hold. A record older than the pool is not
// found; a record with no vector yet (written while the embedder was
// down) is.

// recent returns the k most recent documents of kind that allow accepts
// (newest first, ties by id), as candidates of src without a score.
func recent(v *index.View, k int, kind memory.VectorKind, src source, allow func(uint32) bool) []ivCand {
	var docs []uint32
	v.Each(kind, func(doc uint32) {
		if allow(doc) {
			docs = append(docs, doc)
		}
	})
	docs = best(docs, k, func(a, b uint32) int {
		if c := cmp.Compare(v.TS(b), v.TS(a)); c != 0 {
			return c
		}
		return v.CompareIDs(a, b)
	})
	out := make([]ivCand, len(docs))
	for i, doc := range docs {
		out[i] = ivCand{doc: doc, kind: kind, src: src, rec: memory.IndexRecord{ID: v.ID(doc)}}
	}
	return out
}

// scoreWords scores loaded candidates by the query's words they hold: the
// share of the query's weight, each term (Porter2 stem, stopwords out)
// weighing its inverse document frequency over the candidates read,
//
//	score = Σ idf(t) over the query terms the record holds / Σ idf(t) over the query terms
//	idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))
//
// so a score is in [0, 1] and, like a cosine similarity, is compared with
// the floor: 0.5 means the record holds half of what the query says,
// rare words counting more. A term no record holds keeps its weight, so
// no record reaches 1 then. Candidates that hold no query term are
// dropped; the rest come back best first (ties by id).
func scoreWords(q string, thoughts, kg []ivCand) ([]ivCand, []ivCand) {
	terms := lexical.QueryTerms(q)
	pools := [][]ivCand{thoughts, kg}
	holds := make([][]map[string]bool, len(pools))
	n, df := 0, map[string]int{}
	for p, cs := range pools {
		holds[p] = make([]map[string]bool, len(cs))
		for i, c := range cs {
			set := map[string]bool{}
			if !c.rec.Gone {
				for _, t := range lexical.Terms(c.rec.Content) {
					set[t] = true
				}
			}
			holds[p][i] = set
			n++
			for _, t := range terms {
				if set[t] {
					df[t]++
				}
			}
		}
	}
	idf := func(t string) float64 {
		return math.Log(1 + (float64(n)-float64(df[t])+0.5)/(float64(df[t])+0.5))
	}
	total := 0.0
	for _, t := range terms {
		total += idf(t)
	}
	for p, cs := range pools {
		kept := cs[:0]
		for i, c := range cs {
			held := 0.0
			for _, t := range terms {
				if holds[p][i][t] {
					held += idf(t)
				}
			}
			if held == 0 || total == 0 {
				continue
			}
			c.score = roundSim(held / total)
			kept = append(kept, c)
		}
		sortCands(kept)
		pools[p] = kept
	}
	return pools[0], pools[1]
}
