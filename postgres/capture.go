package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
)

// OpenCapsuleOf implements memory.CapsuleLister.
func (db *DB) OpenCapsuleOf(ctx context.Context, sessionID string) (memory.Capsule, error) {
	var c memory.Capsule
	err := db.read(ctx, "reading the open capsule", func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, "SELECT id FROM capsules WHERE session_id = $1 AND status = 'open' AND session_id <> ''", sessionID).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return memory.Errorf(memory.CodeNotFound, "session %q has no open capsule", sessionID)
		}
		if err != nil {
			return err
		}
		c, err = getCapsule(ctx, tx, id)
		return err
	})
	return c, err
}

// Capsules implements memory.CapsuleLister.
func (db *DB) Capsules(ctx context.Context, cq memory.CapsuleQuery) ([]memory.Capsule, error) {
	limit := cq.Limit
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 1000)
	q := newQuery("SELECT c.id FROM capsules c WHERE true")
	q.scope("c", cq.Scope)
	if cq.Status != "" {
		q.add(" AND c.status = " + q.arg(string(cq.Status)))
	}
	q.add(" ORDER BY coalesce(c.closed_at, c.opened_at) DESC, c.id DESC LIMIT " + q.arg(limit))
	var out []memory.Capsule
	err := db.read(ctx, "listing capsules", func(tx pgx.Tx) error {
		out = out[:0]
		var ids []string
		if err := eachRow(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			var id string
			err := s.Scan(&id)
			ids = append(ids, id)
			return err
		}); err != nil {
			return err
		}
		for _, id := range ids {
			c, err := getCapsule(ctx, tx, id)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// scopeColumn is the column of a scope key.
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

// CompleteScope implements memory.CapsuleLister.
func (db *DB) CompleteScope(ctx context.Context, key, prefix string, limit int) ([]string, error) {
	col := scopeColumn(key)
	if col == "" {
		return nil, memory.Errorf(memory.CodeInvalidParams, "unknown scope key %q (known: %s)", key, strings.Join(memory.ScopeKeys, ", "))
	}
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	// A prefix range on the column (its collation is "C": byte order),
	// which the scope indexes serve; no LIKE, whose wildcards would need
	// escaping.
	lo, hi := prefix, prefix+"\U0010FFFF"
	q := "SELECT v FROM (SELECT DISTINCT " + col + " AS v FROM observations WHERE " + col + " <> '' AND " + col + " >= $1 AND " + col + " < $2 ORDER BY 1 LIMIT $3) o " +
		"UNION SELECT v FROM (SELECT DISTINCT " + col + " AS v FROM capsules WHERE " + col + " <> '' AND " + col + " >= $1 AND " + col + " < $2 ORDER BY 1 LIMIT $3) c ORDER BY 1 LIMIT $3"
	var out []string
	err := db.read(ctx, "listing scope values", func(tx pgx.Tx) error {
		out = out[:0]
		return eachRow(ctx, tx, q, []any{lo, hi, limit}, func(s scanner) error {
			var v string
			err := s.Scan(&v)
			out = append(out, v)
			return err
		})
	})
	return out, err
}
