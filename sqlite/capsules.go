package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/cairnhq/cairn/memory"
)

// OpenCapsule implements memory.CapsuleStore.
func (db *DB) OpenCapsule(ctx context.Context, c memory.Capsule) (memory.Capsule, error) {
	c.Status = memory.CapsuleOpen
	c.ClosedAt = nil
	c.ObservationIDs = []string{}
	c.SummaryID = ""
	err := db.write(ctx, "opening capsule", func(tx *sql.Tx) error {
		if c.Scope.SessionID != "" {
			var other string
			err := tx.QueryRowContext(ctx, "SELECT id FROM capsules WHERE session_id = ? AND status = 'open'", c.Scope.SessionID).Scan(&other)
			if err == nil {
				return memory.Errorf(memory.CodeConflict, "session %q already has an open capsule %q; close it first", c.Scope.SessionID, other)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		return insertCapsule(ctx, tx, c)
	})
	return c, err
}

func insertCapsule(ctx context.Context, tx queryer, c memory.Capsule) error {
	args := append([]any{c.ID, c.Type, c.Intent, string(c.Status), c.OpenedAt, nullInt(c.ClosedAt)}, scopeArgs(c.Scope)...)
	_, err := tx.ExecContext(ctx, `INSERT INTO capsules (id, type, intent, status, opened_at, closed_at,
		session_id, repo_id, agent_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if isUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "capsule id %q already exists", c.ID)
	}
	return err
}

// CloseCapsule implements memory.CapsuleStore.
func (db *DB) CloseCapsule(ctx context.Context, id string, closedAt int64, summary *memory.Summary) (memory.Capsule, error) {
	var c memory.Capsule
	err := db.write(ctx, "closing capsule", func(tx *sql.Tx) error {
		cur, err := getCapsule(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.Status != memory.CapsuleOpen {
			return memory.Errorf(memory.CodeConflict, "capsule %q is already closed", id)
		}
		if closedAt < cur.OpenedAt {
			return memory.Errorf(memory.CodeInvalidParams, "capsule %q cannot close before it opened", id)
		}
		if summary != nil {
			s := *summary
			s.CapsuleID = id
			if _, err := putSummary(ctx, tx, s); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, "UPDATE capsules SET status = 'closed', closed_at = ? WHERE id = ?", closedAt, id); err != nil {
			return err
		}
		c, err = getCapsule(ctx, tx, id)
		return err
	})
	return c, err
}

// Capsule implements memory.CapsuleStore.
func (db *DB) Capsule(ctx context.Context, id string) (memory.Capsule, error) {
	var c memory.Capsule
	err := db.read(ctx, "reading capsule", func(tx queryer) error {
		var err error
		c, err = getCapsule(ctx, tx, id)
		return err
	})
	return c, err
}

func getCapsule(ctx context.Context, q queryer, id string) (memory.Capsule, error) {
	c, err := scanCapsule(q.QueryRowContext(ctx, "SELECT "+capColumns+" FROM capsules c WHERE c.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, notFound("capsule", id)
	}
	if err != nil {
		return c, err
	}
	rows, err := q.QueryContext(ctx, "SELECT observation_id FROM capsule_observations WHERE capsule_id = ? ORDER BY position", id)
	if err != nil {
		return c, err
	}
	defer rows.Close()
	c.ObservationIDs = []string{}
	for rows.Next() {
		var oid string
		if err := rows.Scan(&oid); err != nil {
			return c, err
		}
		c.ObservationIDs = append(c.ObservationIDs, oid)
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	err = q.QueryRowContext(ctx, "SELECT id FROM summaries WHERE capsule_id = ?", id).Scan(&c.SummaryID)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return c, err
}

// PutSummary implements memory.CapsuleStore.
func (db *DB) PutSummary(ctx context.Context, s memory.Summary) (memory.Summary, error) {
	var out memory.Summary
	err := db.write(ctx, "writing summary", func(tx *sql.Tx) error {
		var err error
		out, err = putSummary(ctx, tx, s)
		return err
	})
	return out, err
}

// putSummary inserts the capsule's summary or replaces the existing one,
// keeping its id, and reindexes it.
func putSummary(ctx context.Context, tx queryer, s memory.Summary) (memory.Summary, error) {
	var scope memory.Scope
	err := tx.QueryRowContext(ctx, "SELECT session_id, repo_id, agent_id, user_id FROM capsules WHERE id = ?", s.CapsuleID).
		Scan(&scope.SessionID, &scope.RepoID, &scope.AgentID, &scope.UserID)
	if errors.Is(err, sql.ErrNoRows) {
		return s, notFound("capsule", s.CapsuleID)
	}
	if err != nil {
		return s, err
	}
	s.Scope = scope
	if s.EvidenceRefs == nil {
		s.EvidenceRefs = []string{}
	}
	refs, err := json.Marshal(s.EvidenceRefs)
	if err != nil {
		return s, err
	}
	if s.Redacted {
		s.Content = memory.RedactedContent
	}
	var seq int64
	var oldID, oldContent string
	var oldRedacted bool
	err = tx.QueryRowContext(ctx, "SELECT seq, id, content, redacted FROM summaries WHERE capsule_id = ?", s.CapsuleID).Scan(&seq, &oldID, &oldContent, &oldRedacted)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		args := append([]any{s.ID, s.CapsuleID, s.Content, s.Confidence, s.CreatedAt, string(refs), s.Redacted}, scopeArgs(scope)...)
		res, err := tx.ExecContext(ctx, `INSERT INTO summaries (id, capsule_id, content, confidence, created_at, evidence_refs, redacted,
			session_id, repo_id, agent_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
		if isUnique(err) {
			return s, memory.Wrap(memory.CodeConflict, err, "summary id %q already exists", s.ID)
		}
		if err != nil {
			return s, err
		}
		if seq, err = res.LastInsertId(); err != nil {
			return s, err
		}
	case err != nil:
		return s, err
	default:
		s.ID = oldID
		// A forgotten summary's text is not in the index (and must not be
		// given to FTS5's delete, which would corrupt it).
		if !oldRedacted {
			if _, err := tx.ExecContext(ctx, "INSERT INTO summaries_fts(summaries_fts, rowid, content) VALUES ('delete', ?, ?)", seq, oldContent); err != nil {
				return s, err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE summaries SET content = ?, confidence = ?, created_at = ?, evidence_refs = ?, redacted = ? WHERE seq = ?`,
			s.Content, s.Confidence, s.CreatedAt, string(refs), s.Redacted, seq); err != nil {
			return s, err
		}
	}
	if s.Redacted {
		return s, nil
	}
	_, err = tx.ExecContext(ctx, "INSERT INTO summaries_fts(rowid, content) VALUES (?, ?)", seq, s.Content)
	return s, err
}

// RedactSummary implements memory.CapsuleStore.
func (db *DB) RedactSummary(ctx context.Context, id string) (memory.Summary, error) {
	var s memory.Summary
	err := db.write(ctx, "forgetting summary", func(tx *sql.Tx) error {
		var seq int64
		var redacted bool
		var old string
		err := tx.QueryRowContext(ctx, "SELECT seq, redacted, content FROM summaries WHERE id = ?", id).Scan(&seq, &redacted, &old)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("summary", id)
		}
		if err != nil {
			return err
		}
		if !redacted {
			if _, err := tx.ExecContext(ctx, "INSERT INTO summaries_fts(summaries_fts, rowid, content) VALUES ('delete', ?, ?)", seq, old); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "UPDATE summaries SET content = ?, redacted = 1 WHERE seq = ?", memory.RedactedContent, seq); err != nil {
				return err
			}
		}
		s, err = getSummary(ctx, tx, id)
		return err
	})
	if err != nil {
		return s, err
	}
	db.checkpoint(ctx)
	return s, nil
}

// Summary implements memory.CapsuleStore.
func (db *DB) Summary(ctx context.Context, id string) (memory.Summary, error) {
	var s memory.Summary
	err := db.read(ctx, "reading summary", func(tx queryer) error {
		var err error
		s, err = getSummary(ctx, tx, id)
		return err
	})
	return s, err
}

func getSummary(ctx context.Context, q queryer, id string) (memory.Summary, error) {
	s, err := scanSummary(q.QueryRowContext(ctx, "SELECT "+sumColumns+" FROM summaries s WHERE s.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, notFound("summary", id)
	}
	return s, err
}

// CurrentSummary implements memory.CapsuleStore.
func (db *DB) CurrentSummary(ctx context.Context, scope memory.Scope) (*memory.Summary, error) {
	var out *memory.Summary
	err := db.read(ctx, "reading the current summary", func(tx queryer) error {
		var err error
		out, err = currentSummary(ctx, tx, scope)
		return err
	})
	return out, err
}

func currentSummary(ctx context.Context, tx queryer, scope memory.Scope) (*memory.Summary, error) {
	if scope.SessionID == "" {
		return nil, nil
	}
	b := newQuery("SELECT " + sumColumns + ` FROM capsules c JOIN summaries s ON s.capsule_id = c.id
		WHERE c.status = 'open' AND s.redacted = 0`)
	b.scope("c", scope)
	b.sql.WriteString(" ORDER BY c.opened_at DESC, c.seq DESC LIMIT 1")
	s, err := scanSummary(tx.QueryRowContext(ctx, b.sql.String(), b.args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}
