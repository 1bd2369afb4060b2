package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// intEmbedder gives each text a vector of small integers (unnormalised),
// so that every sum and product the writer makes of them is exact: the
// bytes it writes are the same on every machine.
type intEmbedder struct{ dim int }

func (e intEmbedder) Space() memory.Space {
	return memory.Space{Provider: "test", Model: "ints", Dim: e.dim}
}

func (e intEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		s := h.Sum64()
		v := make([]float32, e.dim)
		for j := range v {
			v[j] = float32(int(s%5) - 2)
			s = s/5 + uint64(j)*0x9e3779b97f4a7c15
		}
		out[i] = v
	}
	return out, nil
}

// intCentroids is a hand-made centroid set of small integers for group g.
func intCentroids(name string, g, lists, dim int) *centroids {
	data := make([]float32, lists*dim)
	for i := range data {
		data[i] = float32((i*7+g*3)%5 - 2)
	}
	return &centroids{name: name, group: g, lists: lists, data: data}
}

// writeLayoutCase writes three segments from a fixed history, as the
// index's three writers do: a build's (one delta, no centroids), a
// flush's (a delta that deleted documents of the first, filed under
// centroids) and a merge's (both, with their deletions; one filed under
// the centroids in use, the other assigned to them). It returns each
// file's bytes and what the manifest records of it.
func writeLayoutCase(t testing.TB, steps int) (names []string, files map[string][]byte, refs map[string]segRef) {
	t.Helper()
	ctx := context.Background()
	e := intEmbedder{dim: 8}
	space := e.Space()
	wv := testEmbedder.(embed.WordVectors)
	store := newFakeStore()
	h := newHistory(7, store, e)
	for range steps {
		h.step()
	}
	recs, _, err := store.ChangesSince(ctx, space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	half := len(recs) / 2
	stg := newMemStorage()
	refs = map[string]segRef{}
	var none [nGroups]*centroids
	cents := [nGroups]*centroids{intCentroids("cent0", 0, 3, space.Dim), intCentroids("cent1", 1, 2, space.Dim)}

	st := newState(space, nil, nil, none)
	st.putAll(recs[:half], wv)
	a, err := buildSegment(ctx, stg, "a", []*src{newSrc(st.delta)}, space, none, 0)
	if err != nil {
		t.Fatal(err)
	}
	refs["a"] = a
	fa, _ := stg.open("a", kindSegment)
	pa, err := openPart(fa, "a", space, nil)
	if err != nil {
		t.Fatal(err)
	}
	st = newState(space, nil, []*part{pa}, none)
	// The second half again, in reverse: records the first half holds
	// are replaced, gone ones deleted.
	rest := append([]memory.IndexRecord(nil), recs[half:]...)
	for i := range recs[:half] {
		if i%3 == 0 {
			rest = append(rest, recs[i])
		}
	}
	st.putAll(rest, wv)
	b, err := buildSegment(ctx, stg, "b", []*src{newSrc(st.delta)}, space, cents, 0)
	if err != nil {
		t.Fatal(err)
	}
	refs["b"] = b
	fb, _ := stg.open("b", kindSegment)
	pb, err := openPart(fb, "b", space, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := buildSegment(ctx, stg, "c", []*src{newSrc(pa), newSrc(pb)}, space, cents, 1)
	if err != nil {
		t.Fatal(err)
	}
	refs["c"] = c
	files = map[string][]byte{}
	for _, n := range []string{"a", "b", "c"} {
		files[n] = stg.files[n]
	}
	return []string{"a", "b", "c"}, files, refs
}

// TestSegmentBytesAreStable pins the segment format: segments written
// from a fixed history must be byte for byte what testdata/layout.golden
// records (their SHA-256, size, checksum and counts). A change to the
// writer that changes a byte shows here; a deliberate format change bumps
// Format and rewrites the golden file (go test -run Stable -update).
func TestSegmentBytesAreStable(t *testing.T) {
	names, files, refs := writeLayoutCase(t, 900)
	var b strings.Builder
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		r := refs[n]
		fmt.Fprintf(&b, "%s sha256=%s size=%d toc=%08x docs=%d level=%d vectors=%v\n", n, hex.EncodeToString(sum[:]), r.Size, r.TOC, r.Docs, r.Level, r.Vectors)
	}
	got := b.String()
	path := filepath.Join("testdata", "layout.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "segment bytes", string(want), got)
	for _, n := range names {
		if refs[n].Docs == 0 || refs[n].Vectors[0] == 0 || refs[n].Vectors[1] == 0 || refs[n].Vectors[2] == 0 {
			t.Fatalf("segment %s holds %+v: the case must write documents and vectors of every group", n, refs[n])
		}
	}
}
