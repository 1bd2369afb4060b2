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

// recordSQL selects the searchable text of a record kind (redacted
// observations excluded), by id.
var recordSQL = map[memory.VectorKind]string{
	memory.VectorObservation: "SELECT content FROM observations WHERE id = ? AND redacted = 0",
	memory.VectorSummary:     "SELECT content FROM summaries WHERE id = ?",
}

// pendingSQL lists a kind's records without a vector in a space.
var pendingSQL = map[memory.VectorKind]string{
	memory.VectorObservation: `SELECT o.id, o.content FROM observations o WHERE o.redacted = 0 AND o.id > ?
		AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.provider = ? AND e.model = ? AND e.dim = ? AND e.kind = 'observation' AND e.ref = o.id)
		ORDER BY o.id LIMIT ?`,
	memory.VectorSummary: `SELECT s.id, s.content FROM summaries s WHERE s.id > ?
		AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.provider = ? AND e.model = ? AND e.dim = ? AND e.kind = 'summary' AND e.ref = s.id)
		ORDER BY s.id LIMIT ?`,
}

// vectorKinds lists the embedded kinds in the order pending work is done.
var vectorKinds = []memory.VectorKind{memory.VectorObservation, memory.VectorSummary}

// PutEmbeddings implements memory.VectorStore.
func (db *DB) PutEmbeddings(ctx context.Context, es []memory.Embedding) error {
	return db.write(ctx, "storing vectors", func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO embeddings (kind, ref, provider, model, dim, vector) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (provider, model, dim, kind, ref) DO UPDATE SET vector = excluded.vector, created_at = excluded.created_at`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, e := range es {
			q, ok := recordSQL[e.Kind]
			if !ok {
				return memory.Errorf(memory.CodeInvalidParams, "unknown vector kind %q", e.Kind)
			}
			if len(e.Vector) != e.Space.Dim || e.Space.Dim <= 0 {
				return memory.Errorf(memory.CodeInvalidParams, "vector of %s %s has %d dimensions; its space has %d", e.Kind, e.ID, len(e.Vector), e.Space.Dim)
			}
			var text string
			err := tx.QueryRowContext(ctx, q, e.ID).Scan(&text)
			if errors.Is(err, sql.ErrNoRows) {
				continue // deleted or forgotten meanwhile: its vector must not outlive it
			}
			if err != nil {
				return err
			}
			if _, err := ins.ExecContext(ctx, string(e.Kind), e.ID, e.Space.Provider, e.Space.Model, e.Space.Dim, encodeVector(e.Vector)); err != nil {
				return err
			}
		}
		return nil
	})
}

// PendingEmbeddings implements memory.VectorStore. Ids of different kinds
// are ordered by kind, then id: after is "kind\x00id".
func (db *DB) PendingEmbeddings(ctx context.Context, space memory.Space, after string, limit int) ([]memory.EmbedJob, error) {
	var out []memory.EmbedJob
	afterKind, afterID := splitAfter(after)
	err := db.read(ctx, "listing pending vectors", func(tx queryer) error {
		started := afterKind == ""
		for _, k := range vectorKinds {
			if !started && k != afterKind {
				continue
			}
			from := ""
			if !started {
				from = afterID
			}
			started = true
			err := eachRowArgs(ctx, tx, pendingSQL[k], []any{from, space.Provider, space.Model, space.Dim, limit - len(out)}, func(s scanner) error {
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
		var records int
		if err := tx.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM observations WHERE redacted = 0) + (SELECT count(*) FROM summaries)").Scan(&records); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(provider = ? AND model = ? AND dim = ?), 0), coalesce(sum(NOT (provider = ? AND model = ? AND dim = ?)), 0)
			FROM embeddings WHERE kind IN ('observation', 'summary')`,
			space.Provider, space.Model, space.Dim, space.Provider, space.Model, space.Dim).Scan(&st.InSpace, &st.OtherSpaces); err != nil {
			return err
		}
		st.Pending = records - st.InSpace
		return nil
	})
	return st, err
}

// vectorFor reads a record's vector in space (nil when it has none).
func vectorFor(ctx context.Context, q queryer, space memory.Space, kind memory.VectorKind, id string) ([]float32, error) {
	if space.IsZero() {
		return nil, nil
	}
	var b []byte
	err := q.QueryRowContext(ctx, "SELECT vector FROM embeddings WHERE provider = ? AND model = ? AND dim = ? AND kind = ? AND ref = ?",
		space.Provider, space.Model, space.Dim, string(kind), id).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeVector(b), nil
}
