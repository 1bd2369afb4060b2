package vector_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/embed/glove"
	"github.com/cairnhq/cairn/vector"
)

// BenchmarkFlat: exact top-10 over n random unit vectors of dimension d.
//
//	go test -run '^$' -bench Flat -benchtime 200x ./vector
func BenchmarkFlat(b *testing.B) {
	for _, c := range []struct{ n, d int }{{100_000, 100}, {100_000, 384}} {
		b.Run(fmt.Sprintf("n=%d/d=%d", c.n, c.d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			f := vector.NewFlat(c.d)
			for i := range c.n {
				f.Add(uint32(i), unit(rng, c.d))
			}
			qs := make([][]float32, 64)
			for i := range qs {
				qs[i] = unit(rng, c.d)
			}
			i := 0
			for b.Loop() {
				f.Search(qs[i%len(qs)], 10, nil)
				i++
			}
		})
	}
}

// BenchmarkIVF compares exact and approximate top-10 over a million
// sentence embeddings of generated agent memory, and reports the
// approximate index's recall@10 against exact.
//
//	go test -run '^$' -bench IVF -benchtime 100x -timeout 30m ./vector
func BenchmarkIVF(b *testing.B) {
	const n = 1_000_000
	vs := corpusVectors(b, n+200)
	f := vector.NewFlat(glove.Dim)
	for i, v := range vs[:n] {
		f.Add(uint32(i), v)
	}
	qs := vs[n:]
	x := vector.BuildIVF(f, vector.IVFOptions{Seed: 7})
	exact := make([][]vector.Hit, len(qs))
	for i, q := range qs {
		exact[i] = f.Search(q, 10, nil)
	}
	b.Run("exact", func(b *testing.B) {
		i := 0
		for b.Loop() {
			f.Search(qs[i%len(qs)], 10, nil)
			i++
		}
	})
	for _, probe := range []int{x.Lists() / 32, x.Lists() / 16, vector.DefaultProbe(x.Lists())} {
		b.Run(fmt.Sprintf("ivf/lists=%d/probe=%d", x.Lists(), probe), func(b *testing.B) {
			i := 0
			for b.Loop() {
				x.Search(qs[i%len(qs)], 10, probe, nil)
				i++
			}
			found := 0
			for i, q := range qs {
				got := x.Search(q, 10, probe, nil)
				for _, e := range exact[i] {
					if slices.ContainsFunc(got, func(h vector.Hit) bool { return h.ID == e.ID }) {
						found++
					}
				}
			}
			b.ReportMetric(float64(found)/float64(10*len(qs)), "recall@10")
		})
	}
}
