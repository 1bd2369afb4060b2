package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/cairnhq/cairn/memory"
)

// LoadIndex implements memory.Reader for the snapshot reader.
func (r snapshotReader) LoadIndex(ctx context.Context, space memory.Space, fn func(memory.IndexRecord) error) (int64, error) {
	last, err := lastChange(ctx, r.tx)
	if err != nil {
		return 0, dbError(err, "loading the index")
	}
	sp := []any{space.Provider, space.Model, space.Dim}
	err = eachRowArgs(ctx, r.tx, `SELECT o.id, o.content, o.ts, o.session_id, o.repo_id, o.agent_id, o.user_id,
		coalesce(m.capsule_id, ''), coalesce(m.position, -1), e.vector
		FROM observations o LEFT JOIN capsule_observations m ON m.observation_id = o.id
		LEFT JOIN embeddings e ON e.provider = ? AND e.model = ? AND e.dim = ? AND e.kind = 'observation' AND e.ref = o.id
		WHERE o.redacted = 0 ORDER BY o.seq`, sp, func(s scanner) error {
		rec := memory.IndexRecord{Type: memory.TargetObservation}
		var vec []byte
		if err := s.Scan(&rec.ID, &rec.Content, &rec.TS, &rec.Scope.SessionID, &rec.Scope.RepoID, &rec.Scope.AgentID,
			&rec.Scope.UserID, &rec.CapsuleID, &rec.Position, &vec); err != nil {
			return err
		}
		if vec != nil {
			rec.Vector = decodeVector(vec)
		}
		return fn(rec)
	})
	if err != nil {
		return 0, dbError(err, "loading the index")
	}
	err = eachRowArgs(ctx, r.tx, `SELECT s.id, s.content, s.created_at, s.session_id, s.repo_id, s.agent_id, s.user_id, e.vector
		FROM summaries s LEFT JOIN embeddings e ON e.provider = ? AND e.model = ? AND e.dim = ? AND e.kind = 'summary' AND e.ref = s.id
		ORDER BY s.seq`, sp, func(s scanner) error {
		rec := memory.IndexRecord{Type: memory.TargetSummary, Position: -1}
		var vec []byte
		if err := s.Scan(&rec.ID, &rec.Content, &rec.TS, &rec.Scope.SessionID, &rec.Scope.RepoID, &rec.Scope.AgentID, &rec.Scope.UserID, &vec); err != nil {
			return err
		}
		if vec != nil {
			rec.Vector = decodeVector(vec)
		}
		return fn(rec)
	})
	return last, dbError(err, "loading the index")
}

func lastChange(ctx context.Context, q queryer) (int64, error) {
	var last int64
	err := q.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM changes").Scan(&last)
	return last, err
}

// ChangesSince implements memory.Reader for the snapshot reader.
func (r snapshotReader) ChangesSince(ctx context.Context, space memory.Space, since int64) ([]memory.IndexRecord, int64, error) {
	last, err := lastChange(ctx, r.tx)
	if err != nil || last <= since {
		return nil, since, dbError(err, "reading changes")
	}
	type ref struct{ kind, id string }
	var refs []ref
	seen := map[ref]bool{}
	err = eachRow(ctx, r.tx, "SELECT kind, ref FROM changes WHERE seq > "+itoa(since)+" ORDER BY seq", func(s scanner) error {
		var c ref
		if err := s.Scan(&c.kind, &c.id); err != nil {
			return err
		}
		if !seen[c] {
			seen[c] = true
			refs = append(refs, c)
		}
		return nil
	})
	if err != nil {
		return nil, since, dbError(err, "reading changes")
	}
	var out []memory.IndexRecord
	for _, c := range refs {
		rec, err := indexRecord(ctx, r.tx, c.kind, c.id)
		if err == nil && !rec.Gone {
			rec.Vector, err = vectorFor(ctx, r.tx, space, memory.VectorKind(rec.Type), rec.ID)
		}
		if err != nil {
			return nil, since, dbError(err, "reading changes")
		}
		if rec.Type == memory.TargetObservation || rec.Type == memory.TargetSummary {
			out = append(out, rec)
		}
	}
	return out, last, nil
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// indexRecord reads the current state of one record.
func indexRecord(ctx context.Context, q queryer, kind, id string) (memory.IndexRecord, error) {
	rec := memory.IndexRecord{Type: memory.TargetType(kind), ID: id, Position: -1}
	switch rec.Type {
	case memory.TargetObservation:
		var redacted bool
		err := q.QueryRowContext(ctx, `SELECT o.content, o.ts, o.redacted, o.session_id, o.repo_id, o.agent_id, o.user_id,
			coalesce(m.capsule_id, ''), coalesce(m.position, -1)
			FROM observations o LEFT JOIN capsule_observations m ON m.observation_id = o.id WHERE o.id = ?`, id).
			Scan(&rec.Content, &rec.TS, &redacted, &rec.Scope.SessionID, &rec.Scope.RepoID, &rec.Scope.AgentID, &rec.Scope.UserID,
				&rec.CapsuleID, &rec.Position)
		if errors.Is(err, sql.ErrNoRows) || redacted {
			rec.Gone, rec.Content = true, ""
			return rec, nil
		}
		return rec, err
	case memory.TargetSummary:
		err := q.QueryRowContext(ctx, `SELECT content, created_at, session_id, repo_id, agent_id, user_id FROM summaries WHERE id = ?`, id).
			Scan(&rec.Content, &rec.TS, &rec.Scope.SessionID, &rec.Scope.RepoID, &rec.Scope.AgentID, &rec.Scope.UserID)
		if errors.Is(err, sql.ErrNoRows) {
			rec.Gone = true
			return rec, nil
		}
		return rec, err
	}
	rec.Gone = true
	return rec, nil
}

// Entities implements memory.Reader for the snapshot reader.
func (r snapshotReader) Entities(ctx context.Context, refs []memory.EntityRef) ([]memory.Entity, error) {
	out := make([]memory.Entity, 0, len(refs))
	for _, ref := range refs {
		e, err := pinTarget(ctx, r.tx, ref.Type, ref.ID)
		if memory.IsCode(err, memory.CodeNotFound) {
			continue
		}
		if err != nil {
			return nil, dbError(err, "reading records")
		}
		out = append(out, e)
	}
	return out, nil
}
