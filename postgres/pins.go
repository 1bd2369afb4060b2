package postgres

import (
	"context"
	"errors"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
)

// AddPin implements memory.PinStore.
func (db *DB) AddPin(ctx context.Context, p memory.Pin) (memory.Pin, error) {
	err := db.write(ctx, "pinning", func(tx pgx.Tx) error {
		if _, err := pinTarget(ctx, tx, p.TargetType, p.TargetID); err != nil {
			return err
		}
		return insertPin(ctx, tx, p)
	})
	return p, err
}

func insertPin(ctx context.Context, tx queryer, p memory.Pin) error {
	args := append([]any{p.ID, string(p.TargetType), p.TargetID, p.Reason, p.CreatedAt, p.ExpiresAt}, scopeArgs(p.Scope)...)
	_, err := tx.Exec(ctx, `INSERT INTO pins (id, target_type, target_id, reason, created_at, expires_at,
		session_id, repo_id, agent_id, user_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, args...)
	if isUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "pin id %q already exists", p.ID)
	}
	return err
}

// pinTarget loads the record a pin points at (not_found when missing).
func pinTarget(ctx context.Context, q queryer, t memory.TargetType, id string) (memory.Entity, error) {
	switch t {
	case memory.TargetObservation:
		o, err := getObservation(ctx, q, id)
		return memory.ObservationEntity(o), err
	case memory.TargetSummary:
		s, err := getSummary(ctx, q, id)
		return memory.SummaryEntity(s), err
	}
	return memory.Entity{}, memory.Errorf(memory.CodeInvalidParams, "unknown pin target type %q (want observation or summary)", t)
}

// RemovePin implements memory.PinStore.
func (db *DB) RemovePin(ctx context.Context, id string) error {
	return db.write(ctx, "unpinning", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM pins WHERE id = $1", id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("pin", id)
		}
		return nil
	})
}

// Pin implements memory.PinStore.
func (db *DB) Pin(ctx context.Context, id string) (memory.Pin, error) {
	var p memory.Pin
	err := db.read(ctx, "reading pin", func(tx pgx.Tx) error {
		var err error
		p, err = scanPin(tx.QueryRow(ctx, "SELECT "+pinColumns+" FROM pins p WHERE p.id = $1", id))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("pin", id)
		}
		return err
	})
	return p, err
}

// ActivePins implements memory.PinStore.
func (db *DB) ActivePins(ctx context.Context, pq memory.PinQuery) ([]memory.PinnedTarget, error) {
	var out []memory.PinnedTarget
	err := db.read(ctx, "reading pins", func(tx pgx.Tx) error {
		var err error
		out, err = activePins(ctx, tx, pq)
		return err
	})
	return out, err
}

func activePins(ctx context.Context, tx queryer, pq memory.PinQuery) ([]memory.PinnedTarget, error) {
	q := newQuery("SELECT " + pinColumns + " FROM pins p WHERE (p.expires_at IS NULL OR p.expires_at > ")
	q.add(q.arg(pq.Now) + ")")
	q.scope("p", pq.Scope)
	q.add(" ORDER BY p.created_at DESC, p.id")
	var pins []memory.Pin
	err := eachRow(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
		p, err := scanPin(s)
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
