package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
)

// snapshotReader reads through one repeatable-read transaction.
type snapshotReader struct {
	tx   pgx.Tx
	mode vectorMode
}

// Snapshot implements memory.Snapshotter: fn reads one consistent state of
// the database, untouched by concurrent writes, in one repeatable-read
// transaction.
func (db *DB) Snapshot(ctx context.Context, fn func(memory.Reader) error) error {
	return db.read(ctx, "reading", func(tx pgx.Tx) error {
		// The transaction's snapshot is taken at its first statement:
		// take it now, so fn sees the store as it was when Snapshot began.
		if _, err := lastChange(ctx, tx); err != nil {
			return err
		}
		return fn(snapshotReader{tx: tx, mode: db.vectors})
	})
}

func (r snapshotReader) ActivePins(ctx context.Context, q memory.PinQuery) ([]memory.PinnedTarget, error) {
	out, err := activePins(ctx, r.tx, q)
	return out, dbError(err, "reading pins")
}

func (r snapshotReader) CurrentSummary(ctx context.Context, scope memory.Scope) (*memory.Summary, error) {
	out, err := currentSummary(ctx, r.tx, scope)
	return out, dbError(err, "reading the current summary")
}

func (r snapshotReader) SearchText(ctx context.Context, ts memory.TextSearch) (memory.TextResult, error) {
	return searchText(ctx, r.tx, ts)
}

// LoadIndex implements memory.Reader for the snapshot reader.
func (r snapshotReader) LoadIndex(ctx context.Context, space memory.Space, fn func(memory.IndexRecord) error) (int64, error) {
	last, err := lastChange(ctx, r.tx)
	if err != nil {
		return 0, dbError(err, "loading the index")
	}
	for _, spec := range kindSpecs {
		err := eachRow(ctx, r.tx, spec.indexSQL(false), []any{space.Provider, space.Model, space.Dim}, func(s scanner) error {
			rec, err := r.scanIndexRecord(s, spec.kind)
			if err != nil {
				return err
			}
			return fn(rec)
		})
		if err != nil {
			return 0, dbError(err, "loading the index")
		}
	}
	return last, nil
}

func (r snapshotReader) scanIndexRecord(s scanner, kind memory.VectorKind) (memory.IndexRecord, error) {
	rec := memory.IndexRecord{Kind: kind, Type: memory.TargetType(kind)}
	var tags string
	var pos int32
	vec := vecDest{mode: r.mode}
	if err := s.Scan(&rec.ID, &rec.Content, &rec.TS, &rec.Scope.SessionID, &rec.Scope.RepoID, &rec.Scope.AgentID, &rec.Scope.UserID,
		&rec.Origin, &tags, &rec.Private, &rec.Status, &rec.CapsuleID, &pos, &rec.Body, vec.target()); err != nil {
		return rec, err
	}
	rec.Position = int(pos)
	if tags != "" && tags != "[]" {
		if err := json.Unmarshal([]byte(tags), &rec.Tags); err != nil {
			return rec, err
		}
	}
	rec.Vector = vec.vector()
	return rec, nil
}

func lastChange(ctx context.Context, q queryer) (int64, error) {
	var last int64
	err := q.QueryRow(ctx, "SELECT coalesce(max(seq), 0) FROM changes").Scan(&last)
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
	err = eachRow(ctx, r.tx, "SELECT kind, ref FROM changes WHERE seq > $1 ORDER BY seq", []any{since}, func(s scanner) error {
		var c ref
		if err := s.Scan(&c.kind, &c.id); err != nil {
			return err
		}
		if _, ok := specOf(memory.VectorKind(c.kind)); !ok {
			return nil // a record no index holds (a capsule, a pin): the ledger's
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
	// The records' current states, read a kind and a chunk of ids at a
	// time rather than one query per record.
	byKind := map[string][]string{}
	for _, c := range refs {
		byKind[c.kind] = append(byKind[c.kind], c.id)
	}
	found := map[ref]memory.IndexRecord{}
	for kind, ids := range byKind {
		recs, err := r.indexRecords(ctx, space, kind, ids)
		if err != nil {
			return nil, since, dbError(err, "reading changes")
		}
		for _, rec := range recs {
			found[ref{kind, rec.ID}] = rec
		}
	}
	out := make([]memory.IndexRecord, 0, len(refs))
	for _, c := range refs {
		rec, ok := found[c]
		if !ok {
			rec = memory.IndexRecord{Kind: memory.VectorKind(c.kind), Type: memory.TargetType(c.kind), ID: c.id, Position: -1, Gone: true}
		}
		out = append(out, rec)
	}
	return out, last, nil
}

// indexChunk is the ids one query reads.
const indexChunk = 5000

// indexRecords reads the current states of records of one kind with
// their vectors in space; records that are gone are left out.
func (r snapshotReader) indexRecords(ctx context.Context, space memory.Space, kind string, ids []string) ([]memory.IndexRecord, error) {
	spec, ok := specOf(memory.VectorKind(kind))
	if !ok {
		return nil, nil
	}
	var out []memory.IndexRecord
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), indexChunk)]
		ids = ids[len(chunk):]
		err := eachRow(ctx, r.tx, spec.indexSQL(true), []any{space.Provider, space.Model, space.Dim, chunk}, func(s scanner) error {
			rec, err := r.scanIndexRecord(s, spec.kind)
			if err == nil {
				out = append(out, rec)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LastChange implements memory.Reader for the snapshot reader.
func (r snapshotReader) LastChange(ctx context.Context) (int64, error) {
	last, err := lastChange(ctx, r.tx)
	return last, dbError(err, "reading changes")
}

// ChangeRef implements memory.Reader for the snapshot reader.
func (r snapshotReader) ChangeRef(ctx context.Context, seq int64) (string, error) {
	var kind, ref string
	err := r.tx.QueryRow(ctx, "SELECT kind, ref FROM changes WHERE seq = $1", seq).Scan(&kind, &ref)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", dbError(err, "reading changes")
	}
	return strconv.FormatInt(seq, 10) + ":" + kind + ":" + ref, nil
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

// Records implements memory.Reader for the snapshot reader.
func (r snapshotReader) Records(ctx context.Context, kind memory.VectorKind, ids []string) ([]memory.IndexRecord, error) {
	recs, err := r.indexRecords(ctx, memory.Space{}, string(kind), ids)
	if err != nil {
		return nil, dbError(err, "reading records")
	}
	byID := make(map[string]memory.IndexRecord, len(recs))
	for _, rec := range recs {
		byID[rec.ID] = rec
	}
	out := make([]memory.IndexRecord, 0, len(ids))
	for _, id := range ids {
		rec, ok := byID[id]
		if !ok {
			rec = memory.IndexRecord{Kind: kind, Type: memory.TargetType(kind), ID: id, Position: -1, Gone: true}
		}
		out = append(out, rec)
	}
	return out, nil
}
