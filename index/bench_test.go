package index

import (
	"context"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// benchRecords is a fixed history of benchSteps changes, its records as
// the store lists them (vectors of 64 small integers).
var benchRecords = sync.OnceValues(func() ([]memory.IndexRecord, memory.Space) {
	e := intEmbedder{dim: 64}
	store := newFakeStore()
	h := newHistory(11, store, e)
	for range benchSteps {
		h.step()
	}
	recs, _, err := store.ChangesSince(context.Background(), e.Space(), 0, 0)
	if err != nil {
		panic(err)
	}
	return recs, e.Space()
})

const benchSteps = 30_000

// cpuPerOp reports, when the loop that follows is done, the process's
// CPU time per iteration (cpu-ns/op). Call it just before the loop.
func cpuPerOp(b *testing.B) func() {
	c0, ok := cpuTime()
	return func() {
		if c1, ok1 := cpuTime(); ok && ok1 && b.N > 0 {
			b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
		}
	}
}

// benchDelta is a state holding every record of benchRecords in its delta.
func benchDelta(b *testing.B) *state {
	recs, space := benchRecords()
	st := newState(space, nil, nil, [nGroups]*centroids{})
	st.putAll(recs, testEmbedder.(embed.WordVectors))
	return st
}

// BenchmarkPut applies the records to an empty state (what a build and a
// replay do per record).
func BenchmarkPut(b *testing.B) {
	recs, space := benchRecords()
	wv := testEmbedder.(embed.WordVectors)
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		st := newState(space, nil, nil, [nGroups]*centroids{})
		st.putAll(recs, wv)
	}
	b.ReportMetric(float64(len(recs)), "records/op")
}

// BenchmarkWriteSegment writes the delta of every record as a segment (a
// flush or a build's chunk).
func BenchmarkWriteSegment(b *testing.B) {
	st := benchDelta(b)
	ctx := context.Background()
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := buildSegment(ctx, newMemStorage(), "s", []*src{newSrc(st.delta)}, st.space, [nGroups]*centroids{}, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeSegments merges three segments, a third of whose
// documents are deleted, under centroids for both groups.
func BenchmarkMergeSegments(b *testing.B) {
	recs, space := benchRecords()
	wv := testEmbedder.(embed.WordVectors)
	ctx := context.Background()
	stg := newMemStorage()
	var parts []*part
	for i := range 3 {
		st := newState(space, nil, nil, [nGroups]*centroids{})
		st.putAll(recs[i*len(recs)/3:(i+1)*len(recs)/3], wv)
		name := string(rune('a' + i))
		if _, err := buildSegment(ctx, stg, name, []*src{newSrc(st.delta)}, space, [nGroups]*centroids{}, 0); err != nil {
			b.Fatal(err)
		}
		f, _ := stg.open(name, kindSegment)
		var dead []uint32
		for d := uint32(0); d < uint32(st.delta.n); d += 3 {
			dead = append(dead, d)
		}
		p, err := openPart(f, name, space, dead)
		if err != nil {
			b.Fatal(err)
		}
		parts = append(parts, p)
	}
	cents := [nGroups]*centroids{intCentroids("cent0", 0, 16, space.Dim), intCentroids("cent1", 1, 8, space.Dim)}
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		srcs := []*src{newSrc(parts[0]), newSrc(parts[1]), newSrc(parts[2])}
		if _, err := buildSegment(ctx, newMemStorage(), "m", srcs, space, cents, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenPart opens a segment of every record (what a process does
// for each segment at its first search), a tenth of its documents deleted.
func BenchmarkOpenPart(b *testing.B) {
	st := benchDelta(b)
	stg := newMemStorage()
	if _, err := buildSegment(context.Background(), stg, "s", []*src{newSrc(st.delta)}, st.space, [nGroups]*centroids{}, 0); err != nil {
		b.Fatal(err)
	}
	var dead []uint32
	for d := uint32(0); d < uint32(st.delta.n); d += 10 {
		dead = append(dead, d)
	}
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		f, err := stg.open("s", kindSegment)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := openPart(f, "s", st.space, dead); err != nil {
			b.Fatal(err)
		}
	}
}
