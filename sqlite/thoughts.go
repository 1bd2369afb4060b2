package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/cairnhq/cairn/memory"
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

func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// AddThought implements memory.ThoughtStore.
func (db *DB) AddThought(ctx context.Context, t memory.Thought) (memory.Thought, error) {
	err := db.write(ctx, "storing a thought", func(tx *sql.Tx) error { return insertThought(ctx, tx, t) })
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
	_, err := tx.ExecContext(ctx, `INSERT INTO thoughts (id, content, origin, tags, is_private, status, significance,
		is_summary, summary_of, pipeline, created_at, redacted, session_id, repo_id, agent_id, user_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if isUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "thought id %q already exists", t.ID)
	}
	return err
}

// Thought implements memory.ThoughtStore.
func (db *DB) Thought(ctx context.Context, id string) (memory.Thought, error) {
	var t memory.Thought
	err := db.read(ctx, "reading a thought", func(tx queryer) error {
		var err error
		t, err = getThought(ctx, tx, id)
		return err
	})
	return t, err
}

func getThought(ctx context.Context, q queryer, id string) (memory.Thought, error) {
	t, err := scanThought(q.QueryRowContext(ctx, "SELECT "+thoughtColumns+" FROM thoughts t WHERE t.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, notFound("thought", id)
	}
	return t, err
}

// RedactThought implements memory.ThoughtStore.
func (db *DB) RedactThought(ctx context.Context, id string) (memory.Thought, error) {
	var t memory.Thought
	err := db.write(ctx, "forgetting a thought", func(tx *sql.Tx) error {
		// The embeddings_thought_forgotten trigger deletes its vectors.
		if _, err := tx.ExecContext(ctx, "UPDATE thoughts SET content = ?, tags = '[]', redacted = 1 WHERE id = ? AND redacted = 0",
			memory.RedactedContent, id); err != nil {
			return err
		}
		// A summary thought quotes what it summarises (inner_voice saves
		// its answer's sentences verbatim): the summaries made from the
		// thought, and the summaries of those, are forgotten with it.
		if _, err := tx.ExecContext(ctx, `WITH RECURSIVE derived(id) AS (
				SELECT ?
				UNION
				SELECT t.id FROM thoughts t JOIN derived d JOIN json_each(t.summary_of) j ON j.value = d.id
				WHERE t.is_summary = 1)
			UPDATE thoughts SET content = ?, tags = '[]', redacted = 1
			WHERE id IN (SELECT id FROM derived) AND id <> ? AND redacted = 0`,
			id, memory.RedactedContent, id); err != nil {
			return err
		}
		var err error
		t, err = getThought(ctx, tx, id)
		return err
	})
	if err != nil {
		return t, err
	}
	db.checkpoint(ctx)
	return t, nil
}

// SetThoughtStatus implements memory.ThoughtStore.
func (db *DB) SetThoughtStatus(ctx context.Context, ids []string, status string) (int, error) {
	var n int64
	err := db.write(ctx, "marking thoughts", func(tx *sql.Tx) error {
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, "UPDATE thoughts SET status = ? WHERE id = ? AND status <> ?", status, id, status)
			if err != nil {
				return err
			}
			c, _ := res.RowsAffected()
			n += c
		}
		return nil
	})
	return int(n), err
}

// Thoughts implements memory.ThoughtStore.
func (db *DB) Thoughts(ctx context.Context, f memory.ThoughtFilter) ([]memory.Thought, error) {
	var out []memory.Thought
	err := db.read(ctx, "listing thoughts", func(tx queryer) error {
		q := newQuery("SELECT " + thoughtColumns + " FROM thoughts t WHERE 1 = 1")
		q.scope("t", f.Scope)
		if !f.IncludePrivate {
			q.add(" AND t.is_private = 0")
		}
		if f.Status != "" {
			q.add(" AND t.status = ?", f.Status)
		}
		limit := f.Limit
		if limit <= 0 {
			limit = 100
		}
		q.add(" ORDER BY t.created_at DESC, t.id LIMIT ?", limit)
		return eachRowArgs(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			t, err := scanThought(s)
			out = append(out, t)
			return err
		})
	})
	return out, err
}
