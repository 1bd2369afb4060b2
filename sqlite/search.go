package sqlite

import (
	"context"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// matchExpr renders a TextQuery as an FTS5 MATCH expression. Text-syntax
// terms are each quoted as an FTS5 string, so no user text is ever read as
// query syntax, and OR'ed.
func matchExpr(q memory.TextQuery) (string, error) {
	switch q.Syntax {
	case memory.SyntaxFTS:
		if strings.TrimSpace(q.Expr) == "" {
			return "", memory.Errorf(memory.CodeInvalidParams, "the FTS query is empty")
		}
		return q.Expr, nil
	case memory.SyntaxText, "":
		if len(q.Terms) == 0 {
			return "", memory.Errorf(memory.CodeInvalidParams, "the query has no words to search for")
		}
		var b strings.Builder
		for i, t := range q.Terms {
			if i > 0 {
				b.WriteString(" OR ")
			}
			b.WriteByte('"')
			b.WriteString(strings.ReplaceAll(t, `"`, `""`))
			b.WriteByte('"')
		}
		return b.String(), nil
	}
	return "", memory.Errorf(memory.CodeInvalidParams, "unknown query syntax %q (want text or fts)", q.Syntax)
}

// SearchText implements memory.TextSearcher.
func (db *DB) SearchText(ctx context.Context, ts memory.TextSearch) (memory.TextResult, error) {
	var res memory.TextResult
	err := db.read(ctx, "searching", func(tx queryer) error {
		var err error
		res, err = searchText(ctx, tx, ts)
		return err
	})
	return res, err
}

func searchText(ctx context.Context, tx queryer, ts memory.TextSearch) (memory.TextResult, error) {
	var res memory.TextResult
	expr, err := matchExpr(ts.Query)
	if err != nil || ts.Limit <= 0 {
		return res, err
	}
	if res.Observations, err = searchTable(ctx, tx, expr, ts, obsSearch); err == nil {
		res.Summaries, err = searchTable(ctx, tx, expr, ts, sumSearch)
	}
	if err != nil {
		return memory.TextResult{}, ftsError(dbError(err, "searching"), ts.Query.Syntax)
	}
	return res, nil
}

// snapshotReader reads through one read transaction.
type snapshotReader struct{ tx queryer }

func (r snapshotReader) ActivePins(ctx context.Context, q memory.PinQuery) ([]memory.PinnedTarget, error) {
	out, err := activePins(ctx, r.tx, q)
	return out, dbError(err, "reading pins")
}

func (r snapshotReader) CurrentSummary(ctx context.Context, scope memory.Scope) (*memory.Summary, error) {
	out, err := currentSummary(ctx, r.tx, scope)
	return out, dbError(err, "reading the current summary")
}

func (r snapshotReader) SearchText(ctx context.Context, ts memory.TextSearch) (memory.TextResult, error) {
	return searchText(ctx, r.tx, ts)
}

// Snapshot implements memory.Snapshotter: fn reads one consistent state of
// the database, untouched by concurrent writes, in one read transaction.
func (db *DB) Snapshot(ctx context.Context, fn func(memory.Reader) error) error {
	return db.read(ctx, "reading", func(tx queryer) error {
		// SQLite takes a transaction's snapshot at its first read, not at
		// BEGIN: read now, so fn sees the store as it was when Snapshot began.
		if _, err := lastChange(ctx, tx); err != nil {
			return err
		}
		return fn(snapshotReader{tx})
	})
}

// tableSearch describes one full-text table and how to read its hits.
type tableSearch struct {
	sql   string
	alias string
	scan  func(s scanner, rank *float64) (memory.Entity, error)
}

var obsSearch = tableSearch{
	sql: "SELECT " + obsColumns + `, bm25(observations_fts) AS r
		FROM observations_fts JOIN observations o ON o.seq = observations_fts.rowid
		WHERE observations_fts MATCH ? AND o.redacted = 0`,
	alias: "o",
	scan: func(s scanner, rank *float64) (memory.Entity, error) {
		o, err := scanObservation(s, rank)
		return memory.ObservationEntity(o), err
	},
}

var sumSearch = tableSearch{
	sql: "SELECT " + sumColumns + `, bm25(summaries_fts) AS r
		FROM summaries_fts JOIN summaries s ON s.seq = summaries_fts.rowid
		WHERE summaries_fts MATCH ? AND s.redacted = 0`,
	alias: "s",
	scan: func(s scanner, rank *float64) (memory.Entity, error) {
		m, err := scanSummary(s, rank)
		return memory.SummaryEntity(m), err
	},
}

func searchTable(ctx context.Context, tx queryer, expr string, ts memory.TextSearch, t tableSearch) ([]memory.TextHit, error) {
	q := newQuery(t.sql, expr)
	q.scope(t.alias, ts.Scope)
	q.notIn(t.alias+".id", ts.Exclude)
	q.add(" ORDER BY r, "+t.alias+".id LIMIT ?", ts.Limit)
	rows, err := tx.QueryContext(ctx, q.sql.String(), q.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []memory.TextHit
	for rows.Next() {
		var h memory.TextHit
		if h.Entity, err = t.scan(rows, &h.Rank); err != nil {
			return nil, err
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// queryComplaints are the fragments of the messages FTS5 gives for a query
// it cannot parse (from its expression parser in SQLite 3.5x). Corruption and
// other table errors also start with "fts5:" and are not among them: those
// stay db_error.
var queryComplaints = []string{
	"syntax error",
	"unterminated string",
	"unknown special query",
	"no such column",
	"expected integer, got",
	"parser stack overflow",
	"queries are not supported",
	"expression tree is too large",
}

// ftsError turns the full-text engine's complaints about an FTS-syntax query
// into invalid_params errors that quote the engine's reason but no SQL.
// Other errors pass through.
func ftsError(err error, syntax memory.Syntax) error {
	if err == nil || memory.CodeOf(err) != memory.CodeDBError {
		return err
	}
	msg := err.Error()
	if cause := errorsUnwrapAll(err); cause != nil {
		msg = cause.Error()
	}
	lower := strings.ToLower(msg)
	isSyntax := false
	for _, s := range queryComplaints {
		if strings.Contains(lower, s) {
			isSyntax = true
		}
	}
	if !isSyntax {
		return err
	}
	if syntax != memory.SyntaxFTS {
		// A text query is always quoted; the engine rejecting one is a bug.
		return memory.Wrap(memory.CodeInternal, err, "the full-text engine rejected a text query")
	}
	reason := msg
	reason = strings.TrimPrefix(reason, "SQL logic error: ")
	if i := strings.LastIndex(reason, " ("); i > 0 && strings.HasSuffix(reason, ")") {
		reason = reason[:i]
	}
	reason = strings.TrimPrefix(reason, "fts5: ")
	if col, ok := strings.CutPrefix(reason, "no such column: "); ok {
		reason = "unknown column " + `"` + col + `" (the only column is content; quote words that contain ':' or '-')`
	}
	return memory.Wrap(memory.CodeInvalidParams, err, "malformed FTS query: %s", reason)
}

// errorsUnwrapAll returns the innermost error of err's chain.
func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}
