package postgres_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
)

// The database's own semantic search, both ways it can run: pgvector's
// HNSW index, and the exact scan over arrays. Both return the observations
// in scope nearest to the query, most similar first, forgotten ones never.
func TestNearestObservations(t *testing.T) {
	space := memory.Space{Provider: "test", Model: "random", Dim: 16}
	for _, vectors := range []string{"pgvector", "array"} {
		t.Run(vectors, func(t *testing.T) {
			db := open(t, storeURL(t, vectors))
			defer db.Close()
			r := rand.New(rand.NewPCG(3, 3))
			vecs := map[string][]float32{}
			var batch []memory.NewObservation
			var embs []memory.Embedding
			for i := range 300 {
				id := fmt.Sprintf("o%03d", i)
				batch = append(batch, note(id, "text "+id, memory.Scope{RepoID: fmt.Sprintf("r%d", i%3)}))
				v := make([]float32, space.Dim)
				for j := range v {
					v[j] = float32(r.NormFloat64())
				}
				vecs[id] = v
				embs = append(embs, memory.Embedding{Kind: memory.VectorObservation, ID: id, Space: space, Vector: v})
			}
			if _, err := db.AppendObservations(ctx, batch); err != nil {
				t.Fatal(err)
			}
			if err := db.PutEmbeddings(ctx, embs); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Redact(ctx, "o003"); err != nil {
				t.Fatal(err)
			}
			if err := db.EnsureVectorIndex(ctx, space); err != nil {
				t.Fatal(err)
			}
			for qi := range 20 {
				q := vecs[fmt.Sprintf("o%03d", qi*7)]
				scope := memory.Scope{}
				if qi%2 == 1 {
					scope.RepoID = "r1"
				}
				got, err := db.NearestObservations(ctx, space, q, 10, scope)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteForce(vecs, q, 10, func(id string) bool {
					var n int
					fmt.Sscanf(id, "o%d", &n)
					return id != "o003" && (scope.RepoID == "" || fmt.Sprintf("r%d", n%3) == scope.RepoID)
				})
				if len(got) != 10 {
					t.Fatalf("query %d: %d hits", qi, len(got))
				}
				same := 0
				for i, h := range got {
					if i > 0 && h.Similarity > got[i-1].Similarity+1e-6 {
						t.Fatalf("query %d: hits out of order: %v", qi, got)
					}
					if slices.Contains(want, h.ID) {
						same++
					}
					if h.ID == "o003" {
						t.Fatalf("query %d: a forgotten observation was found", qi)
					}
				}
				exact := vectors == "array"
				if exact && same != 10 || same < 9 {
					t.Fatalf("query %d (%s): %d of the 10 nearest found: %v, want %v", qi, vectors, same, got, want)
				}
			}
		})
	}
}

func bruteForce(vecs map[string][]float32, q []float32, k int, ok func(string) bool) []string {
	type hit struct {
		id  string
		sim float64
	}
	var hs []hit
	for id, v := range vecs {
		if !ok(id) {
			continue
		}
		var dot, a, b float64
		for i := range v {
			dot += float64(v[i]) * float64(q[i])
			a += float64(v[i]) * float64(v[i])
			b += float64(q[i]) * float64(q[i])
		}
		hs = append(hs, hit{id, dot / math.Sqrt(a*b)})
	}
	slices.SortFunc(hs, func(x, y hit) int {
		if x.sim != y.sim {
			if x.sim > y.sim {
				return -1
			}
			return 1
		}
		return strings.Compare(x.id, y.id)
	})
	var out []string
	for _, h := range hs[:k] {
		out = append(out, h.id)
	}
	return out
}

func TestDropSchema(t *testing.T) {
	url := storeURL(t, "array")
	db := open(t, url)
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{note("o1", "x", memory.Scope{})}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := postgres.DropSchema(ctx, url); err != nil {
		t.Fatal(err)
	}
	db = open(t, url)
	defer db.Close()
	if st, err := db.Stats(ctx); err != nil || st.Observations != 0 {
		t.Fatalf("after dropping the schema: %+v %v", st, err)
	}
}
