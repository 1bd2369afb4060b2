package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"

	"github.com/cairnhq/cairn/memory"
)

// encodeVector writes a vector as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector reads a vector written by encodeVector.
func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// PutEmbeddings implements memory.VectorStore.
func (db *DB) PutEmbeddings(ctx context.Context, es []memory.Embedding) error {
	_, err := db.putEmbeddings(ctx, es, false)
	return err
}

// FillEmbeddings implements memory.VectorStore.
func (db *DB) FillEmbeddings(ctx context.Context, es []memory.Embedding) (int, error) {
	return db.putEmbeddings(ctx, es, true)
}

// putEmbeddings stores vectors in one transaction: with fill, only those
// of records without one in the space whose text is still the embedded
// one. It returns how many it stored.
func (db *DB) putEmbeddings(ctx context.Context, es []memory.Embedding, fill bool) (int, error) {
	var n int
	err := db.write(ctx, "storing vectors", func(tx *sql.Tx) error {
		var err error
		n, err = putEmbeddingsTx(ctx, tx, es, fill)
		return err
	})
	return n, err
}

// putEmbeddingsTx stores vectors in tx (see putEmbeddings).
func putEmbeddingsTx(ctx context.Context, tx *sql.Tx, es []memory.Embedding, fill bool) (int, error) {
	conflict := "DO UPDATE SET vector = excluded.vector, created_at = excluded.created_at"
	if fill {
		conflict = "DO NOTHING"
	}
	n := 0
	ins, err := tx.PrepareContext(ctx, `INSERT INTO embeddings (kind, ref, provider, model, dim, vector) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (provider, model, dim, kind, ref) `+conflict)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	for _, e := range es {
		spec, ok := specOf(e.Kind)
		if !ok {
			return 0, memory.Errorf(memory.CodeInvalidParams, "unknown vector kind %q", e.Kind)
		}
		if len(e.Vector) != e.Space.Dim || e.Space.Dim <= 0 {
			return 0, memory.Errorf(memory.CodeInvalidParams, "vector of %s %s has %d dimensions; its space has %d", e.Kind, e.ID, len(e.Vector), e.Space.Dim)
		}
		for _, x := range e.Vector {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return 0, memory.Errorf(memory.CodeInvalidParams, "vector of %s %s holds NaN or Inf", e.Kind, e.ID)
			}
		}
		var text string
		err := tx.QueryRowContext(ctx, spec.textSQL(), e.ID).Scan(&text)
		if errors.Is(err, sql.ErrNoRows) {
			continue // deleted or forgotten meanwhile: its vector must not outlive it
		}
		if err != nil {
			return 0, err
		}
		if fill && e.Text != "" && text != e.Text {
			continue // rewritten meanwhile: it waits for a vector of its new text
		}
		res, err := ins.ExecContext(ctx, string(e.Kind), e.ID, e.Space.Provider, e.Space.Model, e.Space.Dim, encodeVector(e.Vector))
		if err != nil {
			return 0, err
		}
		if k, err := res.RowsAffected(); err == nil {
			n += int(k)
		}
	}
	return n, nil
}

// PendingEmbeddings implements memory.VectorStore. Ids of different kinds
// are ordered by kind, then id: after is "kind\x00id".
func (db *DB) PendingEmbeddings(ctx context.Context, space memory.Space, after string, limit int) ([]memory.EmbedJob, error) {
	var out []memory.EmbedJob
	afterKind, afterID := splitAfter(after)
	err := db.read(ctx, "listing pending vectors", func(tx queryer) error {
		started := afterKind == ""
		for _, spec := range kindSpecs {
			k := spec.kind
			if !started && k != afterKind {
				continue
			}
			from := ""
			if !started {
				from = afterID
			}
			started = true
			err := eachRowArgs(ctx, tx, spec.pendingSQL(), []any{from, space.Provider, space.Model, space.Dim, limit - len(out)}, func(s scanner) error {
				j := memory.EmbedJob{Kind: k}
				if err := s.Scan(&j.ID, &j.Content); err != nil {
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

func eachRowArgs(ctx context.Context, tx queryer, q string, args []any, fn func(scanner) error) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// DropEmbeddings implements memory.VectorStore.
func (db *DB) DropEmbeddings(ctx context.Context, keep memory.Space) (int, error) {
	var n int64
	err := db.write(ctx, "dropping vectors", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM embeddings WHERE NOT (provider = ? AND model = ? AND dim = ?)", keep.Provider, keep.Model, keep.Dim)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// VectorStats implements memory.VectorStore.
func (db *DB) VectorStats(ctx context.Context, space memory.Space) (memory.VectorStats, error) {
	var st memory.VectorStats
	err := db.read(ctx, "counting vectors", func(tx queryer) error {
		records := 0
		for _, spec := range kindSpecs {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+spec.table+" x WHERE "+spec.live).Scan(&n); err != nil {
				return err
			}
			records += n
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(provider = ? AND model = ? AND dim = ?), 0), coalesce(sum(NOT (provider = ? AND model = ? AND dim = ?)), 0)
			FROM embeddings`,
			space.Provider, space.Model, space.Dim, space.Provider, space.Model, space.Dim).Scan(&st.InSpace, &st.OtherSpaces); err != nil {
			return err
		}
		st.Pending = records - st.InSpace
		return nil
	})
	return st, err
}
