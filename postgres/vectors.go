package postgres

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// vecArg is a vector as the embeddings column takes it.
func (v vectorMode) vecArg(x []float32) any {
	if v == vectorsPGVector {
		return pgvector.NewVector(x)
	}
	return x
}

// vecDest is a scan target for the embeddings column (NULL allowed).
type vecDest struct {
	mode vectorMode
	pg   *pgvector.Vector
	arr  []float32
}

func (d *vecDest) target() any {
	if d.mode == vectorsPGVector {
		return &d.pg
	}
	return &d.arr
}

func (d *vecDest) vector() []float32 {
	if d.mode == vectorsPGVector {
		if d.pg == nil {
			return nil
		}
		return d.pg.Slice()
	}
	return d.arr
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
// one. It returns how many it stored. The records' rows stay locked from
// reading their texts to the commit, so a record rewritten or forgotten
// meanwhile never keeps a vector of its old text.
func (db *DB) putEmbeddings(ctx context.Context, es []memory.Embedding, fill bool) (int, error) {
	if err := checkEmbeddings(es); err != nil {
		return 0, err
	}
	var n int
	err := db.write(ctx, "storing vectors", func(tx pgx.Tx) error {
		var err error
		n, err = db.putEmbeddingsTx(ctx, tx, es, fill)
		return err
	})
	return n, err
}

// checkEmbeddings refuses vectors of unknown kinds, of the wrong length,
// or holding NaN or Inf.
func checkEmbeddings(es []memory.Embedding) error {
	for _, e := range es {
		if _, ok := specOf(e.Kind); !ok {
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

// putEmbeddingsTx stores checked vectors in tx (see putEmbeddings).
func (db *DB) putEmbeddingsTx(ctx context.Context, tx pgx.Tx, es []memory.Embedding, fill bool) (int, error) {
	conflict := "DO UPDATE SET vec = excluded.vec, created_at = excluded.created_at"
	if fill {
		conflict = "DO NOTHING"
	}
	n := 0
	texts := map[memory.VectorKind]map[string]string{}
	for _, spec := range kindSpecs {
		var ids []string
		for _, e := range es {
			if e.Kind == spec.kind {
				ids = append(ids, e.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		if _, err := tx.Exec(ctx, "SELECT 1 FROM (SELECT x.id FROM "+spec.table+" x WHERE x.id = ANY($1) ORDER BY x.id FOR SHARE) l", ids); err != nil {
			return 0, err
		}
		m := map[string]string{}
		err := eachRow(ctx, tx, "SELECT x.id, "+spec.text+" FROM "+spec.table+" x WHERE x.id = ANY($1) AND "+spec.live, []any{ids}, func(s scanner) error {
			var id, text string
			err := s.Scan(&id, &text)
			m[id] = text
			return err
		})
		if err != nil {
			return 0, err
		}
		texts[spec.kind] = m
	}
	// One statement per space: the ids and the vectors (laid end to
	// end in one array, sliced per row) go in as arrays.
	type group struct {
		kinds, refs []string
		flat        []float32
	}
	groups := map[memory.Space]*group{}
	var spaces []memory.Space
	// A record given twice in one space: the last vector wins, as it
	// would written one at a time (the first, when filling).
	type key struct {
		sp   memory.Space
		kind memory.VectorKind
		id   string
	}
	last := map[key]int{}
	for i, e := range es {
		k := key{e.Space, e.Kind, e.ID}
		if _, seen := last[k]; !seen || !fill {
			last[k] = i
		}
	}
	for i, e := range es {
		if last[key{e.Space, e.Kind, e.ID}] != i {
			continue
		}
		text, ok := texts[e.Kind][e.ID]
		if !ok {
			continue // deleted or forgotten meanwhile: its vector must not outlive it
		}
		if fill && e.Text != "" && text != e.Text {
			continue // rewritten meanwhile: it waits for a vector of its new text
		}
		g := groups[e.Space]
		if g == nil {
			g = &group{}
			groups[e.Space] = g
			spaces = append(spaces, e.Space)
		}
		g.kinds, g.refs, g.flat = append(g.kinds, string(e.Kind)), append(g.refs, e.ID), append(g.flat, e.Vector...)
	}
	for _, sp := range spaces {
		g := groups[sp]
		vec := "$6::real[]"
		if db.vectors == vectorsPGVector {
			vec = "($6::real[])::vector"
		}
		vec = strings.Replace(vec, "$6::real[]", "($6::real[])[(u.i - 1) * $5::int + 1 : u.i * $5::int]", 1)
		tag, err := tx.Exec(ctx, `INSERT INTO embeddings (kind, ref, provider, model, dim, vec)
			SELECT u.kind, u.ref, $3, $4, $5::int, `+vec+` FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(kind, ref, i)
			ORDER BY u.i
			ON CONFLICT (provider, model, dim, kind, ref) `+conflict, g.kinds, g.refs, sp.Provider, sp.Model, sp.Dim, g.flat)
		if err != nil {
			return 0, err
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}

// PendingEmbeddings implements memory.VectorStore. Ids of different kinds
// are ordered by kind, then id: after is "kind\x00id".
func (db *DB) PendingEmbeddings(ctx context.Context, space memory.Space, after string, limit int) ([]memory.EmbedJob, error) {
	var out []memory.EmbedJob
	afterKind, afterID := splitAfter(after)
	err := db.read(ctx, "listing pending vectors", func(tx pgx.Tx) error {
		out = nil
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
			err := eachRow(ctx, tx, spec.pendingSQL(), []any{from, space.Provider, space.Model, space.Dim, limit - len(out)}, func(s scanner) error {
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

// DropEmbeddings implements memory.VectorStore.
func (db *DB) DropEmbeddings(ctx context.Context, keep memory.Space) (int, error) {
	var n int64
	err := db.write(ctx, "dropping vectors", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM embeddings WHERE NOT (provider = $1 AND model = $2 AND dim = $3)", keep.Provider, keep.Model, keep.Dim)
		n = tag.RowsAffected()
		return err
	})
	return int(n), err
}

// VectorStats implements memory.VectorStore.
func (db *DB) VectorStats(ctx context.Context, space memory.Space) (memory.VectorStats, error) {
	var st memory.VectorStats
	err := db.read(ctx, "counting vectors", func(tx pgx.Tx) error {
		records := 0
		for _, spec := range kindSpecs {
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+spec.table+" x WHERE "+spec.live).Scan(&n); err != nil {
				return err
			}
			records += n
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE provider = $1 AND model = $2 AND dim = $3),
			count(*) FILTER (WHERE NOT (provider = $1 AND model = $2 AND dim = $3)) FROM embeddings`,
			space.Provider, space.Model, space.Dim).Scan(&st.InSpace, &st.OtherSpaces); err != nil {
			return err
		}
		st.Pending = records - st.InSpace
		return nil
	})
	return st, err
}
