package sqlstore

import (
	"context"
	"errors"

	"github.com/cairnhq/cairn/memory"
)

// AddThought implements memory.ThoughtStore.
func (s *Store) AddThought(ctx context.Context, t memory.Thought) (memory.Thought, error) {
	err := s.b.Write(ctx, "storing a thought", func(q Querier) error { return s.insertThought(ctx, q, t) })
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
func (s *Store) insertThought(ctx context.Context, q Querier, t memory.Thought) error {
	if t.Redacted {
		t.Content, t.Tags = memory.RedactedContent, nil
	}
	args := append([]any{t.ID, t.Content, string(t.Origin), JSONList(t.Tags), t.IsPrivate, t.Status, t.Significance,
		t.IsSummary, JSONList(t.SummaryOf), t.Pipeline, t.CreatedAt, t.Redacted}, ScopeArgs(t.Scope)...)
	_, err := q.Exec(ctx, `INSERT INTO thoughts (id, content, origin, tags, is_private, status, significance,
		is_summary, summary_of, pipeline, created_at, redacted, session_id, repo_id, agent_id, user_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if s.d.IsUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "thought id %q already exists", t.ID)
	}
	return err
}

// Thought implements memory.ThoughtStore.
func (s *Store) Thought(ctx context.Context, id string) (memory.Thought, error) {
	var t memory.Thought
	err := s.b.Read(ctx, "reading a thought", func(q Querier) error {
		var err error
		t, err = getThought(ctx, q, id)
		return err
	})
	return t, err
}

func getThought(ctx context.Context, q Querier, id string) (memory.Thought, error) {
	t, err := scanThought(q.QueryRow(ctx, "SELECT "+thoughtColumns+" FROM thoughts t WHERE t.id = ?", id))
	if errors.Is(err, ErrNoRows) {
		return t, NotFound("thought", id)
	}
	return t, err
}

// RedactThought implements memory.ThoughtStore.
func (s *Store) RedactThought(ctx context.Context, id string) (memory.Thought, error) {
	var t memory.Thought
	err := s.b.Erase(ctx, "forgetting a thought", func(q Querier) error {
		// The thought's forget trigger deletes its vectors.
		if _, err := q.Exec(ctx, "UPDATE thoughts SET content = ?, tags = '[]', redacted = true WHERE id = ? AND redacted = false",
			memory.RedactedContent, id); err != nil {
			return err
		}
		// A summary thought quotes what it summarises (inner_voice saves
		// its answer's sentences verbatim): the summaries made from the
		// thought, and the summaries of those, are forgotten with it.
		if _, err := q.Exec(ctx, s.d.RedactDerived, id, memory.RedactedContent); err != nil {
			return err
		}
		var err error
		t, err = getThought(ctx, q, id)
		return err
	})
	return t, err
}

// SetThoughtStatus implements memory.ThoughtStore.
func (s *Store) SetThoughtStatus(ctx context.Context, ids []string, status string) (int, error) {
	var n int64
	err := s.b.Write(ctx, "marking thoughts", func(q Querier) error {
		n = 0
		for _, id := range ids {
			c, err := q.Exec(ctx, "UPDATE thoughts SET status = ?1 WHERE id = ?2 AND status <> ?1", status, id)
			if err != nil {
				return err
			}
			n += c
		}
		return nil
	})
	return int(n), err
}

// Thoughts implements memory.ThoughtStore.
func (s *Store) Thoughts(ctx context.Context, f memory.ThoughtFilter) ([]memory.Thought, error) {
	var out []memory.Thought
	err := s.b.Read(ctx, "listing thoughts", func(tx Querier) error {
		out = nil
		q := s.d.NewQuery("SELECT " + thoughtColumns + " FROM thoughts t WHERE true")
		q.Scope("t", f.Scope)
		if !f.IncludePrivate {
			q.Add(" AND t.is_private = false")
		}
		if f.Status != "" {
			q.Add(" AND t.status = ?", f.Status)
		}
		limit := f.Limit
		if limit <= 0 {
			limit = 100
		}
		q.Add(" ORDER BY t.created_at DESC, t.id LIMIT ?", limit)
		return EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
			t, err := scanThought(sc)
			out = append(out, t)
			return err
		})
	})
	return out, err
}
