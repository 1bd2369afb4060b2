package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

// capsuleSlot is what appending needs to know of a capsule.
type capsuleSlot struct {
	id     string
	status memory.CapsuleStatus
	scope  memory.Scope
	next   int // next membership position
}

// appender writes observations inside one transaction, caching capsule
// lookups across a batch.
type appender struct {
	tx        *sql.Tx
	insObs    *sql.Stmt
	insMember *sql.Stmt
	// unindexed are the rows written but not yet in the full-text index:
	// indexFTS adds them in a few statements at the end of the batch.
	// (Each observation insert runs a trigger, so it is a statement
	// transaction; FTS5 flushes its pending terms at every such savepoint,
	// so indexing row by row between them wrote one small segment per
	// row and spent the batch merging them.)
	unindexed []int64
	byID      map[string]*capsuleSlot
	bySession map[string]*capsuleSlot // nil value: the session has no open capsule
}

func newAppender(ctx context.Context, tx *sql.Tx) (*appender, error) {
	a := &appender{tx: tx, byID: map[string]*capsuleSlot{}, bySession: map[string]*capsuleSlot{}}
	var err error
	if a.insObs, err = tx.PrepareContext(ctx, `INSERT INTO observations
		(id, kind, content, provenance, ts, redacted, session_id, repo_id, agent_id, user_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
		return nil, err
	}
	if a.insMember, err = tx.PrepareContext(ctx, `INSERT INTO capsule_observations(capsule_id, position, observation_id) VALUES (?, ?, ?)`); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *appender) close() {
	for _, s := range []*sql.Stmt{a.insObs, a.insMember} {
		if s != nil {
			s.Close()
		}
	}
}

func (a *appender) loadSlot(ctx context.Context, where string, arg any) (*capsuleSlot, error) {
	row := a.tx.QueryRowContext(ctx, `SELECT c.id, c.status, c.session_id, c.repo_id, c.agent_id, c.user_id,
		(SELECT coalesce(max(position), -1) + 1 FROM capsule_observations m WHERE m.capsule_id = c.id)
		FROM capsules c WHERE `+where, arg)
	var s capsuleSlot
	err := row.Scan(&s.id, &s.status, &s.scope.SessionID, &s.scope.RepoID, &s.scope.AgentID, &s.scope.UserID, &s.next)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a.byID[s.id] = &s
	return &s, nil
}

// capsuleFor resolves the capsule an observation joins: the named one, or
// the open capsule of its session.
func (a *appender) capsuleFor(ctx context.Context, n memory.NewObservation) (*capsuleSlot, error) {
	if n.CapsuleID != "" {
		if s, ok := a.byID[n.CapsuleID]; ok {
			return s, nil
		}
		s, err := a.loadSlot(ctx, "c.id = ?", n.CapsuleID)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, sqlstore.NotFound("capsule", n.CapsuleID)
		}
		return s, nil
	}
	sess := n.Scope.SessionID
	if sess == "" {
		return nil, nil
	}
	if s, ok := a.bySession[sess]; ok {
		return s, nil
	}
	s, err := a.loadSlot(ctx, "c.session_id = ? AND c.status = 'open'", sess)
	if err != nil {
		return nil, err
	}
	a.bySession[sess] = s
	return s, nil
}

// append stores one observation and returns it as stored.
func (a *appender) append(ctx context.Context, n memory.NewObservation) (memory.Observation, error) {
	o := n.Observation
	slot, err := a.capsuleFor(ctx, n)
	if err != nil {
		return o, err
	}
	if slot != nil {
		dim := o.Scope.Conflicts(slot.scope)
		switch {
		case n.CapsuleID != "" && slot.status != memory.CapsuleOpen:
			return o, memory.Errorf(memory.CodeConflict, "capsule %q is closed; open a new capsule to record into", slot.id)
		case n.CapsuleID != "" && dim != "":
			return o, memory.Errorf(memory.CodeInvalidParams, "observation scope %s %q differs from capsule %q's %q",
				dim, o.Scope.Get(dim), slot.id, slot.scope.Get(dim))
		case dim != "":
			slot = nil // the session's open capsule lies in another scope: do not join it
		default:
			o.Scope = o.Scope.Fill(slot.scope)
		}
	}
	if err := a.insert(ctx, o); err != nil {
		return o, err
	}
	if slot != nil {
		if _, err := a.insMember.ExecContext(ctx, slot.id, slot.next, o.ID); err != nil {
			return o, err
		}
		slot.next++
	}
	return o, nil
}

// insert writes the observation row and, unless it is redacted, its index row.
func (a *appender) insert(ctx context.Context, o memory.Observation) error {
	args := append([]any{o.ID, string(o.Kind), o.Content, string(o.Provenance), o.TS, o.Redacted}, sqlstore.ScopeArgs(o.Scope)...)
	res, err := a.insObs.ExecContext(ctx, args...)
	if isUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "observation id %q already exists", o.ID)
	}
	if err != nil {
		return err
	}
	if o.Redacted {
		return nil
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return err
	}
	a.unindexed = append(a.unindexed, seq)
	return nil
}

// ftsChunk is how many rows indexFTS adds per statement.
const ftsChunk = 500

// indexFTS adds the batch's unredacted observations to the full-text
// index. It must run before the transaction reads the index or commits.
func (a *appender) indexFTS(ctx context.Context) error {
	for len(a.unindexed) > 0 {
		n := min(len(a.unindexed), ftsChunk)
		args := make([]any, n)
		for i, seq := range a.unindexed[:n] {
			args[i] = seq
		}
		q := "INSERT INTO observations_fts(rowid, content) SELECT seq, content FROM observations WHERE seq IN (?" +
			strings.Repeat(", ?", n-1) + ") ORDER BY seq"
		if _, err := a.tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
		a.unindexed = a.unindexed[n:]
	}
	return nil
}

// AppendObservations implements memory.ObservationStore.
func (db *DB) AppendObservations(ctx context.Context, batch []memory.NewObservation) ([]memory.Observation, error) {
	out := make([]memory.Observation, 0, len(batch))
	err := db.write(ctx, "appending observations", func(tx *sql.Tx) error {
		out = out[:0]
		a, err := newAppender(ctx, tx)
		if err != nil {
			return err
		}
		defer a.close()
		for _, n := range batch {
			o, err := a.append(ctx, n)
			if err != nil {
				return err
			}
			out = append(out, o)
		}
		return a.indexFTS(ctx)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Redact implements memory.ObservationStore.
func (db *DB) Redact(ctx context.Context, id string) (memory.Observation, error) {
	var o memory.Observation
	err := db.erase(ctx, "forgetting observation", func(tx *sql.Tx) error {
		var seq int64
		var redacted bool
		var old string
		err := tx.QueryRowContext(ctx, "SELECT seq, redacted, content FROM observations WHERE id = ?", id).Scan(&seq, &redacted, &old)
		if errors.Is(err, sql.ErrNoRows) {
			return sqlstore.NotFound("observation", id)
		}
		if err != nil {
			return err
		}
		if !redacted {
			if _, err := tx.ExecContext(ctx, "INSERT INTO observations_fts(observations_fts, rowid, content) VALUES ('delete', ?, ?)", seq, old); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "UPDATE observations SET content = ?, redacted = 1 WHERE seq = ?", memory.RedactedContent, seq); err != nil {
				return err
			}
		}
		o, err = sqlstore.GetObservation(ctx, querier{tx}, id)
		return err
	})
	return o, err
}
