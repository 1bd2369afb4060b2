package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// OpenCapsuleOf implements memory.CapsuleLister.
func (db *DB) OpenCapsuleOf(ctx context.Context, sessionID string) (memory.Capsule, error) {
	var c memory.Capsule
	err := db.read(ctx, "reading the open capsule", func(tx queryer) error {
		var id string
		err := tx.QueryRowContext(ctx, "SELECT id FROM capsules WHERE session_id = ? AND status = 'open' AND session_id <> ''", sessionID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
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
	q := newQuery("SELECT c.id FROM capsules c WHERE 1=1")
	for _, k := range memory.ScopeKeys {
		if v := cq.Scope.Get(k); v != "" {
			q.add(" AND c."+scopeColumn(k)+" = ?", v)
		}
	}
	if cq.Status != "" {
		q.add(" AND c.status = ?", string(cq.Status))
	}
	q.add(" ORDER BY COALESCE(c.closed_at, c.opened_at) DESC, c.id DESC LIMIT ?", limit)
	var out []memory.Capsule
	err := db.read(ctx, "listing capsules", func(tx queryer) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, q.sql.String(), q.args...)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
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
	// A prefix range on the indexed column: no LIKE, whose case folding
	// and wildcards would need escaping.
	lo, hi := prefix, prefix+"\U0010FFFF"
	q := "SELECT v FROM (SELECT DISTINCT " + col + " AS v FROM observations WHERE " + col + " <> '' AND " + col + " >= ? AND " + col + " < ? ORDER BY 1 LIMIT ?) " +
		"UNION SELECT v FROM (SELECT DISTINCT " + col + " AS v FROM capsules WHERE " + col + " <> '' AND " + col + " >= ? AND " + col + " < ? ORDER BY 1 LIMIT ?) ORDER BY 1 LIMIT ?"
	var out []string
	err := db.read(ctx, "listing scope values", func(tx queryer) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, q, lo, hi, limit, lo, hi, limit, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}
