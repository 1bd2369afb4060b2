package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// queryer is what both *sql.Tx and *sql.DB offer.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const obsColumns = "o.id, o.kind, o.content, o.provenance, o.ts, o.redacted, o.session_id, o.repo_id, o.agent_id, o.user_id"

type scanner interface{ Scan(dest ...any) error }

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

// query builds a SQL statement with its arguments.
type query struct {
	sql  strings.Builder
	args []any
}

func newQuery(s string, args ...any) *query {
	q := &query{args: args}
	q.sql.WriteString(s)
	return q
}

// add appends SQL text and its arguments.
func (q *query) add(s string, args ...any) {
	q.sql.WriteString(s)
	q.args = append(q.args, args...)
}

// scope appends "AND alias.col = ?" for every dimension the filter sets.
func (q *query) scope(alias string, s memory.Scope) {
	for _, c := range []struct{ col, v string }{
		{"session_id", s.SessionID}, {"repo_id", s.RepoID}, {"agent_id", s.AgentID}, {"user_id", s.UserID},
	} {
		if c.v != "" {
			q.add(" AND "+alias+"."+c.col+" = ?", c.v)
		}
	}
}

// notIn appends "AND col NOT IN (...)" when ids is non-empty.
func (q *query) notIn(col string, ids []string) {
	if len(ids) == 0 {
		return
	}
	q.sql.WriteString(" AND " + col + " NOT IN (")
	for i, id := range ids {
		if i > 0 {
			q.sql.WriteString(", ")
		}
		q.add("?", id)
	}
	q.sql.WriteString(")")
}

func notFound(what, id string) error {
	return memory.Errorf(memory.CodeNotFound, "%s %q not found", what, id)
}
