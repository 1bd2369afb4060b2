package postgres

import (
	"container/heap"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"github.com/jackc/pgx/v5"
)

// This file is semantic search done by the database: the nearest
// observations to a vector, by cosine similarity, within a scope. With
// pgvector it is an HNSW index per vector space (approximate); with
// arrays, an exact scan in cairn. cairn's hybrid retrieval does not use
// it: each server's retrieval index searches its own copy of the vectors
// (exactly, and faster; docs/postgres.md has the measurements). It is here
// to keep that choice measured (cairn bench scale --postgres) and for
// operators who query the vectors themselves.

// VectorHit is an observation and its cosine similarity to the query.
type VectorHit struct {
	ID         string
	Similarity float64
}

// indexName is the HNSW index of a space.
func indexName(space memory.Space) string {
	h := fnv.New32a()
	h.Write([]byte(space.String()))
	return fmt.Sprintf("embeddings_hnsw_%08x", h.Sum32())
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// spaceCondition is the SQL condition selecting a space's rows, with
// literals, so the planner matches it to the space's partial index.
func spaceCondition(space memory.Space) string {
	return fmt.Sprintf("e.provider = %s AND e.model = %s AND e.dim = %d", sqlString(space.Provider), sqlString(space.Model), space.Dim)
}

// EnsureVectorIndex builds the HNSW index of a space's observation vectors
// (cosine distance) when the store keeps vectors with pgvector and the
// index does not exist yet; with arrays it does nothing. Building reads
// every vector of the space: minutes at a million.
func (db *DB) EnsureVectorIndex(ctx context.Context, space memory.Space) error {
	if db.vectors != vectorsPGVector {
		return nil
	}
	if space.Dim <= 0 || space.Dim > 2000 {
		return memory.Errorf(memory.CodeInvalidParams, "an HNSW index takes vectors of 1 to 2000 dimensions, not %d", space.Dim)
	}
	q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON embeddings USING hnsw ((vec::vector(%d)) vector_cosine_ops)
		WHERE provider = %s AND model = %s AND dim = %d AND kind = 'observation'`,
		indexName(space), space.Dim, sqlString(space.Provider), sqlString(space.Model), space.Dim)
	return db.write(ctx, "building the vector index", func(tx pgx.Tx) error {
		// Building reads every vector of the space: minutes at a million,
		// past any statement timeout meant for requests.
		if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, q)
		return err
	})
}

// NearestObservations returns the k unforgotten observations inside scope
// whose vectors in space are most similar to query, most similar first
// (ties by id). With pgvector it searches the space's HNSW index
// (approximate; EnsureVectorIndex builds it), otherwise it compares every
// vector in scope.
func (db *DB) NearestObservations(ctx context.Context, space memory.Space, query []float32, k int, scope memory.Scope) ([]VectorHit, error) {
	if len(query) != space.Dim || k <= 0 {
		return nil, memory.Errorf(memory.CodeInvalidParams, "a query of %d dimensions in a space of %d, for %d hits", len(query), space.Dim, k)
	}
	var out []VectorHit
	err := db.read(ctx, "searching vectors", func(tx pgx.Tx) error {
		var err error
		if db.vectors == vectorsPGVector {
			out, err = db.nearestHNSW(ctx, tx, space, query, k, scope)
		} else {
			out, err = nearestExact(ctx, tx, space, query, k, scope)
		}
		return err
	})
	return out, err
}

func (db *DB) nearestHNSW(ctx context.Context, tx pgx.Tx, space memory.Space, query []float32, k int, scope memory.Scope) ([]VectorHit, error) {
	// A scoped search filters the index's candidates; the iterative scan
	// keeps reading the graph until k of them pass.
	if _, err := tx.Exec(ctx, "SET LOCAL hnsw.iterative_scan = relaxed_order"); err != nil {
		return nil, err
	}
	q := newQuery("")
	dist := fmt.Sprintf("e.vec::vector(%d) <=> ", space.Dim) + q.arg(db.vectors.vecArg(query)) + fmt.Sprintf("::vector(%d)", space.Dim)
	q.add("SELECT x.id, 1 - (" + dist + ") AS sim FROM embeddings e JOIN observations x ON x.id = e.ref WHERE " + spaceCondition(space) +
		" AND e.kind = 'observation' AND NOT x.redacted")
	q.scope("x", scope)
	q.add(" ORDER BY " + dist + " LIMIT " + q.arg(k))
	var out []VectorHit
	err := sqlstore.EachRow(ctx, querier{tx}, q.sql.String(), q.args, func(s sqlstore.Scanner) error {
		var h VectorHit
		err := s.Scan(&h.ID, &h.Similarity)
		out = append(out, h)
		return err
	})
	return out, err
}

// hitHeap keeps the k best hits, worst on top.
type hitHeap []VectorHit

func (h hitHeap) Len() int { return len(h) }
func (h hitHeap) Less(i, j int) bool {
	if h[i].Similarity != h[j].Similarity {
		return h[i].Similarity < h[j].Similarity
	}
	return h[i].ID > h[j].ID
}
func (h hitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)   { *h = append(*h, x.(VectorHit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func nearestExact(ctx context.Context, tx pgx.Tx, space memory.Space, query []float32, k int, scope memory.Scope) ([]VectorHit, error) {
	var qn float64
	for _, x := range query {
		qn += float64(x) * float64(x)
	}
	qn = math.Sqrt(qn)
	q := newQuery("SELECT x.id, e.vec FROM embeddings e JOIN observations x ON x.id = e.ref WHERE " + spaceCondition(space) +
		" AND e.kind = 'observation' AND NOT x.redacted")
	q.scope("x", scope)
	h := &hitHeap{}
	err := sqlstore.EachRow(ctx, querier{tx}, q.sql.String(), q.args, func(s sqlstore.Scanner) error {
		var id string
		var v []float32
		if err := s.Scan(&id, &v); err != nil {
			return err
		}
		var dot, vn float64
		for i, x := range v {
			dot += float64(x) * float64(query[i])
			vn += float64(x) * float64(x)
		}
		sim := 0.0
		if vn > 0 && qn > 0 {
			sim = dot / (math.Sqrt(vn) * qn)
		}
		hit := VectorHit{ID: id, Similarity: sim}
		if h.Len() < k {
			heap.Push(h, hit)
		} else if (*h)[0].Similarity < sim || (*h)[0].Similarity == sim && (*h)[0].ID > id {
			(*h)[0] = hit
			heap.Fix(h, 0)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]VectorHit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(VectorHit)
	}
	return out, nil
}

// DropSchema deletes the cairn schema a connection string names
// (cairn_schema, default cairn) with everything in it: benchmarks and
// tests clean up with it. A schema that holds no cairn meta table is
// refused and left alone.
func DropSchema(ctx context.Context, conn string) error {
	db, err := Open(ctx, conn, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.pool.Exec(ctx, "DROP SCHEMA "+db.schema+" CASCADE")
	return dbError(err, "dropping schema "+db.schema)
}
