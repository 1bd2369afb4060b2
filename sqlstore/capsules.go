package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnhq/cairn/memory"
)

// OpenCapsule implements memory.CapsuleStore.
func (s *Store) OpenCapsule(ctx context.Context, c memory.Capsule) (memory.Capsule, error) {
	c.Status = memory.CapsuleOpen
	c.ClosedAt = nil
	c.ObservationIDs = []string{}
	c.SummaryID = ""
	err := s.b.Write(ctx, "opening capsule", func(q Querier) error {
		if err := checkNoOpenCapsule(ctx, q, c.Scope.SessionID, ""); err != nil {
			return err
		}
		return s.InsertCapsule(ctx, q, c)
	})
	return c, err
}

// checkNoOpenCapsule is a conflict when the session has an open capsule
// (what names the capsule being written, for the message).
func checkNoOpenCapsule(ctx context.Context, q Querier, session, what string) error {
	if session == "" {
		return nil
	}
	var other string
	err := q.QueryRow(ctx, "SELECT id FROM capsules WHERE session_id = ? AND status = 'open'", session).Scan(&other)
	switch {
	case err == nil && what == "":
		return memory.Errorf(memory.CodeConflict, "session %q already has an open capsule %q; close it first", session, other)
	case err == nil:
		return memory.Errorf(memory.CodeConflict, "%s: session %q already has an open capsule %q", what, session, other)
	case errors.Is(err, ErrNoRows):
		return nil
	}
	return err
}

// InsertCapsule writes a new capsule row, without its observations
// (conflict when its id exists, or when the schema holds a session to one
// open capsule and it has one).
func (s *Store) InsertCapsule(ctx context.Context, q Querier, c memory.Capsule) error {
	args := append([]any{c.ID, c.Type, c.Intent, string(c.Status), c.OpenedAt, c.ClosedAt}, ScopeArgs(c.Scope)...)
	_, err := q.Exec(ctx, `INSERT INTO capsules (id, type, intent, status, opened_at, closed_at,
		session_id, repo_id, agent_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	switch {
	case s.d.IsUnique(err) && s.d.Constraint(err) == "capsules_one_open_per_session":
		return memory.Wrap(memory.CodeConflict, err, "session %q already has an open capsule; close it first", c.Scope.SessionID)
	case s.d.IsUnique(err):
		return memory.Wrap(memory.CodeConflict, err, "capsule id %q already exists", c.ID)
	}
	return err
}

// CheckNewCapsule refuses to import a capsule whose id is taken, or an
// open one of a session that has an open capsule.
func CheckNewCapsule(ctx context.Context, q Querier, c memory.Capsule) error {
	if c.Status == memory.CapsuleOpen {
		if err := checkNoOpenCapsule(ctx, q, c.Scope.SessionID, fmt.Sprintf("capsule %q", c.ID)); err != nil {
			return err
		}
	}
	ok, err := exists(ctx, q, "SELECT 1 FROM capsules WHERE id = ?", c.ID)
	if ok {
		return memory.Errorf(memory.CodeConflict, "capsule id %q already exists", c.ID)
	}
	return err
}

// CloseCapsule implements memory.CapsuleStore.
func (s *Store) CloseCapsule(ctx context.Context, id string, closedAt int64, summary *memory.Summary) (memory.Capsule, error) {
	var c memory.Capsule
	err := s.b.Write(ctx, "closing capsule", func(q Querier) error {
		// The capsule's row stays locked to the commit: of writers
		// closing it at once, one closes it and the others find it
		// closed.
		cur, err := scanCapsule(q.QueryRow(ctx, "SELECT "+capColumns+" FROM capsules c WHERE c.id = ?"+s.d.ForUpdate, id))
		if errors.Is(err, ErrNoRows) {
			return NotFound("capsule", id)
		}
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
			m := *summary
			m.CapsuleID = id
			if _, err := s.putSummary(ctx, q, m); err != nil {
				return err
			}
		}
		if _, err := q.Exec(ctx, "UPDATE capsules SET status = 'closed', closed_at = ? WHERE id = ?", closedAt, id); err != nil {
			return err
		}
		c, err = getCapsule(ctx, q, id)
		return err
	})
	return c, err
}

// Capsule implements memory.CapsuleStore.
func (s *Store) Capsule(ctx context.Context, id string) (memory.Capsule, error) {
	var c memory.Capsule
	err := s.b.Read(ctx, "reading capsule", func(q Querier) error {
		var err error
		c, err = getCapsule(ctx, q, id)
		return err
	})
	return c, err
}

// getCapsule reads a capsule with its observation ids and its summary's.
func getCapsule(ctx context.Context, q Querier, id string) (memory.Capsule, error) {
	c, err := scanCapsule(q.QueryRow(ctx, "SELECT "+capColumns+" FROM capsules c WHERE c.id = ?", id))
	if errors.Is(err, ErrNoRows) {
		return c, NotFound("capsule", id)
	}
	if err != nil {
		return c, err
	}
	c.ObservationIDs = []string{}
	err = EachRow(ctx, q, "SELECT observation_id FROM capsule_observations WHERE capsule_id = ? ORDER BY position", []any{id}, func(sc Scanner) error {
		var oid string
		err := sc.Scan(&oid)
		c.ObservationIDs = append(c.ObservationIDs, oid)
		return err
	})
	if err != nil {
		return c, err
	}
	err = q.QueryRow(ctx, "SELECT id FROM summaries WHERE capsule_id = ?", id).Scan(&c.SummaryID)
	if errors.Is(err, ErrNoRows) {
		err = nil
	}
	return c, err
}

// PutSummary implements memory.CapsuleStore.
func (s *Store) PutSummary(ctx context.Context, m memory.Summary) (memory.Summary, error) {
	var out memory.Summary
	err := s.b.Write(ctx, "writing summary", func(q Querier) error {
		var err error
		out, err = s.putSummary(ctx, q, m)
		return err
	})
	return out, err
}

// putSummary gives a summary its capsule's scope and has the backend
// write it. It locks the capsule, so writers of one capsule's summary
// take turns.
func (s *Store) putSummary(ctx context.Context, q Querier, m memory.Summary) (memory.Summary, error) {
	var scope memory.Scope
	err := q.QueryRow(ctx, "SELECT session_id, repo_id, agent_id, user_id FROM capsules WHERE id = ?"+s.d.ForUpdate, m.CapsuleID).
		Scan(&scope.SessionID, &scope.RepoID, &scope.AgentID, &scope.UserID)
	if errors.Is(err, ErrNoRows) {
		return m, NotFound("capsule", m.CapsuleID)
	}
	if err != nil {
		return m, err
	}
	m.Scope = scope
	if m.EvidenceRefs == nil {
		m.EvidenceRefs = []string{}
	}
	if m.Redacted {
		m.Content = memory.RedactedContent
	}
	return s.b.PutSummary(ctx, q, m)
}

// Summary implements memory.CapsuleStore.
func (s *Store) Summary(ctx context.Context, id string) (memory.Summary, error) {
	var m memory.Summary
	err := s.b.Read(ctx, "reading summary", func(q Querier) error {
		var err error
		m, err = GetSummary(ctx, q, id)
		return err
	})
	return m, err
}

// GetSummary reads one summary (not_found when missing).
func GetSummary(ctx context.Context, q Querier, id string) (memory.Summary, error) {
	m, err := ScanSummary(q.QueryRow(ctx, "SELECT "+SumColumns+" FROM summaries s WHERE s.id = ?", id))
	if errors.Is(err, ErrNoRows) {
		return m, NotFound("summary", id)
	}
	return m, err
}

// CurrentSummary implements memory.CapsuleStore.
func (s *Store) CurrentSummary(ctx context.Context, scope memory.Scope) (*memory.Summary, error) {
	var out *memory.Summary
	err := s.b.Read(ctx, "reading the current summary", func(q Querier) error {
		var err error
		out, err = s.currentSummary(ctx, q, scope)
		return err
	})
	return out, err
}

func (s *Store) currentSummary(ctx context.Context, tx Querier, scope memory.Scope) (*memory.Summary, error) {
	if scope.SessionID == "" {
		return nil, nil
	}
	q := s.d.NewQuery("SELECT " + SumColumns + ` FROM capsules c JOIN summaries s ON s.capsule_id = c.id
		WHERE c.status = 'open' AND s.redacted = false`)
	q.Scope("c", scope)
	q.Add(" ORDER BY c.opened_at DESC, c.seq DESC LIMIT 1")
	m, err := ScanSummary(tx.QueryRow(ctx, q.SQL(), q.Args()...))
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}
