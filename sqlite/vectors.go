package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
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

// putEmbeddingsTx stores checked vectors in tx, one prepared insert each:
// with fill, only those of records without one in the space whose text is
// still the embedded one. Writers take turns, so a record's text read
// here holds to the commit.
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
		k, _ := sqlstore.KindOf(e.Kind)
		var text string
		err := tx.QueryRowContext(ctx, k.TextSQL(), e.ID).Scan(&text)
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
