package retrieve

import (
	"sync"
	"sync/atomic"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/vector"
)

// IVFThreshold is the number of vectors from which semantic search builds
// an approximate (IVF) index in the background and uses it once built;
// below it, search is exact.
const IVFThreshold = 250_000

// vectorSet holds the documents' embeddings in the active space: a
// record's vector of any other space never enters it, so no similarity
// mixes spaces.
type vectorSet struct {
	space memory.Space
	flat  *vector.Flat

	ivf      atomic.Pointer[vector.IVF]
	building atomic.Bool
	wg       sync.WaitGroup
}

func newVectorSet(space memory.Space) *vectorSet {
	v := &vectorSet{space: space}
	if space.Dim > 0 {
		v.flat = vector.NewFlat(space.Dim)
	}
	return v
}

// add stores doc's vector and reports whether it was kept (a vector of
// another dimension is not).
func (v *vectorSet) add(doc uint32, vec []float32) bool {
	return v.flat != nil && v.flat.Add(doc, vec)
}

func (v *vectorSet) remove(doc uint32) {
	if v.flat != nil {
		v.flat.Remove(doc)
	}
}

// maybeBuild starts a background IVF build when the space has grown past
// the threshold, or doubled since the last build.
func (v *vectorSet) maybeBuild() {
	if v.flat == nil {
		return
	}
	n := v.flat.Len()
	cur := v.ivf.Load()
	if n < IVFThreshold || (cur != nil && n < 2*cur.Size()) || !v.building.CompareAndSwap(false, true) {
		return
	}
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		defer v.building.Store(false)
		v.ivf.Store(vector.BuildIVF(v.flat, vector.IVFOptions{Seed: 1}))
	}()
}

// nearest returns the k documents most similar to q among those allow
// accepts: through the IVF index when one is built and it finds k, else
// exactly.
func (v *vectorSet) nearest(q []float32, k int, allow func(uint32) bool) []vector.Hit {
	if v.flat == nil || q == nil {
		return nil
	}
	if x := v.ivf.Load(); x != nil {
		if hits := x.Search(q, k, vector.DefaultProbe(x.Lists()), allow); len(hits) == k {
			return hits
		}
	}
	return v.flat.Search(q, k, allow)
}

// similarity is the cosine of q with doc's vector, and whether doc has one.
func (v *vectorSet) similarity(q []float32, doc uint32) (float64, bool) {
	if v.flat == nil || q == nil {
		return 0, false
	}
	s, ok := v.flat.Score(q, doc)
	return float64(s), ok
}
