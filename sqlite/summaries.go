package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

// putSummary inserts the capsule's summary or replaces the existing one,
// keeping its id, and reindexes it in summaries_fts. The shared half has
// given it its capsule's scope.
func putSummary(ctx context.Context, tx queryer, s memory.Summary) (memory.Summary, error) {
	var seq int64
	var oldID, oldContent string
	var oldRedacted bool
	err := tx.QueryRowContext(ctx, "SELECT seq, id, content, redacted FROM summaries WHERE capsule_id = ?", s.CapsuleID).Scan(&seq, &oldID, &oldContent, &oldRedacted)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		args := append([]any{s.ID, s.CapsuleID, s.Content, s.Confidence, s.CreatedAt, sqlstore.JSONList(s.EvidenceRefs), s.Redacted},
			sqlstore.ScopeArgs(s.Scope)...)
		err := tx.QueryRowContext(ctx, `INSERT INTO summaries (id, capsule_id, content, confidence, created_at, evidence_refs, redacted,
			session_id, repo_id, agent_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`, args...).Scan(&seq)
		if isUnique(err) {
			return s, memory.Wrap(memory.CodeConflict, err, "summary id %q already exists", s.ID)
		}
		if err != nil {
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
			s.Content, s.Confidence, s.CreatedAt, sqlstore.JSONList(s.EvidenceRefs), s.Redacted, seq); err != nil {
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
	err := db.erase(ctx, "forgetting summary", func(tx *sql.Tx) error {
		var seq int64
		var redacted bool
		var old string
		err := tx.QueryRowContext(ctx, "SELECT seq, redacted, content FROM summaries WHERE id = ?", id).Scan(&seq, &redacted, &old)
		if errors.Is(err, sql.ErrNoRows) {
			return sqlstore.NotFound("summary", id)
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
		s, err = sqlstore.GetSummary(ctx, querier{tx}, id)
		return err
	})
	return s, err
}
