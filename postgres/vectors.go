package postgres

import (
	"context"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
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

// Dest implements sqlstore.VectorScan.
func (d *vecDest) Dest() any {
	if d.mode == vectorsPGVector {
		return &d.pg
	}
	return &d.arr
}

// Vector implements sqlstore.VectorScan.
func (d *vecDest) Vector() []float32 {
	if d.mode == vectorsPGVector {
		if d.pg == nil {
			return nil
		}
		return d.pg.Slice()
	}
	return d.arr
}

// putEmbeddingsTx stores checked vectors in tx: with fill, only those of
// records without one in the space whose text is still the embedded one.
// It returns how many it stored. The records' rows stay locked from
// reading their texts to the commit, so a record rewritten or forgotten
// meanwhile never keeps a vector of its old text.
func (db *DB) putEmbeddingsTx(ctx context.Context, tx queryer, es []memory.Embedding, fill bool) (int, error) {
	conflict := "DO UPDATE SET vec = excluded.vec, created_at = excluded.created_at"
	if fill {
		conflict = "DO NOTHING"
	}
	n := 0
	texts := map[memory.VectorKind]map[string]string{}
	for _, spec := range sqlstore.Kinds {
		var ids []string
		for _, e := range es {
			if e.Kind == spec.Kind {
				ids = append(ids, e.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		if _, err := tx.Exec(ctx, "SELECT 1 FROM (SELECT x.id FROM "+spec.Table+" x WHERE x.id = ANY($1) ORDER BY x.id FOR SHARE) l", ids); err != nil {
			return 0, err
		}
		m := map[string]string{}
		err := sqlstore.EachRow(ctx, querier{tx}, "SELECT x.id, "+spec.Text+" FROM "+spec.Table+" x WHERE x.id = ANY($1) AND "+spec.Live, []any{ids}, func(s sqlstore.Scanner) error {
			var id, text string
			err := s.Scan(&id, &text)
			m[id] = text
			return err
		})
		if err != nil {
			return 0, err
		}
		texts[spec.Kind] = m
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
