package vector

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/viterin/vek/vek32"
)

// Train picks lists centroids for the vectors row(0..n-1) of dimension
// dim by k-means (o.Iterations rounds, spherical: centroids normalised)
// on a sample of o.Sample of them chosen by o.Seed: the same vectors and
// options give the same centroids. It returns lists×dim floats (fewer
// lists when the sample is smaller).
func Train(n, dim int, row func(i int) []float32, o IVFOptions) []float32 {
	if n == 0 {
		return nil
	}
	if o.Lists <= 0 {
		o.Lists = max(1, int(math.Sqrt(float64(n))))
	}
	if o.Sample <= 0 {
		o.Sample = 64 * o.Lists
	}
	if o.Iterations <= 0 {
		o.Iterations = 10
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0xdeadbeef))
	sample := rng.Perm(n)[:min(o.Sample, n)]
	nl := min(o.Lists, len(sample))
	cent := make([]float32, nl*dim)
	for c := range nl {
		copy(cent[c*dim:], row(sample[c]))
	}
	assign := make([]int, len(sample))
	for range o.Iterations {
		parallelRange(len(sample), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				assign[i] = nearest(cent, dim, row(sample[i]))
			}
		})
		sums := make([]float32, nl*dim)
		counts := make([]int, nl)
		for i, r := range sample {
			c := assign[i]
			counts[c]++
			vek32.Add_Inplace(sums[c*dim:(c+1)*dim], row(r))
		}
		for c := range nl {
			if counts[c] == 0 {
				r := sample[rng.IntN(len(sample))] // re-seed an empty list
				copy(cent[c*dim:], row(r))
				continue
			}
			normalize(sums[c*dim : (c+1)*dim])
			copy(cent[c*dim:], sums[c*dim:(c+1)*dim])
		}
	}
	return cent
}

// Assign returns the list of v: the centroid with the highest dot
// product (the first on a tie).
func Assign(centroids []float32, dim int, v []float32) int { return nearest(centroids, dim, v) }

// AssignAll returns the list of each of n vectors, spread over the cores.
func AssignAll(centroids []float32, dim, n int, row func(i int) []float32) []int32 {
	out := make([]int32, n)
	parallelRange(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = int32(nearest(centroids, dim, row(i)))
		}
	})
	return out
}

// Probe returns the nprobe lists whose centroids are nearest q, best
// first (ties by list number).
func Probe(centroids []float32, dim int, q []float32, nprobe int) []int {
	nl := len(centroids) / max(1, dim)
	cs := make([]Hit, nl)
	for c := range nl {
		cs[c] = Hit{uint32(c), vek32.Dot(q, centroids[c*dim:(c+1)*dim])}
	}
	sortHits(cs)
	out := make([]int, min(nprobe, nl))
	for i := range out {
		out[i] = int(cs[i].ID)
	}
	return out
}

// Dot is the dot product of a and b (of one length).
func Dot(a, b []float32) float32 { return vek32.Dot(a, b) }

// TopK keeps the k best hits: highest score first, ties by lower id.
type TopK struct{ t *topK }

// NewTopK returns an empty TopK of k hits.
func NewTopK(k int) TopK { return TopK{newTopK(k)} }

// NewTopKTie returns an empty TopK of k hits whose ties in score go by
// tie(a, b) (negative: a first) instead of by id.
func NewTopKTie(k int, tie func(a, b uint32) int) TopK {
	t := newTopK(k)
	t.tie = tie
	return TopK{t}
}

// Push offers a hit.
func (t TopK) Push(h Hit) { t.t.push(h) }

// Hits returns the hits kept, best first.
func (t TopK) Hits() []Hit {
	out := append([]Hit(nil), t.t.hits...)
	sortHits(out)
	return out
}

// Raw returns the hits kept, in no order (to merge TopKs).
func (t TopK) Raw() []Hit { return t.t.hits }

// SortHits orders hits best first, ties by lower id (or by tie, when not
// nil).
func SortHits(h []Hit, tie func(a, b uint32) int) {
	if tie == nil {
		sortHits(h)
		return
	}
	slices.SortFunc(h, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return tie(a.ID, b.ID)
	})
}

// Parallel splits [0, n) over the cores when n is large enough to pay.
func Parallel(n int, fn func(lo, hi int)) { parallelRange(n, fn) }
