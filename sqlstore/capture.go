package sqlstore

import (
	"context"
	"errors"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// OpenCapsuleOf implements memory.CapsuleLister.
func (s *Store) OpenCapsuleOf(ctx context.Context, sessionID string) (memory.Capsule, error) {
	var c memory.Capsule
	err := s.b.Read(ctx, "reading the open capsule", func(q Querier) error {
		var id string
		err := q.QueryRow(ctx, "SELECT id FROM capsules WHERE session_id = ? AND status = 'open' AND session_id <> ''", sessionID).Scan(&id)
		if errors.Is(err, ErrNoRows) {
			return memory.Errorf(memory.CodeNotFound, "session %q has no open capsule", sessionID)
		}
		if err != nil {
			return err
		}
		c, err = getCapsule(ctx, q, id)
		return err
	})
	return c, err
}

// Capsules implements memory.CapsuleLister.
func (s *Store) Capsules(ctx context.Context, cq memory.CapsuleQuery) ([]memory.Capsule, error) {
	limit := cq.Limit
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 1000)
	q := s.d.NewQuery("SELECT c.id FROM capsules c WHERE true")
	q.Scope("c", cq.Scope)
	if cq.Status != "" {
		q.Add(" AND c.status = ?", string(cq.Status))
	}
	q.Add(" ORDER BY coalesce(c.closed_at, c.opened_at) DESC, c.id DESC LIMIT ?", limit)
	var out []memory.Capsule
	err := s.b.Read(ctx, "listing capsules", func(tx Querier) error {
		out = out[:0]
		var ids []string
		if err := EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
			var id string
			err := sc.Scan(&id)
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

// CompleteScope implements memory.CapsuleLister.
func (s *Store) CompleteScope(ctx context.Context, key, prefix string, limit int) ([]string, error) {
	col := scopeColumn(key)
	if col == "" {
		return nil, memory.Errorf(memory.CodeInvalidParams, "unknown scope key %q (known: %s)", key, strings.Join(memory.ScopeKeys, ", "))
	}
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	// A prefix range on the indexed column (text compares by its bytes:
	// SQLite's BINARY collation, PostgreSQL's "C"): no LIKE, whose case
	// folding and wildcards would need escaping.
	lo, hi := prefix, prefix+"\U0010FFFF"
	sql := "SELECT v FROM (SELECT DISTINCT " + col + " AS v FROM observations WHERE " + col + " <> '' AND " + col + " >= ?1 AND " + col + " < ?2 ORDER BY 1 LIMIT ?3) o " +
		"UNION SELECT v FROM (SELECT DISTINCT " + col + " AS v FROM capsules WHERE " + col + " <> '' AND " + col + " >= ?1 AND " + col + " < ?2 ORDER BY 1 LIMIT ?3) c ORDER BY 1 LIMIT ?3"
	var out []string
	err := s.b.Read(ctx, "listing scope values", func(q Querier) error {
		out = out[:0]
		return EachRow(ctx, q, sql, []any{lo, hi, limit}, func(sc Scanner) error {
			var v string
			err := sc.Scan(&v)
			out = append(out, v)
			return err
		})
	})
	return out, err
}
