package postgres

import (
	"context"
	"encoding/json"
	"fmt"
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
}

type scanner interface{ Scan(dest ...any) error }

const obsColumns = "o.id, o.kind, o.content, o.provenance, o.ts, o.redacted, o.session_id, o.repo_id, o.agent_id, o.user_id"

func scanObservation(s scanner, extra ...any) (memory.Observation, error) {
	var o memory.Observation
	var prov string
	dest := append([]any{&o.ID, &o.Kind, &o.Content, &prov, &o.TS, &o.Redacted,
		&o.Scope.SessionID, &o.Scope.RepoID, &o.Scope.AgentID, &o.Scope.UserID}, extra...)
	if err := s.Scan(dest...); err != nil {
		return o, err
	}
	o.Provenance = json.RawMessage(prov)
	return o, nil
}

const sumColumns = "s.id, s.capsule_id, s.content, s.confidence, s.created_at, s.evidence_refs, s.session_id, s.repo_id, s.agent_id, s.user_id, s.redacted"

func scanSummary(s scanner, extra ...any) (memory.Summary, error) {
	var m memory.Summary
	var refs string
	dest := append([]any{&m.ID, &m.CapsuleID, &m.Content, &m.Confidence, &m.CreatedAt, &refs,
		&m.Scope.SessionID, &m.Scope.RepoID, &m.Scope.AgentID, &m.Scope.UserID, &m.Redacted}, extra...)
	if err := s.Scan(dest...); err != nil {
		return m, err
	}
	m.EvidenceRefs = []string{}
	if err := json.Unmarshal([]byte(refs), &m.EvidenceRefs); err != nil {
		return m, fmt.Errorf("decoding evidence refs of summary %s: %w", m.ID, err)
	}
	return m, nil
}

// scopeArgs are the four scope values in column order.
func scopeArgs(s memory.Scope) []any {
	return []any{s.SessionID, s.RepoID, s.AgentID, s.UserID}
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

// eachRow calls fn for every row of a query.
func eachRow(ctx context.Context, tx queryer, sql string, args []any, fn func(scanner) error) error {
	rows, err := tx.Query(ctx, sql, args...)
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
