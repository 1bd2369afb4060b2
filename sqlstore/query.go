package sqlstore

import (
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Query builds a statement with its arguments.
type Query struct {
	sql    strings.Builder
	args   []any
	arrays bool
}

// NewQuery starts a statement in the dialect.
func (d *Dialect) NewQuery(s string, args ...any) *Query {
	q := &Query{args: args, arrays: d.Arrays}
	q.sql.WriteString(s)
	return q
}

// Add appends SQL text and the arguments of its placeholders.
func (q *Query) Add(s string, args ...any) {
	q.sql.WriteString(s)
	q.args = append(q.args, args...)
}

// SQL is the statement's text.
func (q *Query) SQL() string { return q.sql.String() }

// Args are the statement's arguments.
func (q *Query) Args() []any { return q.args }

// Scope appends "AND alias.col = ?" for every dimension s sets.
func (q *Query) Scope(alias string, s memory.Scope) {
	for _, c := range []struct{ col, v string }{
		{"session_id", s.SessionID}, {"repo_id", s.RepoID}, {"agent_id", s.AgentID}, {"user_id", s.UserID},
	} {
		if c.v != "" {
			q.Add(" AND "+alias+"."+c.col+" = ?", c.v)
		}
	}
}

// In appends "AND col IN (...)" when vs is not empty.
func (q *Query) In(col string, vs []string) {
	switch {
	case len(vs) == 0:
	case q.arrays:
		q.Add(" AND "+col+" = ANY(?)", vs)
	default:
		q.sql.WriteString(" AND " + col + " IN (")
		q.list(vs)
	}
}

// NotIn appends "AND col NOT IN (...)" when vs is not empty.
func (q *Query) NotIn(col string, vs []string) {
	switch {
	case len(vs) == 0:
	case q.arrays:
		q.Add(" AND "+col+" <> ALL(?)", vs)
	default:
		q.sql.WriteString(" AND " + col + " NOT IN (")
		q.list(vs)
	}
}

// list writes a placeholder per value, and the closing parenthesis.
func (q *Query) list(vs []string) {
	q.sql.WriteString(strings.TrimSuffix(strings.Repeat("?, ", len(vs)), ", "))
	q.sql.WriteString(")")
	for _, v := range vs {
		q.args = append(q.args, v)
	}
}

// ScopeArgs are the four scope values in column order.
func ScopeArgs(s memory.Scope) []any {
	return []any{s.SessionID, s.RepoID, s.AgentID, s.UserID}
}

// scopeColumn is the column of a scope key ("" for an unknown key).
func scopeColumn(key string) string {
	switch key {
	case "sessionId":
		return "session_id"
	case "repoId":
		return "repo_id"
	case "agentId":
		return "agent_id"
	case "userId":
		return "user_id"
	}
	return ""
}
