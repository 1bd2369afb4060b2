package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/cairnhq/cairn/memory"
)

// progressEvery is how many records Import writes between progress calls.
const progressEvery = 500

// Import implements memory.Bulk. Observations go in first (redacted ones
// stay out of the index), then capsules with their membership, logged
// observations, summaries and pins; any failure rolls everything back.
func (db *DB) Import(ctx context.Context, d memory.Dump, progress func(done int)) error {
	if progress == nil {
		progress = func(int) {}
	}
	return db.write(ctx, "importing", func(tx *sql.Tx) error {
		done := 0
		tick := func() {
			done++
			if done%progressEvery == 0 {
				progress(done)
			}
		}
		a, err := newAppender(ctx, tx)
		if err != nil {
			return err
		}
		defer a.close()
		for _, o := range d.Observations {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := a.insert(ctx, o); err != nil {
				return err
			}
			tick()
		}
		for _, c := range d.Capsules {
			if c.Scope.SessionID != "" && c.Status == memory.CapsuleOpen {
				var other string
				err := tx.QueryRowContext(ctx, "SELECT id FROM capsules WHERE session_id = ? AND status = 'open'", c.Scope.SessionID).Scan(&other)
				if err == nil {
					return memory.Errorf(memory.CodeConflict, "capsule %q: session %q already has an open capsule %q", c.ID, c.Scope.SessionID, other)
				}
				if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
			if err := insertCapsule(ctx, tx, c); err != nil {
				return err
			}
			for i, oid := range c.ObservationIDs {
				var one int
				err := tx.QueryRowContext(ctx, "SELECT 1 FROM observations WHERE id = ?", oid).Scan(&one)
				if errors.Is(err, sql.ErrNoRows) {
					return memory.Errorf(memory.CodeNotFound, "capsule %q lists observation %q, which does not exist", c.ID, oid)
				}
				if err != nil {
					return err
				}
				if _, err := a.insMember.ExecContext(ctx, c.ID, i, oid); err != nil {
					return err
				}
			}
			tick()
		}
		for _, n := range d.Logged {
			if _, err := a.append(ctx, n); err != nil {
				return err
			}
			tick()
		}
		for _, s := range d.Summaries {
			var exists int
			err := tx.QueryRowContext(ctx, "SELECT count(*) FROM summaries WHERE capsule_id = ?", s.CapsuleID).Scan(&exists)
			if err != nil {
				return err
			}
			if exists > 0 {
				return memory.Errorf(memory.CodeConflict, "summary %q: capsule %q already has a summary", s.ID, s.CapsuleID)
			}
			if _, err := putSummary(ctx, tx, s); err != nil {
				return err
			}
			tick()
		}
		for _, p := range d.Pins {
			if _, err := pinTarget(ctx, tx, p.TargetType, p.TargetID); err != nil {
				if memory.IsCode(err, memory.CodeNotFound) {
					return memory.Errorf(memory.CodeNotFound, "pin %q points at %s %q, which does not exist", p.ID, p.TargetType, p.TargetID)
				}
				return err
			}
			if err := insertPin(ctx, tx, p); err != nil {
				return err
			}
			tick()
		}
		progress(done)
		return nil
	})
}

// Export implements memory.Bulk. It reads one snapshot.
func (db *DB) Export(ctx context.Context, fn func(memory.Record) error) error {
	var fnErr error
	err := db.read(ctx, "exporting", func(tx queryer) error {
		emit := func(r memory.Record) error {
			if err := fn(r); err != nil {
				fnErr = err
				return err
			}
			return nil
		}
		if err := eachRow(ctx, tx, "SELECT "+obsColumns+" FROM observations o ORDER BY o.seq", func(s scanner) error {
			o, err := scanObservation(s)
			if err != nil {
				return err
			}
			return emit(memory.Record{Observation: &o})
		}); err != nil {
			return err
		}
		var capIDs []string
		if err := eachRow(ctx, tx, "SELECT id FROM capsules ORDER BY seq", func(s scanner) error {
			var id string
			err := s.Scan(&id)
			capIDs = append(capIDs, id)
			return err
		}); err != nil {
			return err
		}
		for _, id := range capIDs {
			c, err := getCapsule(ctx, tx, id)
			if err != nil {
				return err
			}
			c.SummaryID = ""
			if err := emit(memory.Record{Capsule: &c}); err != nil {
				return err
			}
		}
		if err := eachRow(ctx, tx, "SELECT "+sumColumns+" FROM summaries s ORDER BY s.seq", func(s scanner) error {
			m, err := scanSummary(s)
			if err != nil {
				return err
			}
			return emit(memory.Record{Summary: &m})
		}); err != nil {
			return err
		}
		return eachRow(ctx, tx, "SELECT "+pinColumns+" FROM pins p ORDER BY p.seq", func(s scanner) error {
			p, err := scanPin(s)
			if err != nil {
				return err
			}
			return emit(memory.Record{Pin: &p})
		})
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

func eachRow(ctx context.Context, tx queryer, q string, fn func(scanner) error) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Stats implements memory.Store.
func (db *DB) Stats(ctx context.Context) (memory.Stats, error) {
	st := memory.Stats{Path: db.path}
	err := db.read(ctx, "reading stats", func(tx queryer) error {
		var pages, pageSize int64
		for _, c := range []struct {
			q    string
			dest []any
		}{
			{"PRAGMA user_version", []any{&st.SchemaVersion}},
			{"PRAGMA page_count", []any{&pages}},
			{"PRAGMA page_size", []any{&pageSize}},
			{"SELECT count(*), coalesce(sum(redacted), 0) FROM observations", []any{&st.Observations, &st.Redacted}},
			{"SELECT count(*), coalesce(sum(status = 'open'), 0) FROM capsules", []any{&st.Capsules, &st.OpenCapsules}},
			{"SELECT count(*) FROM summaries", []any{&st.Summaries}},
			{"SELECT count(*) FROM pins", []any{&st.Pins}},
			{"SELECT count(*) FROM observations_fts", []any{&st.IndexedObservations}},
			{"SELECT count(*) FROM summaries_fts", []any{&st.IndexedSummaries}},
			{"SELECT count(*) FROM thoughts", []any{&st.Thoughts}},
			{"SELECT count(*) FROM kg_entities", []any{&st.Entities}},
			{"SELECT count(*) FROM kg_observations", []any{&st.EntityObservations}},
			{"SELECT count(*) FROM kg_edges", []any{&st.Edges}},
		} {
			if err := tx.QueryRowContext(ctx, c.q).Scan(c.dest...); err != nil {
				return err
			}
		}
		st.SizeBytes = pages * pageSize
		return nil
	})
	return st, err
}
