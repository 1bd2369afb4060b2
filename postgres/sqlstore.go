package postgres

import (
	"context"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"github.com/jackc/pgx/v5"
)

// This file joins the store to the shared half of its SQL (sqlstore): the
// adapter from pgx to sqlstore.Querier, PostgreSQL's dialect, and the
// backend the shared half calls back.

// querier runs a transaction's statements for the shared half (and the
// store's own), numbering ? placeholders as PostgreSQL wants them.
type querier struct{ tx queryer }

func (a querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := a.tx.Exec(ctx, rebind(query), args...)
	return tag.RowsAffected(), err
}

func (a querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := a.tx.Query(ctx, rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (a querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Scanner {
	return a.tx.QueryRow(ctx, rebind(query), args...)
}

// txOf is the pgx transaction behind a Querier of this store.
func txOf(q sqlstore.Querier) queryer { return q.(querier).tx }

// rebind numbers a statement's placeholders: ? becomes $1, $2, ... in
// order, and ?N becomes $N. Quoted strings and identifiers are left as
// they are.
func rebind(query string) string {
	if strings.IndexByte(query, '?') < 0 {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0 // a doubled quote closes and opens again
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			j := i + 1
			for j < len(query) && '0' <= query[j] && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(query[i+1 : j])
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// newDialect is PostgreSQL's dialect for a store keeping vectors as mode
// says: lists bind as arrays, reads that precede a write lock their rows,
// booleans are booleans, and joins that the planner's statistics could
// mislead (right after a bulk load they say a table is empty) are lateral
// subqueries, one index probe per record.
func newDialect(mode vectorMode) *sqlstore.Dialect {
	return &sqlstore.Dialect{
		Arrays:    true,
		ForUpdate: " FOR UPDATE",
		ForShare:  " FOR SHARE",
		Greatest:  "greatest",
		Current:   "active",
		// lower() in the "C" collation folds ASCII letters only, as the
		// SQLite store's does.
		ContainsFold: func(col string) string {
			return `strpos(lower(` + col + ` COLLATE "C"), lower(? COLLATE "C")) > 0`
		},
		JSONListHas: func(col string) string {
			return "EXISTS (SELECT 1 FROM json_array_elements_text(" + col + "::json) j WHERE j = ?)"
		},
		MembersJSON: `coalesce((SELECT json_agg(m.observation_id ORDER BY m.position) FROM capsule_observations m
			WHERE m.capsule_id = c.id), '[]')::text`,
		RedactDerived: `WITH RECURSIVE derived(id) AS (
				SELECT ?1::text COLLATE "C"
				UNION
				SELECT t.id FROM derived d JOIN thoughts t ON t.is_summary
					JOIN LATERAL json_array_elements_text(t.summary_of::json) j(v) ON j.v = d.id)
			UPDATE thoughts SET content = ?2, tags = '[]', redacted = true
			WHERE id IN (SELECT id FROM derived) AND id <> ?1 AND NOT redacted`,
		// A no-op update logs them as changed (the change log is written
		// at commit, by trigger).
		RelogRenamed: []string{
			"UPDATE kg_observations SET content = content WHERE id IN (SELECT id FROM kg_observations WHERE entity_id = ?1 ORDER BY seq)",
			"UPDATE kg_edges SET relation = relation WHERE id IN (SELECT id FROM kg_edges WHERE source = ?1 OR target = ?1 ORDER BY seq)",
		},
		InList:     func(col string, n int) string { return col + " = ANY(?" + strconv.Itoa(n) + ")" },
		ListArg:    func(ids []string) any { return ids },
		ListMax:    5000,
		MemberJoin: "LEFT JOIN LATERAL (SELECT m.capsule_id, m.position FROM capsule_observations m WHERE m.observation_id = x.id LIMIT 1) m ON true",
		VectorJoin: func(kind string, first int) string {
			p := func(i int) string { return "?" + strconv.Itoa(first+i) }
			return "LEFT JOIN LATERAL (SELECT e.vec FROM embeddings e WHERE e.provider = " + p(0) + " AND e.model = " + p(1) +
				" AND e.dim = " + p(2) + " AND e.kind = '" + kind + "' AND e.ref = x.id LIMIT 1) e ON true"
		},
		VectorColumn: "vec",
		ScanVector:   func() sqlstore.VectorScan { return &vecDest{mode: mode} },
		LockKeys:     lockKeys,
		IsUnique:     isUnique,
		IsForeignKey: isForeignKey,
		Constraint:   constraint,
		Error:        dbError,
	}
}

// lockKeys takes a transaction lock on each (repository, key) pair, in
// order, so concurrent writers of overlapping keys wait for each other
// instead of deadlocking.
func lockKeys(ctx context.Context, q sqlstore.Querier, what string, keys [][2]string) error {
	if len(keys) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(keys))
	for _, k := range keys {
		h := fnv.New64a()
		h.Write([]byte(what + "\x00" + k[0] + "\x00" + k[1]))
		ids = append(ids, int64(h.Sum64()))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	_, err := q.Exec(ctx, "SELECT pg_advisory_xact_lock(k) FROM unnest(?::bigint[]) AS k ORDER BY k", ids)
	return err
}

// backend is what the shared half calls back.
type backend struct{ db *DB }

func (b backend) Read(ctx context.Context, what string, fn func(sqlstore.Querier) error) error {
	return b.db.read(ctx, what, func(tx pgx.Tx) error { return fn(querier{tx}) })
}

func (b backend) Write(ctx context.Context, what string, fn func(sqlstore.Querier) error) error {
	return b.db.write(ctx, what, func(tx pgx.Tx) error { return fn(querier{tx}) })
}

// Erase is Write: PostgreSQL keeps a deleted or rewritten row's bytes in
// the table's file until VACUUM reclaims them (docs/postgres.md,
// Forgetting).
func (b backend) Erase(ctx context.Context, what string, fn func(sqlstore.Querier) error) error {
	return b.Write(ctx, what, fn)
}

func (b backend) PutSummary(ctx context.Context, q sqlstore.Querier, s memory.Summary) (memory.Summary, error) {
	return putSummary(ctx, txOf(q), s)
}

func (b backend) SearchText(ctx context.Context, q sqlstore.Querier, ts memory.TextSearch) (memory.TextResult, error) {
	return searchText(ctx, txOf(q), ts)
}

func (b backend) PutEmbeddings(ctx context.Context, q sqlstore.Querier, es []memory.Embedding, fill bool) (int, error) {
	return b.db.putEmbeddingsTx(ctx, txOf(q), es, fill)
}
