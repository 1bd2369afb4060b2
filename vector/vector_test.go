package vector_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/embed/glove"
	"github.com/cairnhq/cairn/internal/corpus"
	"github.com/cairnhq/cairn/vector"
)

func unit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func naive(vs map[uint32][]float32, q []float32, k int, allow func(uint32) bool) []vector.Hit {
	var all []vector.Hit
	for id, v := range vs {
		if allow != nil && !allow(id) {
			continue
		}
		var s float32
		for i := range v {
			s += v[i] * q[i]
		}
		all = append(all, vector.Hit{ID: id, Score: s})
	}
	slices.SortFunc(all, func(a, b vector.Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(a.ID) - int(b.ID)
	})
	return all[:min(k, len(all))]
}

func TestFlatIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	f := vector.NewFlat(48)
	vs := map[uint32][]float32{}
	for id := range uint32(9000) { // above the parallel threshold
		v := unit(rng, 48)
		f.Add(id, v)
		vs[id] = v
	}
	if f.Add(99999, make([]float32, 47)) {
		t.Fatal("a vector of the wrong dimension was accepted")
	}
	for _, id := range []uint32{5, 77, 4000} {
		f.Remove(id)
		delete(vs, id)
	}
	repl := unit(rng, 48)
	f.Add(10, repl)
	vs[10] = repl
	odd := func(id uint32) bool { return id%2 == 1 }
	for range 20 {
		q := unit(rng, 48)
		for _, allow := range []func(uint32) bool{nil, odd} {
			got, want := f.Search(q, 10, allow), naive(vs, q, 10, allow)
			if len(got) != len(want) {
				t.Fatalf("%d hits; want %d", len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || math.Abs(float64(got[i].Score-want[i].Score)) > 1e-5 {
					t.Fatalf("hit %d: %+v; want %+v", i, got[i], want[i])
				}
			}
		}
	}
	if f.Len() != 8997 {
		t.Fatalf("Len %d", f.Len())
	}
	if s, ok := f.Score(repl, 10); !ok || math.Abs(float64(s)-1) > 1e-5 {
		t.Fatalf("Score of a vector with itself: %v %v", s, ok)
	}
}

// corpusVectors embeds n generated agent-memory records with the built-in
// embedder: realistic vectors, with the clusters real text has.
func corpusVectors(tb testing.TB, n int) [][]float32 {
	tb.Helper()
	gv, err := glove.Load()
	if err != nil {
		tb.Fatal(err)
	}
	obs := corpus.New(3).Observations(n)
	out := make([][]float32, n)
	var wg sync.WaitGroup
	w := runtime.GOMAXPROCS(0)
	for p := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < n; i += w {
				out[i] = gv.Embed(obs[i].Content)
			}
		}()
	}
	wg.Wait()
	return out
}

// TestIVFRecall measures the approximate index against exact search on
// realistic vectors: recall@10 must reach 0.95.
func TestIVFRecall(t *testing.T) {
	vs := corpusVectors(t, 40_000)
	f := vector.NewFlat(glove.Dim)
	for i, v := range vs {
		f.Add(uint32(i), v)
	}
	x := vector.BuildIVF(f, vector.IVFOptions{Seed: 7})
	queries := corpusVectors(t, 40_200)[40_000:] // records the index has not seen
	found, total := 0, 0
	for _, q := range queries {
		exact := f.Search(q, 10, nil)
		approx := x.Search(q, 10, IVFProbe(x.Lists()), nil)
		for _, e := range exact {
			total++
			if slices.ContainsFunc(approx, func(h vector.Hit) bool { return h.ID == e.ID }) {
				found++
			}
		}
	}
	recall := float64(found) / float64(total)
	t.Logf("IVF over %d vectors, %d lists, probing %d: recall@10 %.3f", len(vs), x.Lists(), IVFProbe(x.Lists()), recall)
	if recall < 0.95 {
		t.Fatalf("recall@10 %.3f; want ≥ 0.95", recall)
	}
}

// IVFProbe is the probe count the benchmarks and the recall test use.
func IVFProbe(lists int) int { return vector.DefaultProbe(lists) }

// TestIVFBuildKeepsEveryVector: building the index reorders the rows in
// place; every id must still find its own vector, removed ids none, and
// exact search must answer as before.
func TestIVFBuildKeepsEveryVector(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	f := vector.NewFlat(16)
	vs := map[uint32][]float32{}
	for id := range uint32(5000) {
		v := unit(rng, 16)
		f.Add(id*2, v) // sparse ids
		vs[id*2] = v
	}
	for id := uint32(0); id < 10000; id += 14 {
		f.Remove(id)
		delete(vs, id)
	}
	q := unit(rng, 16)
	before := f.Search(q, 20, nil)
	vector.BuildIVF(f, vector.IVFOptions{Seed: 1, Lists: 40})
	for id := range uint32(10000) {
		got := f.Get(id)
		if want, ok := vs[id]; !ok && got != nil || ok && !slices.Equal(got, want) {
			t.Fatalf("id %d after the build: %v; want %v", id, got, want)
		}
	}
	if f.Len() != len(vs) {
		t.Fatalf("Len %d; want %d", f.Len(), len(vs))
	}
	if after := f.Search(q, 20, nil); !slices.Equal(after, before) {
		t.Fatalf("exact search changed with the build:\n%v\n%v", after, before)
	}
}

// TestReadsDuringAnIVFBuild: Get, Has and Score while a build reorders the
// rows in place (run with -race) always see the id's own vector, and a
// vector Get returned before the build stays what it was.
func TestReadsDuringAnIVFBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	f := vector.NewFlat(16)
	vs := make([][]float32, 20000)
	for id := range vs {
		vs[id] = unit(rng, 16)
		f.Add(uint32(id), vs[id])
	}
	held := f.Get(5)
	done := make(chan struct{})
	go func() {
		defer close(done)
		vector.BuildIVF(f, vector.IVFOptions{Seed: 1})
	}()
	defer func() {
		if !slices.Equal(held, vs[5]) {
			t.Fatalf("a vector Get returned before the build changed with it: %v; want %v", held, vs[5])
		}
	}()
	for i := 0; ; i++ {
		id := uint32(i % len(vs))
		if got := f.Get(id); !slices.Equal(got, vs[id]) || !f.Has(id) {
			t.Fatalf("id %d during the build: %v; want %v", id, got, vs[id])
		}
		if s, ok := f.Score(vs[id], id); !ok || math.Abs(float64(s)-1) > 1e-4 {
			t.Fatalf("id %d: self-similarity %v %v during the build", id, s, ok)
		}
		select {
		case <-done:
			return
		default:
		}
	}
}
