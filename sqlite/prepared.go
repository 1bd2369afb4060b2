package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// preparedTx runs a transaction's statements through statements it
// prepares once each. A bulk write (an import) runs the same few
// statements for every record, and preparing a statement costs more than
// running it.
type preparedTx struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

var _ queryer = (*preparedTx)(nil)

func newPreparedTx(tx *sql.Tx) *preparedTx {
	return &preparedTx{tx: tx, stmts: map[string]*sql.Stmt{}}
}

// stmt is query's prepared statement, prepared on first use.
func (p *preparedTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if strings.Contains(query, ";") {
		// A statement holds no ';': several statements run unprepared,
		// every one of them.
		return nil, errSeveral
	}
	if s, ok := p.stmts[query]; ok {
		return s, nil
	}
	s, err := p.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.stmts[query] = s
	return s, nil
}

// errSeveral marks a query of several statements, which is not prepared.
var errSeveral = errors.New("several statements")

func (p *preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := p.stmt(ctx, query)
	if errors.Is(err, errSeveral) {
		return p.tx.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

func (p *preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := p.stmt(ctx, query)
	if errors.Is(err, errSeveral) {
		return p.tx.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

func (p *preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := p.stmt(ctx, query)
	if err != nil {
		// The transaction reports the same error through the row.
		return p.tx.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// close releases the statements.
func (p *preparedTx) close() {
	for _, s := range p.stmts {
		s.Close()
	}
	clear(p.stmts)
}
