package postgres

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
)

const thoughtColumns = `t.id, t.content, t.origin, t.tags, t.is_private, t.status, t.significance, t.is_summary, t.summary_of,
	t.pipeline, t.created_at, t.session_id, t.repo_id, t.agent_id, t.user_id, t.redacted`

func scanThought(s scanner) (memory.Thought, error) {
	var t memory.Thought
	var tags, summaryOf string
	err := s.Scan(&t.ID, &t.Content, &t.Origin, &tags, &t.IsPrivate, &t.Status, &t.Significance, &t.IsSummary, &summaryOf,
		&t.Pipeline, &t.CreatedAt, &t.Scope.SessionID, &t.Scope.RepoID, &t.Scope.AgentID, &t.Scope.UserID, &t.Redacted)
	if err != nil {
		return t, err
	}
	t.Tags, t.SummaryOf = []string{}, []string{}
	if err := json.Unmarshal([]byte(tags), &t.Tags); err != nil {
		return t, err
	}
	return t, json.Unmarshal([]byte(summaryOf), &t.SummaryOf)
}

// AddThought implements memory.ThoughtStore.
func (db *DB) AddThought(ctx context.Context, t memory.Thought) (memory.Thought, error) {
	err := db.write(ctx, "storing a thought", func(tx pgx.Tx) error { return insertThought(ctx, tx, t) })
	if t.Tags == nil {
		t.Tags = []string{}
	}
	if t.SummaryOf == nil {
		t.SummaryOf = []string{}
	}
	return t, err
}

// insertThought writes a new thought (conflict when its id exists); a
// redacted one is written as RedactThought leaves it.
func insertThought(ctx context.Context, tx queryer, t memory.Thought) error {
	if t.Redacted {
		t.Content, t.Tags = memory.RedactedContent, nil
	}
	args := append([]any{t.ID, t.Content, string(t.Origin), jsonList(t.Tags), t.IsPrivate, t.Status, t.Significance,
		t.IsSummary, jsonList(t.SummaryOf), t.Pipeline, t.CreatedAt, t.Redacted}, scopeArgs(t.Scope)...)
	_, err := tx.Exec(ctx, `INSERT INTO thoughts (id, content, origin, tags, is_private, status, significance,
		is_summary, summary_of, pipeline, created_at, redacted, session_id, repo_id, agent_id, user_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`, args...)
	if isUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "thought id %q already exists", t.ID)
	}
	return err
}

// Thought implements memory.ThoughtStore.
func (db *DB) Thought(ctx context.Context, id string) (memory.Thought, error) {
	var t memory.Thought
	err := db.read(ctx, "reading a thought", func(tx pgx.Tx) error {
		var err error
		t, err = getThought(ctx, tx, id)
		return err
	})
	return t, err
}

func getThought(ctx context.Context, q queryer, id string) (memory.Thought, error) {
	t, err := scanThought(q.QueryRow(ctx, "SELECT "+thoughtColumns+" FROM thoughts t WHERE t.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, notFound("thought", id)
	}
	return t, err
}

// RedactThought implements memory.ThoughtStore.
func (db *DB) RedactThought(ctx context.Context, id string) (memory.Thought, error) {
	var t memory.Thought
	err := db.write(ctx, "forgetting a thought", func(tx pgx.Tx) error {
		// The embeddings_thought_forgotten trigger deletes its vectors.
		if _, err := tx.Exec(ctx, "UPDATE thoughts SET content = $1, tags = '[]', redacted = true WHERE id = $2 AND NOT redacted",
			memory.RedactedContent, id); err != nil {
			return err
		}
		// A summary thought quotes what it summarises (inner_voice saves
		// its answer's sentences verbatim): the summaries made from the
		// thought, and the summaries of those, are forgotten with it.
		if _, err := tx.Exec(ctx, `WITH RECURSIVE derived(id) AS (
				SELECT $1::text COLLATE "C"
				UNION
				SELECT t.id FROM derived d JOIN thoughts t ON t.is_summary
					JOIN LATERAL json_array_elements_text(t.summary_of::json) j(v) ON j.v = d.id)
			UPDATE thoughts SET content = $2, tags = '[]', redacted = true
			WHERE id IN (SELECT id FROM derived) AND id <> $1 AND NOT redacted`,
			id, memory.RedactedContent); err != nil {
			return err
		}
		var err error
		t, err = getThought(ctx, tx, id)
		return err
	})
	return t, err
}

// SetThoughtStatus implements memory.ThoughtStore.
func (db *DB) SetThoughtStatus(ctx context.Context, ids []string, status string) (int, error) {
	var n int64
	err := db.write(ctx, "marking thoughts", func(tx pgx.Tx) error {
		n = 0
		for _, id := range ids {
			tag, err := tx.Exec(ctx, "UPDATE thoughts SET status = $1 WHERE id = $2 AND status <> $1", status, id)
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
		}
		return nil
	})
	return int(n), err
}

// Thoughts implements memory.ThoughtStore.
func (db *DB) Thoughts(ctx context.Context, f memory.ThoughtFilter) ([]memory.Thought, error) {
	var out []memory.Thought
	err := db.read(ctx, "listing thoughts", func(tx pgx.Tx) error {
		out = nil
		q := newQuery("SELECT " + thoughtColumns + " FROM thoughts t WHERE true")
		q.scope("t", f.Scope)
		if !f.IncludePrivate {
			q.add(" AND NOT t.is_private")
		}
		if f.Status != "" {
			q.add(" AND t.status = " + q.arg(f.Status))
		}
		limit := f.Limit
		if limit <= 0 {
			limit = 100
		}
		q.add(" ORDER BY t.created_at DESC, t.id LIMIT " + q.arg(limit))
		return eachRow(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			t, err := scanThought(s)
			out = append(out, t)
			return err
		})
	})
	return out, err
}
