package postgres

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
)

// OpenCapsule implements memory.CapsuleStore. The schema's unique index
// on open capsules per session is what holds the rule when servers race.
func (db *DB) OpenCapsule(ctx context.Context, c memory.Capsule) (memory.Capsule, error) {
	c.Status = memory.CapsuleOpen
	c.ClosedAt = nil
	c.ObservationIDs = []string{}
	c.SummaryID = ""
	err := db.write(ctx, "opening capsule", func(tx pgx.Tx) error {
		if err := checkNoOpenCapsule(ctx, tx, c.Scope.SessionID, ""); err != nil {
			return err
		}
		return insertCapsule(ctx, tx, c)
	})
	return c, err
}

// checkNoOpenCapsule is a conflict when the session has an open capsule
// (what names the capsule being written, for the message).
func checkNoOpenCapsule(ctx context.Context, tx queryer, session, what string) error {
	if session == "" {
		return nil
	}
	var other string
	err := tx.QueryRow(ctx, "SELECT id FROM capsules WHERE session_id = $1 AND status = 'open'", session).Scan(&other)
	switch {
	case err == nil && what == "":
		return memory.Errorf(memory.CodeConflict, "session %q already has an open capsule %q; close it first", session, other)
	case err == nil:
		return memory.Errorf(memory.CodeConflict, "%s: session %q already has an open capsule %q", what, session, other)
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	}
	return err
}

func insertCapsule(ctx context.Context, tx queryer, c memory.Capsule) error {
	args := append([]any{c.ID, c.Type, c.Intent, string(c.Status), c.OpenedAt, c.ClosedAt}, scopeArgs(c.Scope)...)
	_, err := tx.Exec(ctx, `INSERT INTO capsules (id, type, intent, status, opened_at, closed_at,
		session_id, repo_id, agent_id, user_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, args...)
	switch {
	case isUnique(err) && constraint(err) == "capsules_one_open_per_session":
		return memory.Wrap(memory.CodeConflict, err, "session %q already has an open capsule; close it first", c.Scope.SessionID)
	case isUnique(err):
		return memory.Wrap(memory.CodeConflict, err, "capsule id %q already exists", c.ID)
	}
	return err
}

// CloseCapsule implements memory.CapsuleStore.
func (db *DB) CloseCapsule(ctx context.Context, id string, closedAt int64, summary *memory.Summary) (memory.Capsule, error) {
	var c memory.Capsule
	err := db.write(ctx, "closing capsule", func(tx pgx.Tx) error {
		cur, err := lockCapsule(ctx, tx, id)
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
		if _, err := tx.Exec(ctx, "UPDATE capsules SET status = 'closed', closed_at = $1 WHERE id = $2", closedAt, id); err != nil {
			return err
		}
		c, err = getCapsule(ctx, tx, id)
		return err
	})
	return c, err
}

// lockCapsule reads a capsule and locks it until the transaction ends.
func lockCapsule(ctx context.Context, tx queryer, id string) (memory.Capsule, error) {
	c, err := scanCapsule(tx.QueryRow(ctx, "SELECT "+capColumns+" FROM capsules c WHERE c.id = $1 FOR UPDATE", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, notFound("capsule", id)
	}
	return c, err
}

// Capsule implements memory.CapsuleStore.
func (db *DB) Capsule(ctx context.Context, id string) (memory.Capsule, error) {
	var c memory.Capsule
	err := db.read(ctx, "reading capsule", func(tx pgx.Tx) error {
		var err error
		c, err = getCapsule(ctx, tx, id)
		return err
	})
	return c, err
}

func getCapsule(ctx context.Context, q queryer, id string) (memory.Capsule, error) {
	c, err := scanCapsule(q.QueryRow(ctx, "SELECT "+capColumns+" FROM capsules c WHERE c.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, notFound("capsule", id)
	}
	if err != nil {
		return c, err
	}
	c.ObservationIDs = []string{}
	err = eachRow(ctx, q, "SELECT observation_id FROM capsule_observations WHERE capsule_id = $1 ORDER BY position", []any{id}, func(s scanner) error {
		var oid string
		err := s.Scan(&oid)
		c.ObservationIDs = append(c.ObservationIDs, oid)
		return err
	})
	if err != nil {
		return c, err
	}
	err = q.QueryRow(ctx, "SELECT id FROM summaries WHERE capsule_id = $1", id).Scan(&c.SummaryID)
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	return c, err
}

// PutSummary implements memory.CapsuleStore.
func (db *DB) PutSummary(ctx context.Context, s memory.Summary) (memory.Summary, error) {
	var out memory.Summary
	err := db.write(ctx, "writing summary", func(tx pgx.Tx) error {
		var err error
		out, err = putSummary(ctx, tx, s)
		return err
	})
	return out, err
}

// putSummary inserts the capsule's summary or replaces the existing one,
// keeping its id. It locks the capsule, so writers of one capsule's
// summary take turns.
func putSummary(ctx context.Context, tx queryer, s memory.Summary) (memory.Summary, error) {
	var scope memory.Scope
	err := tx.QueryRow(ctx, "SELECT session_id, repo_id, agent_id, user_id FROM capsules WHERE id = $1 FOR UPDATE", s.CapsuleID).
		Scan(&scope.SessionID, &scope.RepoID, &scope.AgentID, &scope.UserID)
	if errors.Is(err, pgx.ErrNoRows) {
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
	var doc *string
	var n int
	if !s.Redacted {
		d, l := ftsDoc(s.Content)
		doc, n = &d, l
	}
	var oldID string
	err = tx.QueryRow(ctx, "SELECT id FROM summaries WHERE capsule_id = $1", s.CapsuleID).Scan(&oldID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		args := append([]any{s.ID, s.CapsuleID, s.Content, s.Confidence, s.CreatedAt, string(refs), s.Redacted, doc, n}, scopeArgs(scope)...)
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
			s.Content, s.Confidence, s.CreatedAt, string(refs), s.Redacted, doc, n, s.ID); err != nil {
			return s, err
		}
	}
	return s, nil
}

// RedactSummary implements memory.CapsuleStore.
func (db *DB) RedactSummary(ctx context.Context, id string) (memory.Summary, error) {
	var s memory.Summary
	err := db.write(ctx, "forgetting summary", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE summaries SET content = $2, redacted = true, fts = NULL, fts_len = 0
			WHERE id = $1 AND NOT redacted`, id, memory.RedactedContent); err != nil {
			return err
		}
		var err error
		s, err = getSummary(ctx, tx, id)
		return err
	})
	return s, err
}

// Summary implements memory.CapsuleStore.
func (db *DB) Summary(ctx context.Context, id string) (memory.Summary, error) {
	var s memory.Summary
	err := db.read(ctx, "reading summary", func(tx pgx.Tx) error {
		var err error
		s, err = getSummary(ctx, tx, id)
		return err
	})
	return s, err
}

func getSummary(ctx context.Context, q queryer, id string) (memory.Summary, error) {
	s, err := scanSummary(q.QueryRow(ctx, "SELECT "+sumColumns+" FROM summaries s WHERE s.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, notFound("summary", id)
	}
	return s, err
}

// CurrentSummary implements memory.CapsuleStore.
func (db *DB) CurrentSummary(ctx context.Context, scope memory.Scope) (*memory.Summary, error) {
	var out *memory.Summary
	err := db.read(ctx, "reading the current summary", func(tx pgx.Tx) error {
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
	q := newQuery("SELECT " + sumColumns + ` FROM capsules c JOIN summaries s ON s.capsule_id = c.id
		WHERE c.status = 'open' AND NOT s.redacted`)
	q.scope("c", scope)
	q.add(" ORDER BY c.opened_at DESC, c.seq DESC LIMIT 1")
	s, err := scanSummary(tx.QueryRow(ctx, q.sql.String(), q.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}
