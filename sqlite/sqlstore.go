package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

// This file joins the store to the shared half of its SQL (sqlstore): the
// adapter from database/sql to sqlstore.Querier, SQLite's dialect, and the
// backend the shared half calls back.

// querier runs a transaction's statements for the shared half.
type querier struct{ q queryer }

func (a querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := a.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (a querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := a.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (a querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Scanner {
	return a.q.QueryRowContext(ctx, query, args...)
}

// sqlRows is database/sql's result set as sqlstore.Rows.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

// queryerOf is the database/sql transaction behind a Querier of this
// store.
func queryerOf(q sqlstore.Querier) queryer { return q.(querier).q }

// txOf is the write transaction behind a Querier the shared half got
// from Backend.Write (or Erase).
func txOf(q sqlstore.Querier) *sql.Tx {
	if p, ok := q.(querier).q.(*preparedTx); ok {
		return p.tx
	}
	return q.(querier).q.(*sql.Tx)
}

// dialect is SQLite's: a list binds as a JSON array read by json_each,
// writers take turns (BEGIN IMMEDIATE) so nothing is locked row by row,
// booleans are integers (TRUE and FALSE are 1 and 0).
var dialect = sqlstore.Dialect{
	Greatest: "max",
	// Without statistics, SQLite reads a table by its primary key rather
	// than by an index on a generated column.
	IndexedBy: func(index string) string { return " INDEXED BY " + index },
	Current:   "active = 1",
	ContainsFold: func(col string) string {
		return "instr(lower(" + col + "), lower(?)) > 0"
	},
	JSONListHas: func(col string) string {
		return "EXISTS (SELECT 1 FROM json_each(" + col + ") j WHERE j.value = ?)"
	},
	MembersJSON: `(SELECT json_group_array(m.observation_id ORDER BY m.position) FROM capsule_observations m WHERE m.capsule_id = c.id)`,
	RedactDerived: `WITH RECURSIVE derived(id) AS (
			SELECT ?1
			UNION
			SELECT t.id FROM thoughts t JOIN derived d JOIN json_each(t.summary_of) j ON j.value = d.id
			WHERE t.is_summary = 1)
		UPDATE thoughts SET content = ?2, tags = '[]', redacted = 1
		WHERE id IN (SELECT id FROM derived) AND id <> ?1 AND redacted = 0`,
	RelogRenamed: []string{
		"INSERT INTO changes(kind, ref, op, at) SELECT 'kg_observation', id, 'index', " + ledgerAt + " FROM kg_observations WHERE entity_id = ?1 ORDER BY seq",
		"INSERT INTO changes(kind, ref, op, at) SELECT 'kg_edge', id, 'index', " + ledgerAt + " FROM kg_edges WHERE source = ?1 OR target = ?1 ORDER BY seq",
	},
	InList: func(col string, n int) string {
		return col + " IN (SELECT value FROM json_each(?" + strconv.Itoa(n) + "))"
	},
	ListArg: func(ids []string) any {
		b, _ := json.Marshal(ids)
		return string(b)
	},
	ListMax:    2000,
	MemberJoin: "LEFT JOIN capsule_observations m ON m.observation_id = x.id",
	VectorJoin: func(kind string, first int) string {
		p := func(i int) string { return "?" + strconv.Itoa(first+i) }
		return "LEFT JOIN embeddings e ON e.provider = " + p(0) + " AND e.model = " + p(1) + " AND e.dim = " + p(2) +
			" AND e.kind = '" + kind + "' AND e.ref = x.id"
	},
	VectorColumn: "vector",
	ScanVector:   func() sqlstore.VectorScan { return &blobVector{} },
	IsUnique:     isUnique,
	IsForeignKey: isForeignKey,
	Constraint:   func(error) string { return "" },
	Error:        dbError,
}

// blobVector reads a vector kept as a blob of little-endian float32s.
type blobVector struct{ b []byte }

func (v *blobVector) Dest() any { return &v.b }

func (v *blobVector) Vector() []float32 {
	if v.b == nil {
		return nil
	}
	return decodeVector(v.b)
}

// backend is what the shared half calls back.
type backend struct{ db *DB }

func (b backend) Read(ctx context.Context, what string, fn func(sqlstore.Querier) error) error {
	return b.db.read(ctx, what, func(tx queryer) error { return fn(querier{tx}) })
}

// Its statements are prepared once per transaction: a write that runs
// one statement per record (code memory's batches of entities) would
// otherwise compile it, and the triggers it fires, for every record.
func (b backend) Write(ctx context.Context, what string, fn func(sqlstore.Querier) error) error {
	return b.db.write(ctx, what, func(tx *sql.Tx) error {
		ptx := newPreparedTx(tx)
		defer ptx.close()
		return fn(querier{ptx})
	})
}

func (b backend) Erase(ctx context.Context, what string, fn func(sqlstore.Querier) error) error {
	return b.db.erase(ctx, what, func(tx *sql.Tx) error { return fn(querier{tx}) })
}

func (b backend) PutSummary(ctx context.Context, q sqlstore.Querier, s memory.Summary) (memory.Summary, error) {
	return putSummary(ctx, queryerOf(q), s)
}

func (b backend) SearchText(ctx context.Context, q sqlstore.Querier, ts memory.TextSearch) (memory.TextResult, error) {
	return searchText(ctx, queryerOf(q), ts)
}

func (b backend) PutEmbeddings(ctx context.Context, q sqlstore.Querier, es []memory.Embedding, fill bool) (int, error) {
	return putEmbeddingsTx(ctx, txOf(q), es, fill)
}
