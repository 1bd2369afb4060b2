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

const capColumns = "c.id, c.type, c.intent, c.status, c.opened_at, c.closed_at, c.session_id, c.repo_id, c.agent_id, c.user_id"

func scanCapsule(s scanner) (memory.Capsule, error) {
	var c memory.Capsule
	var closed sql.NullInt64
	err := s.Scan(&c.ID, &c.Type, &c.Intent, &c.Status, &c.OpenedAt, &closed,
		&c.Scope.SessionID, &c.Scope.RepoID, &c.Scope.AgentID, &c.Scope.UserID)
	if closed.Valid {
		c.ClosedAt = &closed.Int64
	}
	return c, err
}

const pinColumns = "p.id, p.target_type, p.target_id, p.reason, p.created_at, p.expires_at, p.session_id, p.repo_id, p.agent_id, p.user_id"

func scanPin(s scanner) (memory.Pin, error) {
	var p memory.Pin
	var exp sql.NullInt64
	err := s.Scan(&p.ID, &p.TargetType, &p.TargetID, &p.Reason, &p.CreatedAt, &exp,
		&p.Scope.SessionID, &p.Scope.RepoID, &p.Scope.AgentID, &p.Scope.UserID)
	if exp.Valid {
		p.ExpiresAt = &exp.Int64
	}
	return p, err
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

// in appends "AND col IN (...)" when vs is non-empty.
func (q *query) in(col string, vs []string) {
	if len(vs) == 0 {
		return
	}
	q.sql.WriteString(" AND " + col + " IN (")
	q.sql.WriteString(strings.TrimSuffix(strings.Repeat("?, ", len(vs)), ", "))
	q.sql.WriteString(")")
	for _, v := range vs {
		q.args = append(q.args, v)
	}
}

func notFound(what, id string) error {
	return memory.Errorf(memory.CodeNotFound, "%s %q not found", what, id)
}
