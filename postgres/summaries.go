package postgres

import (
	"context"
	"errors"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"github.com/jackc/pgx/v5"
)

// putSummary inserts the capsule's summary or replaces the existing one,
// keeping its id, with its full-text column. The shared half has given
// it its capsule's scope, and locked the capsule.
func putSummary(ctx context.Context, tx queryer, s memory.Summary) (memory.Summary, error) {
	var doc *string
	var n int
	if !s.Redacted {
		d, l := ftsDoc(s.Content)
		doc, n = &d, l
	}
	refs := sqlstore.JSONList(s.EvidenceRefs)
	var oldID string
	err := tx.QueryRow(ctx, "SELECT id FROM summaries WHERE capsule_id = $1", s.CapsuleID).Scan(&oldID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		args := append([]any{s.ID, s.CapsuleID, s.Content, s.Confidence, s.CreatedAt, refs, s.Redacted, doc, n}, sqlstore.ScopeArgs(s.Scope)...)
		_, err := tx.Exec(ctx, `INSERT INTO summaries (id, capsule_id, content, confidence, created_at, evidence_refs, redacted, fts, fts_len,
			session_id, repo_id, agent_id, user_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::tsvector, $9, $10, $11, $12, $13)`, args...)
		if isUnique(err) && constraint(err) == "summaries_id_key" {
			return s, memory.Wrap(memory.CodeConflict, err, "summary id %q already exists", s.ID)
		}
		if err != nil {
			return s, err
		}
	case err != nil:
		return s, err
	default:
		s.ID = oldID
		if _, err := tx.Exec(ctx, `UPDATE summaries SET content = $1, confidence = $2, created_at = $3, evidence_refs = $4, redacted = $5,
			fts = $6::text::tsvector, fts_len = $7 WHERE id = $8`,
			s.Content, s.Confidence, s.CreatedAt, refs, s.Redacted, doc, n, s.ID); err != nil {
			return s, err
		}
	}
	return s, nil
}

// RedactSummary implements memory.CapsuleStore. The row is rewritten in
// place: its text and its terms leave every index at once (the vectors
// go with them, by trigger).
func (db *DB) RedactSummary(ctx context.Context, id string) (memory.Summary, error) {
	var s memory.Summary
	err := db.write(ctx, "forgetting summary", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE summaries SET content = $2, redacted = true, fts = NULL, fts_len = 0
			WHERE id = $1 AND NOT redacted`, id, memory.RedactedContent); err != nil {
			return err
		}
		var err error
		s, err = sqlstore.GetSummary(ctx, querier{tx}, id)
		return err
	})
	return s, err
}
