package sqlite

import (
	"context"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

// searchText runs a full-text search through FTS5: each table's best
// matches by bm25, in scope, without the excluded ids.
func searchText(ctx context.Context, tx queryer, ts memory.TextSearch) (memory.TextResult, error) {
	var res memory.TextResult
	expr, err := sqlstore.MatchExpr(ts.Query)
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

// tableSearch describes one full-text table and how to read its hits.
type tableSearch struct {
	sql   string
	alias string
	scan  func(s sqlstore.Scanner, rank *float64) (memory.Entity, error)
}

var obsSearch = tableSearch{
	sql: "SELECT " + sqlstore.ObsColumns + `, bm25(observations_fts) AS r
		FROM observations_fts JOIN observations o ON o.seq = observations_fts.rowid
		WHERE observations_fts MATCH ? AND o.redacted = 0`,
	alias: "o",
	scan: func(s sqlstore.Scanner, rank *float64) (memory.Entity, error) {
		o, err := sqlstore.ScanObservation(s, rank)
		return memory.ObservationEntity(o), err
	},
}

var sumSearch = tableSearch{
	sql: "SELECT " + sqlstore.SumColumns + `, bm25(summaries_fts) AS r
		FROM summaries_fts JOIN summaries s ON s.seq = summaries_fts.rowid
		WHERE summaries_fts MATCH ? AND s.redacted = 0`,
	alias: "s",
	scan: func(s sqlstore.Scanner, rank *float64) (memory.Entity, error) {
		m, err := sqlstore.ScanSummary(s, rank)
		return memory.SummaryEntity(m), err
	},
}

func searchTable(ctx context.Context, tx queryer, expr string, ts memory.TextSearch, t tableSearch) ([]memory.TextHit, error) {
	q := dialect.NewQuery(t.sql, expr)
	q.Scope(t.alias, ts.Scope)
	q.NotIn(t.alias+".id", ts.Exclude)
	q.Add(" ORDER BY r, "+t.alias+".id LIMIT ?", ts.Limit)
	rows, err := tx.QueryContext(ctx, q.SQL(), q.Args()...)
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
	if l := strings.ToLower(reason); strings.Contains(l, "parser stack overflow") || strings.Contains(l, "expression tree is too large") {
		// The engine's own limits, named in its terms: say what to do.
		reason = "the query nests too deeply or joins too many terms: simplify it"
	}
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
