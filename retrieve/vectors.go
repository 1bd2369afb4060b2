package retrieve

import (
	"cmp"
	"slices"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// vectorSet holds the documents' embeddings in the active space: a
// record's vector of any other space never enters it, so no similarity
// mixes spaces.
type vectorSet struct {
	space memory.Space
	vecs  map[uint32][]float32
}

func newVectorSet() *vectorSet { return &vectorSet{vecs: map[uint32][]float32{}} }

func (v *vectorSet) remove(doc uint32) { delete(v.vecs, doc) }

type docSim struct {
	doc uint32
	sim float64
}

// similarities returns the cosine similarity to q of every allowed document
// with a vector, best first (ties by document), and how many allowed
// documents have none in the active space (pending, or embedded in
// another space only). Callers hold the index's read lock.
func (x *Index) similarities(q []float32, allow func(uint32) bool) ([]docSim, int) {
	if q == nil {
		return nil, 0
	}
	var out []docSim
	for doc, v := range x.vectors.vecs {
		if allow(doc) {
			out = append(out, docSim{doc, float64(embed.Cosine(q, v))})
		}
	}
	slices.SortFunc(out, func(a, b docSim) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	missing := 0
	for doc := range x.docs {
		if allow(uint32(doc)) {
			if _, ok := x.vectors.vecs[uint32(doc)]; !ok {
				missing++
			}
		}
	}
	return out, missing
}
