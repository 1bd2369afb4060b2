package index

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cairnhq/cairn/vector"
)

// Vector groups, for Nearest.
const (
	// GroupSearchable holds the vectors of observations and summaries.
	GroupSearchable = groupSearchable
	// GroupInner holds those of thoughts and the knowledge graph.
	GroupInner = groupInner
)

// probeCount is how many lists an approximate search scans (tests probe
// them all, which must give the exact answer).
var probeCount = vector.DefaultProbe

// minParallel is the rows from which a scan uses every core.
const minParallel = 4096

type rowRange struct{ pi, lo, hi int }

// Nearest returns the k documents of a group most similar to q (dot
// product; vectors are unit length) among those f (when not nil) and
// allow (when not nil) accept, best first, ties by record id.
//
// A group holding at least the index's IVFThreshold live vectors, once
// its centroids are trained, is searched approximately: only the rows
// filed under the lists whose centroids are nearest q are scanned. Which
// rows those are depends only on the centroid set, never on how the rows
// are split into segments or whether they are still in the delta (rows
// not filed under the set are filed as the search needs), so every
// process and every history of flushes and merges gives the same answer
// until the centroids are trained again. When the lists hold fewer than k
// accepted rows, the search is exact.
func (v *View) Nearest(group int, q []float32, k int, f *Filter, allow func(uint32) bool) []vector.Hit {
	st := v.st
	if st.dim == 0 || len(q) != st.dim || k <= 0 {
		return nil
	}
	c := st.cents[group]
	if c != nil && v.liveVectors(group) < v.ivfFrom {
		c = nil
	}
	spans := func(probe []bool) []rowRange {
		var rs []rowRange
		for pi, p := range st.parts {
			ci := -1
			if f != nil {
				if f.parts[pi].none {
					continue
				}
				ci = f.parts[pi].ci
			}
			g := &p.groups[group]
			add := func(lo, hi int) { rs = append(rs, rowRange{pi, lo, hi}) }
			switch {
			case probe == nil:
				g.spans(ci, -1, add)
			case g.ranges != nil && g.centroids == c.name:
				for l, on := range probe {
					if on {
						g.spans(ci, l, add)
					}
				}
			default:
				lists := g.listsUnder(c, st.dim)
				for lo := 0; lo < len(lists); {
					if !probe[lists[lo]] {
						lo++
						continue
					}
					hi := lo + 1
					for hi < len(lists) && probe[lists[hi]] {
						hi++
					}
					add(lo, hi)
					lo = hi
				}
			}
		}
		return rs
	}
	if c != nil {
		probe := make([]bool, c.lists)
		for _, l := range vector.Probe(c.data, st.dim, q, probeCount(c.lists)) {
			probe[l] = true
		}
		if hits := v.scan(group, q, k, spans(probe), f, allow); len(hits) == k {
			return hits
		}
	}
	return v.scan(group, q, k, spans(nil), f, allow)
}

// liveVectors counts the live documents of a group with a vector.
func (v *View) liveVectors(group int) int {
	n := 0
	for kind, c := range v.st.counts {
		if groupOf(kind) == group {
			n += c.Vec
		}
	}
	return n
}

// scan keeps the k best rows of the ranges, spread over the cores.
func (v *View) scan(group int, q []float32, k int, rs []rowRange, f *Filter, allow func(uint32) bool) []vector.Hit {
	st := v.st
	dim := st.dim
	total := 0
	for _, r := range rs {
		g := &st.parts[r.pi].groups[group]
		if g.sec != nil {
			check(g.sec, r.lo*dim*4, (r.hi-r.lo)*dim*4)
			check(g.idsSec, r.lo*4, (r.hi-r.lo)*4)
		}
		total += r.hi - r.lo
	}
	// Split the ranges into about equal shares, one per worker.
	workers := 1
	if total >= minParallel {
		workers = runtime.GOMAXPROCS(0)
	}
	per := (total + workers - 1) / max(1, workers)
	shares := make([][]rowRange, workers)
	w, room := 0, per
	for _, r := range rs {
		for r.lo < r.hi {
			n := min(room, r.hi-r.lo)
			shares[w] = append(shares[w], rowRange{r.pi, r.lo, r.lo + n})
			r.lo += n
			if room -= n; room == 0 && w < workers-1 {
				w, room = w+1, per
			}
		}
	}
	tie := v.CompareIDs
	parts := make([][]vector.Hit, workers)
	var wg sync.WaitGroup
	var failed atomic.Pointer[corruption]
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					c, ok := r.(corruption)
					if !ok {
						panic(r)
					}
					failed.Store(&c)
				}
			}()
			top := vector.NewTopKTie(k, tie)
			for _, r := range shares[w] {
				p := st.parts[r.pi]
				g := &p.groups[group]
				for row := r.lo; row < r.hi; {
					c := g.chunks[row/g.chunkRows]
					end := min(r.hi, (row/g.chunkRows+1)*g.chunkRows)
					off := (row % g.chunkRows) * dim
					for ; row < end; row, off = row+1, off+dim {
						l := g.ids[row]
						if int(l) >= p.n || !p.alive(l) {
							continue
						}
						if f != nil && !f.allowIn(r.pi, p, l) {
							continue
						}
						doc := p.base + l
						if allow != nil && !allow(doc) {
							continue
						}
						top.Push(vector.Hit{ID: doc, Score: vector.Dot(q, c[off:off+dim])})
					}
				}
			}
			parts[w] = top.Raw()
		}()
	}
	wg.Wait()
	if c := failed.Load(); c != nil {
		panic(*c)
	}
	var all []vector.Hit
	for _, p := range parts {
		all = append(all, p...)
	}
	vector.SortHits(all, tie)
	if len(all) > k {
		all = all[:k]
	}
	return all
}

// Similarity is the dot product of q with doc's vector, and whether doc
// has one.
func (v *View) Similarity(q []float32, doc uint32) (float64, bool) {
	st := v.st
	p, l := v.loc(doc)
	e := p.vec[l]
	if e == vecNone || len(q) != st.dim {
		return 0, false
	}
	g, row := groupOfVec(e)
	return float64(vector.Dot(q, p.groups[g].row(row, st.dim))), true
}

// HasVector reports whether doc has a vector in the index's space.
func (v *View) HasVector(doc uint32) bool {
	p, l := v.loc(doc)
	return p.vec[l] != vecNone
}
