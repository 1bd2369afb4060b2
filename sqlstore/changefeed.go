package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/cairnhq/cairn/memory"
)

// The change feed: every write to a searchable record logs a row of
// changes (by trigger), and retrieval indexes follow it. A Snapshot's
// reader loads every record, reads what changed since a sequence number,
// and reads records by id, in their current state.

// VectorScan reads one row's vector column.
type VectorScan interface {
	// Dest is the Scan destination of the column.
	Dest() any
	// Vector is the vector read (nil when the row had none).
	Vector() []float32
}

func lastChange(ctx context.Context, q Querier) (int64, error) {
	var last int64
	err := q.QueryRow(ctx, "SELECT coalesce(max(seq), 0) FROM changes").Scan(&last)
	return last, err
}

// scanRecord reads a row of a Kind's recordSQL.
func (r reader) scanRecord(s Scanner, kind memory.VectorKind) (memory.IndexRecord, error) {
	rec := memory.IndexRecord{Kind: kind, Type: memory.TargetType(kind)}
	var tags string
	vec := r.s.d.ScanVector()
	if err := s.Scan(&rec.ID, &rec.Content, &rec.TS, &rec.Scope.SessionID, &rec.Scope.RepoID, &rec.Scope.AgentID, &rec.Scope.UserID,
		&rec.Origin, &tags, &rec.Private, &rec.Status, &rec.CapsuleID, &rec.Position, &rec.Body, vec.Dest()); err != nil {
		return rec, err
	}
	if tags != "" && tags != "[]" {
		if err := json.Unmarshal([]byte(tags), &rec.Tags); err != nil {
			return rec, err
		}
	}
	rec.Vector = vec.Vector()
	return rec, nil
}

// LoadIndex implements memory.Reader.
func (r reader) LoadIndex(ctx context.Context, space memory.Space, fn func(memory.IndexRecord) error) (int64, error) {
	last, err := lastChange(ctx, r.q)
	if err != nil {
		return 0, r.s.d.Error(err, "loading the index")
	}
	for _, k := range Kinds {
		err := EachRow(ctx, r.q, k.recordSQL(r.s.d, false), []any{space.Provider, space.Model, space.Dim}, func(s Scanner) error {
			rec, err := r.scanRecord(s, k.Kind)
			if err != nil {
				return err
			}
			return fn(rec)
		})
		if err != nil {
			return 0, r.s.d.Error(err, "loading the index")
		}
	}
	return last, nil
}

// ChangesSince implements memory.Reader.
func (r reader) ChangesSince(ctx context.Context, space memory.Space, since int64, limit int) ([]memory.IndexRecord, int64, error) {
	type ref struct{ kind, id string }
	var refs []ref
	seen := map[ref]bool{}
	last := since
	query := "SELECT seq, kind, ref FROM changes WHERE seq > ? ORDER BY seq"
	args := []any{since}
	if limit > 0 {
		query += " LIMIT ?"
		args = append(args, limit)
	}
	err := EachRow(ctx, r.q, query, args, func(s Scanner) error {
		var c ref
		if err := s.Scan(&last, &c.kind, &c.id); err != nil {
			return err
		}
		if _, ok := KindOf(memory.VectorKind(c.kind)); !ok {
			return nil // a record no index holds (a capsule, a pin): the ledger's
		}
		if !seen[c] {
			seen[c] = true
			refs = append(refs, c)
		}
		return nil
	})
	if err != nil {
		return nil, since, r.s.d.Error(err, "reading changes")
	}
	// The records' current states, read a kind and a chunk of ids at a
	// time rather than one query per record.
	byKind := map[string][]string{}
	for _, c := range refs {
		byKind[c.kind] = append(byKind[c.kind], c.id)
	}
	found := map[ref]memory.IndexRecord{}
	for kind, ids := range byKind {
		recs, err := r.currentRecords(ctx, space, kind, ids)
		if err != nil {
			return nil, since, r.s.d.Error(err, "reading changes")
		}
		for _, rec := range recs {
			found[ref{kind, rec.ID}] = rec
		}
	}
	out := make([]memory.IndexRecord, 0, len(refs))
	for _, c := range refs {
		rec, ok := found[c]
		if !ok {
			rec = gone(memory.VectorKind(c.kind), c.id)
		}
		out = append(out, rec)
	}
	return out, last, nil
}

// gone is the state of a record that is no longer searchable.
func gone(kind memory.VectorKind, id string) memory.IndexRecord {
	return memory.IndexRecord{Kind: kind, Type: memory.TargetType(kind), ID: id, Position: -1, Gone: true}
}

// currentRecords reads the current states of records of one kind with
// their vectors in space; records that are gone are left out. The ids go
// in as one list argument, so the statement's text does not depend on
// their number.
func (r reader) currentRecords(ctx context.Context, space memory.Space, kind string, ids []string) ([]memory.IndexRecord, error) {
	k, ok := KindOf(memory.VectorKind(kind))
	if !ok {
		return nil, nil
	}
	var out []memory.IndexRecord
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), r.s.d.ListMax)]
		ids = ids[len(chunk):]
		err := EachRow(ctx, r.q, k.recordSQL(r.s.d, true), []any{space.Provider, space.Model, space.Dim, r.s.d.ListArg(chunk)}, func(s Scanner) error {
			rec, err := r.scanRecord(s, k.Kind)
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

// LastChange implements memory.Reader.
func (r reader) LastChange(ctx context.Context) (int64, error) {
	last, err := lastChange(ctx, r.q)
	return last, r.s.d.Error(err, "reading changes")
}

// ChangeRef implements memory.Reader.
func (r reader) ChangeRef(ctx context.Context, seq int64) (string, error) {
	var kind, ref string
	err := r.q.QueryRow(ctx, "SELECT kind, ref FROM changes WHERE seq = ?", seq).Scan(&kind, &ref)
	if errors.Is(err, ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", r.s.d.Error(err, "reading changes")
	}
	return strconv.FormatInt(seq, 10) + ":" + kind + ":" + ref, nil
}

// Entities implements memory.Reader.
func (r reader) Entities(ctx context.Context, refs []memory.EntityRef) ([]memory.Entity, error) {
	out := make([]memory.Entity, 0, len(refs))
	for _, ref := range refs {
		e, err := pinTarget(ctx, r.q, ref.Type, ref.ID)
		if memory.IsCode(err, memory.CodeNotFound) {
			continue
		}
		if err != nil {
			return nil, r.s.d.Error(err, "reading records")
		}
		out = append(out, e)
	}
	return out, nil
}

// Records implements memory.Reader: the records' current states, read a
// chunk of ids at a time, in the order asked (an unknown kind's are all
// gone).
func (r reader) Records(ctx context.Context, kind memory.VectorKind, ids []string) ([]memory.IndexRecord, error) {
	recs, err := r.currentRecords(ctx, memory.Space{}, string(kind), ids)
	if err != nil {
		return nil, r.s.d.Error(err, "reading records")
	}
	byID := make(map[string]memory.IndexRecord, len(recs))
	for _, rec := range recs {
		byID[rec.ID] = rec
	}
	out := make([]memory.IndexRecord, 0, len(ids))
	for _, id := range ids {
		rec, ok := byID[id]
		if !ok {
			rec = gone(kind, id)
		}
		out = append(out, rec)
	}
	return out, nil
}
