package sqlstore

import (
	"context"
	"math"

	"github.com/cairnhq/cairn/memory"
)

// PutEmbeddings implements memory.VectorStore.
func (s *Store) PutEmbeddings(ctx context.Context, es []memory.Embedding) error {
	_, err := s.putEmbeddings(ctx, es, false)
	return err
}

// FillEmbeddings implements memory.VectorStore.
func (s *Store) FillEmbeddings(ctx context.Context, es []memory.Embedding) (int, error) {
	return s.putEmbeddings(ctx, es, true)
}

// putEmbeddings stores vectors in one transaction: with fill, only those
// of records without one in the space whose text is still the embedded
// one. It returns how many it stored.
func (s *Store) putEmbeddings(ctx context.Context, es []memory.Embedding, fill bool) (int, error) {
	if err := checkEmbeddings(es); err != nil {
		return 0, err
	}
	var n int
	err := s.b.Write(ctx, "storing vectors", func(q Querier) error {
		var err error
		n, err = s.b.PutEmbeddings(ctx, q, es, fill)
		return err
	})
	return n, err
}

// checkEmbeddings refuses vectors of unknown kinds, of the wrong length,
// or holding NaN or Inf.
func checkEmbeddings(es []memory.Embedding) error {
	for _, e := range es {
		if _, ok := KindOf(e.Kind); !ok {
			return memory.Errorf(memory.CodeInvalidParams, "unknown vector kind %q", e.Kind)
		}
		if len(e.Vector) != e.Space.Dim || e.Space.Dim <= 0 {
			return memory.Errorf(memory.CodeInvalidParams, "vector of %s %s has %d dimensions; its space has %d", e.Kind, e.ID, len(e.Vector), e.Space.Dim)
		}
		for _, x := range e.Vector {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return memory.Errorf(memory.CodeInvalidParams, "vector of %s %s holds NaN or Inf", e.Kind, e.ID)
			}
		}
	}
	return nil
}

// PendingEmbeddings implements memory.VectorStore. Ids of different kinds
// are ordered by kind, then id: after is "kind\x00id".
func (s *Store) PendingEmbeddings(ctx context.Context, space memory.Space, after string, limit int) ([]memory.EmbedJob, error) {
	var out []memory.EmbedJob
	afterKind, afterID := splitAfter(after)
	err := s.b.Read(ctx, "listing pending vectors", func(q Querier) error {
		out = nil
		started := afterKind == ""
		for _, k := range Kinds {
			if !started && k.Kind != afterKind {
				continue
			}
			from := ""
			if !started {
				from = afterID
			}
			started = true
			err := EachRow(ctx, q, k.pendingSQL(s.d), []any{from, space.Provider, space.Model, space.Dim, limit - len(out)}, func(sc Scanner) error {
				j := memory.EmbedJob{Kind: k.Kind}
				if err := sc.Scan(&j.ID, &j.Content); err != nil {
					return err
				}
				out = append(out, j)
				return nil
			})
			if err != nil || len(out) >= limit {
				return err
			}
		}
		return nil
	})
	return out, err
}

func splitAfter(after string) (memory.VectorKind, string) {
	for i := 0; i < len(after); i++ {
		if after[i] == 0 {
			return memory.VectorKind(after[:i]), after[i+1:]
		}
	}
	return "", ""
}

// DropEmbeddings implements memory.VectorStore.
func (s *Store) DropEmbeddings(ctx context.Context, keep memory.Space) (int, error) {
	var n int64
	err := s.b.Write(ctx, "dropping vectors", func(q Querier) error {
		var err error
		n, err = q.Exec(ctx, "DELETE FROM embeddings WHERE NOT (provider = ? AND model = ? AND dim = ?)", keep.Provider, keep.Model, keep.Dim)
		return err
	})
	return int(n), err
}

// VectorStats implements memory.VectorStore.
func (s *Store) VectorStats(ctx context.Context, space memory.Space) (memory.VectorStats, error) {
	var st memory.VectorStats
	err := s.b.Read(ctx, "counting vectors", func(q Querier) error {
		records := 0
		for _, k := range Kinds {
			var n int
			if err := q.QueryRow(ctx, "SELECT count(*) FROM "+k.Table+" x WHERE "+k.Live).Scan(&n); err != nil {
				return err
			}
			records += n
		}
		if err := q.QueryRow(ctx, `SELECT count(*) FILTER (WHERE provider = ?1 AND model = ?2 AND dim = ?3),
			count(*) FILTER (WHERE NOT (provider = ?1 AND model = ?2 AND dim = ?3)) FROM embeddings`,
			space.Provider, space.Model, space.Dim).Scan(&st.InSpace, &st.OtherSpaces); err != nil {
			return err
		}
		st.Pending = records - st.InSpace
		return nil
	})
	return st, err
}
