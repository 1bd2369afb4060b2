package sqlstore

import (
	"context"
	"errors"

	"github.com/cairnhq/cairn/memory"
)

// AddPin implements memory.PinStore.
func (s *Store) AddPin(ctx context.Context, p memory.Pin) (memory.Pin, error) {
	err := s.b.Write(ctx, "pinning", func(q Querier) error {
		if _, err := pinTarget(ctx, q, p.TargetType, p.TargetID); err != nil {
			return err
		}
		return s.insertPin(ctx, q, p)
	})
	return p, err
}

// insertPin writes a new pin (conflict when its id exists); the caller
// checks its target.
func (s *Store) insertPin(ctx context.Context, q Querier, p memory.Pin) error {
	args := append([]any{p.ID, string(p.TargetType), p.TargetID, p.Reason, p.CreatedAt, p.ExpiresAt}, ScopeArgs(p.Scope)...)
	_, err := q.Exec(ctx, `INSERT INTO pins (id, target_type, target_id, reason, created_at, expires_at,
		session_id, repo_id, agent_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if s.d.IsUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "pin id %q already exists", p.ID)
	}
	return err
}

// pinTarget loads the record a pin points at (not_found when missing).
func pinTarget(ctx context.Context, q Querier, t memory.TargetType, id string) (memory.Entity, error) {
	switch t {
	case memory.TargetObservation:
		o, err := GetObservation(ctx, q, id)
		return memory.ObservationEntity(o), err
	case memory.TargetSummary:
		s, err := GetSummary(ctx, q, id)
		return memory.SummaryEntity(s), err
	}
	return memory.Entity{}, memory.Errorf(memory.CodeInvalidParams, "unknown pin target type %q (want observation or summary)", t)
}

// GetObservation reads one observation (not_found when missing).
func GetObservation(ctx context.Context, q Querier, id string) (memory.Observation, error) {
	o, err := ScanObservation(q.QueryRow(ctx, "SELECT "+ObsColumns+" FROM observations o WHERE o.id = ?", id))
	if errors.Is(err, ErrNoRows) {
		return o, NotFound("observation", id)
	}
	return o, err
}

// Observation implements memory.ObservationStore.
func (s *Store) Observation(ctx context.Context, id string) (memory.Observation, error) {
	var o memory.Observation
	err := s.b.Read(ctx, "reading observation", func(q Querier) error {
		var err error
		o, err = GetObservation(ctx, q, id)
		return err
	})
	return o, err
}

// RemovePin implements memory.PinStore.
func (s *Store) RemovePin(ctx context.Context, id string) error {
	return s.b.Erase(ctx, "unpinning", func(q Querier) error {
		n, err := q.Exec(ctx, "DELETE FROM pins WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n == 0 {
			return NotFound("pin", id)
		}
		return nil
	})
}

// Pin implements memory.PinStore.
func (s *Store) Pin(ctx context.Context, id string) (memory.Pin, error) {
	var p memory.Pin
	err := s.b.Read(ctx, "reading pin", func(q Querier) error {
		var err error
		p, err = scanPin(q.QueryRow(ctx, "SELECT "+pinColumns+" FROM pins p WHERE p.id = ?", id))
		if errors.Is(err, ErrNoRows) {
			return NotFound("pin", id)
		}
		return err
	})
	return p, err
}

// ActivePins implements memory.PinStore.
func (s *Store) ActivePins(ctx context.Context, pq memory.PinQuery) ([]memory.PinnedTarget, error) {
	var out []memory.PinnedTarget
	err := s.b.Read(ctx, "reading pins", func(q Querier) error {
		var err error
		out, err = s.activePins(ctx, q, pq)
		return err
	})
	return out, err
}

func (s *Store) activePins(ctx context.Context, tx Querier, pq memory.PinQuery) ([]memory.PinnedTarget, error) {
	q := s.d.NewQuery("SELECT "+pinColumns+" FROM pins p WHERE (p.expires_at IS NULL OR p.expires_at > ?)", pq.Now)
	q.Scope("p", pq.Scope)
	q.Add(" ORDER BY p.created_at DESC, p.id")
	var pins []memory.Pin
	err := EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
		p, err := scanPin(sc)
		pins = append(pins, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []memory.PinnedTarget
	for _, p := range pins {
		target, err := pinTarget(ctx, tx, p.TargetType, p.TargetID)
		if memory.IsCode(err, memory.CodeNotFound) {
			continue // the target is gone: the pin is inert
		}
		if err != nil {
			return nil, err
		}
		if target.Redacted() && !pq.IncludeRedacted {
			continue
		}
		out = append(out, memory.PinnedTarget{Pin: p, TargetType: p.TargetType, Target: target})
	}
	return out, nil
}
