package vector

import (
	"cmp"
	"runtime"
	"slices"
	"sync"

	"github.com/viterin/vek/vek32"
)

// Hit is one neighbour.
type Hit struct {
	ID    uint32
	Score float32
}

// Flat holds vectors contiguously, by insertion, with the caller's ids. Ids
// index a slice, so they should be small and dense (document numbers). It
// is safe for concurrent use.
type Flat struct {
	mu  sync.RWMutex
	dim int
	// chunks hold the rows, chunkRows to a chunk: growing never copies
	// the vectors already held, nor needs room for them twice.
	chunks [][]float32
	ids    []uint32
	rows   []int32 // id → row + 1 (0: none)
	dead   []bool
	live   int
	// gen counts reorders; an IVF built on one generation is stale after.
	gen int
}

// NewFlat returns an empty set of vectors of dimension dim.
func NewFlat(dim int) *Flat { return &Flat{dim: dim} }

// chunkRows is the number of rows per chunk.
const chunkRows = 4096

// vec is row's vector. The caller holds a lock.
func (f *Flat) vec(row int) []float32 {
	c, i := row/chunkRows, (row%chunkRows)*f.dim
	return f.chunks[c][i : i+f.dim : i+f.dim]
}

// row is id's row. The caller holds a lock.
func (f *Flat) row(id uint32) (int, bool) {
	if int(id) >= len(f.rows) || f.rows[id] == 0 {
		return 0, false
	}
	return int(f.rows[id]) - 1, true
}

// Dim is the vectors' dimension.
func (f *Flat) Dim() int { return f.dim }

// Len is the number of live vectors.
func (f *Flat) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.live
}

// Add stores v under id (replacing an earlier vector of id). A vector of
// the wrong dimension is ignored and Add reports false.
func (f *Flat) Add(id uint32, v []float32) bool {
	if len(v) != f.dim {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if row, ok := f.row(id); ok {
		copy(f.vec(row), v)
		return true
	}
	if int(id) >= len(f.rows) {
		f.rows = slices.Grow(f.rows, int(id)+1-len(f.rows))[:int(id)+1]
	}
	f.rows[id] = int32(len(f.ids) + 1)
	if len(f.ids)%chunkRows == 0 {
		// The first chunk grows as a small set does; later ones are
		// made whole.
		rows := chunkRows
		if len(f.ids) == 0 {
			rows = 16
		}
		f.chunks = append(f.chunks, make([]float32, 0, rows*f.dim))
	}
	last := len(f.chunks) - 1
	f.chunks[last] = append(f.chunks[last], v...)
	f.ids = append(f.ids, id)
	f.dead = append(f.dead, false)
	f.live++
	return true
}

// Remove drops id's vector.
func (f *Flat) Remove(id uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if row, ok := f.row(id); ok {
		f.rows[id] = 0
		f.dead[row] = true
		f.live--
	}
}

// Has reports whether id has a vector.
func (f *Flat) Has(id uint32) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, ok := f.row(id)
	return ok
}

// Get returns a copy of id's vector, or nil. (Rows move when an IVF index
// is built, so a slice into them would not stay id's.)
func (f *Flat) Get(id uint32) []float32 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	row, ok := f.row(id)
	if !ok {
		return nil
	}
	return slices.Clone(f.vec(row))
}

// Score is the dot product of q with id's vector, and whether id has one.
func (f *Flat) Score(q []float32, id uint32) (float32, bool) {
	if len(q) != f.dim {
		return 0, false
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	row, ok := f.row(id)
	if !ok {
		return 0, false
	}
	return vek32.Dot(q, f.vec(row)), true
}

// permute reorders rows so that row i holds what row perm[i] held. The
// caller holds the write lock. Rows move in place, cycle by cycle, so a
// large set is not copied whole.
func (f *Flat) permute(perm []int) {
	ids := make([]uint32, len(f.ids))
	dead := make([]bool, len(f.dead))
	for i, old := range perm {
		ids[i], dead[i] = f.ids[old], f.dead[old]
		if !dead[i] {
			f.rows[ids[i]] = int32(i + 1)
		}
	}
	done := make([]bool, len(perm))
	tmp := make([]float32, f.dim)
	for start := range perm {
		if done[start] {
			continue
		}
		copy(tmp, f.vec(start))
		j := start
		for {
			done[j] = true
			k := perm[j]
			if k == start {
				copy(f.vec(j), tmp)
				break
			}
			copy(f.vec(j), f.vec(k))
			j = k
		}
	}
	f.ids, f.dead = ids, dead
	f.gen++
}

// minParallel is the row count from which a search uses every core.
const minParallel = 4096

// Search returns the k vectors with the highest dot product with q among
// those allow accepts (nil: all), best first, ties by id.
func (f *Flat) Search(q []float32, k int, allow func(uint32) bool) []Hit {
	if k <= 0 || len(q) != f.dim {
		return nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n := len(f.ids)
	workers := 1
	if n >= minParallel {
		workers = runtime.GOMAXPROCS(0)
	}
	parts := make([][]Hit, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[w] = f.scan(q, k, lo, hi, allow)
		}()
	}
	wg.Wait()
	var all []Hit
	for _, p := range parts {
		all = append(all, p...)
	}
	sortHits(all)
	if len(all) > k {
		all = all[:k]
	}
	return all
}

// scan keeps the k best of rows [lo, hi).
func (f *Flat) scan(q []float32, k, lo, hi int, allow func(uint32) bool) []Hit {
	top := newTopK(k)
	d := f.dim
	for row := lo; row < hi; {
		// The rows of one chunk, walked without indexing chunks per row.
		chunk := f.chunks[row/chunkRows]
		end := min(hi, (row/chunkRows+1)*chunkRows)
		off := (row % chunkRows) * d
		for ; row < end; row, off = row+1, off+d {
			if f.dead[row] {
				continue
			}
			id := f.ids[row]
			if allow != nil && !allow(id) {
				continue
			}
			top.push(Hit{id, vek32.Dot(q, chunk[off:off+d])})
		}
	}
	return top.hits
}

func sortHits(h []Hit) {
	slices.SortFunc(h, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// topK keeps the k best hits in a min-heap on score.
type topK struct {
	k    int
	hits []Hit
	// tie orders hits of equal score (nil: by id).
	tie func(a, b uint32) int
}

func newTopK(k int) *topK { return &topK{k: k, hits: make([]Hit, 0, k)} }

// less reports whether a ranks below b (lower score, or equal score and
// after b by the tie rule).
func (t *topK) less(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	if t.tie != nil {
		return t.tie(a.ID, b.ID) > 0
	}
	return a.ID > b.ID
}

func (t *topK) push(h Hit) {
	if len(t.hits) < t.k {
		t.hits = append(t.hits, h)
		for i := len(t.hits) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.less(t.hits[i], t.hits[p]) {
				break
			}
			t.hits[i], t.hits[p] = t.hits[p], t.hits[i]
			i = p
		}
		return
	}
	if !t.less(t.hits[0], h) {
		return
	}
	t.hits[0] = h
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.hits) && t.less(t.hits[l], t.hits[m]) {
			m = l
		}
		if r < len(t.hits) && t.less(t.hits[r], t.hits[m]) {
			m = r
		}
		if m == i {
			return
		}
		t.hits[i], t.hits[m] = t.hits[m], t.hits[i]
		i = m
	}
}
