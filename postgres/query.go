package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// queryer is what pgx.Tx, *pgx.Conn and the pool offer.
type queryer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// query builds an SQL statement with numbered arguments.
type query struct {
	sql  strings.Builder
	args []any
}

func newQuery(s string, args ...any) *query {
	q := &query{args: args}
	q.sql.WriteString(s)
	return q
}

// arg adds an argument and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

// add appends SQL text.
func (q *query) add(s string) { q.sql.WriteString(s) }

// scope appends "AND alias.col = $n" for every dimension the filter sets.
func (q *query) scope(alias string, s memory.Scope) {
	for _, c := range []struct{ col, v string }{
		{"session_id", s.SessionID}, {"repo_id", s.RepoID}, {"agent_id", s.AgentID}, {"user_id", s.UserID},
	} {
		if c.v != "" {
			q.add(" AND " + alias + "." + c.col + " = " + q.arg(c.v))
		}
	}
}

// notIn appends "AND col <> ALL($n)" when ids is non-empty.
func (q *query) notIn(col string, ids []string) {
	if len(ids) > 0 {
		q.add(" AND " + col + " <> ALL(" + q.arg(ids) + ")")
	}
}
