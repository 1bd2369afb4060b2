package sqlstore

import (
	"context"
	"database/sql"
	"errors"
)

// Querier runs statements inside one transaction. Statements use ?
// placeholders, or ?N for the Nth argument (not both in one statement).
type Querier interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a query; the caller closes its rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a query that reads one row; its Scan returns an error
	// matching ErrNoRows when there is none.
	QueryRow(ctx context.Context, query string, args ...any) Scanner
}

// Rows is a query's result set.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Scanner reads the columns of one row.
type Scanner interface{ Scan(dest ...any) error }

// ErrNoRows is what a Scanner of QueryRow returns (errors.Is) when the
// query found no row. Both drivers' errors match it.
var ErrNoRows = sql.ErrNoRows

// EachRow calls fn for every row of a query.
func EachRow(ctx context.Context, q Querier, query string, args []any, fn func(Scanner) error) error {
	rows, err := q.Query(ctx, query, args...)
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

// exists reports whether a query (SELECT 1 ...) finds a row.
func exists(ctx context.Context, q Querier, query string, args ...any) (bool, error) {
	var one int
	err := q.QueryRow(ctx, query, args...).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// RetryError marks an error that running the whole transaction again
// fixes: a race lost to another writer. A store whose writers take turns
// never meets one, and reports it as it is.
type RetryError struct{ Err error }

// Error returns the error lost to's message.
func (e RetryError) Error() string { return e.Err.Error() }

// Unwrap returns the error lost to.
func (e RetryError) Unwrap() error { return e.Err }

// extraScanner appends destinations to every Scan: it reads a row's
// extra columns after those a scan function knows.
type extraScanner struct {
	s     Scanner
	extra []any
}

func (e extraScanner) Scan(dest ...any) error { return e.s.Scan(append(dest, e.extra...)...) }

// withExtra returns a Scanner that reads, after the columns its caller
// asks for, the row's trailing columns into extra.
func withExtra(s Scanner, extra ...any) Scanner { return extraScanner{s, extra} }
