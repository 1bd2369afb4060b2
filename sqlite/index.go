package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/cairnhq/cairn/memory"
)

// LoadIndex implements memory.Reader for the snapshot reader.
func (r snapshotReader) LoadIndex(ctx context.Context, space memory.Space, fn func(memory.IndexRecord) error) (int64, error) {
	last, err := lastChange(ctx, r.tx)
	if err != nil {
		return 0, dbError(err, "loading the index")
	}
	for _, spec := range kindSpecs {
		err := eachRowArgs(ctx, r.tx, spec.indexSQL(false), []any{space.Provider, space.Model, space.Dim}, func(s scanner) error {
			rec, err := scanIndexRecord(s, spec.kind)
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

func scanIndexRecord(s scanner, kind memory.VectorKind) (memory.IndexRecord, error) {
	rec := memory.IndexRecord{Kind: kind, Type: memory.TargetType(kind)}
	var tags string
	var vec []byte
	if err := s.Scan(&rec.ID, &rec.Content, &rec.TS, &rec.Scope.SessionID, &rec.Scope.RepoID, &rec.Scope.AgentID, &rec.Scope.UserID,
		&rec.Origin, &tags, &rec.Private, &rec.Status, &rec.CapsuleID, &rec.Position, &rec.Body, &vec); err != nil {
		return rec, err
	}
	if tags != "" && tags != "[]" {
		if err := json.Unmarshal([]byte(tags), &rec.Tags); err != nil {
			return rec, err
		}
	}
	if vec != nil {
		rec.Vector = decodeVector(vec)
	}
	return rec, nil
}

func lastChange(ctx context.Context, q queryer) (int64, error) {
	var last int64
	err := q.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM changes").Scan(&last)
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
	err = eachRow(ctx, r.tx, "SELECT kind, ref FROM changes WHERE seq > "+itoa(since)+" ORDER BY seq", func(s scanner) error {
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
		recs, err := indexRecords(ctx, r.tx, space, kind, ids)
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
const indexChunk = 2000

// indexRecords reads the current states of records of one kind with their
// vectors in space; records that are gone are left out. The ids go in as
// one JSON array, so the statement's text does not depend on their number.
func indexRecords(ctx context.Context, q queryer, space memory.Space, kind string, ids []string) ([]memory.IndexRecord, error) {
	spec, ok := specOf(memory.VectorKind(kind))
	if !ok {
		return nil, nil
	}
	var out []memory.IndexRecord
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), indexChunk)]
		ids = ids[len(chunk):]
		list, err := json.Marshal(chunk)
		if err != nil {
			return nil, err
		}
		err = eachRowArgs(ctx, q, spec.indexSQLIn(), []any{space.Provider, space.Model, space.Dim, string(list)}, func(s scanner) error {
			rec, err := scanIndexRecord(s, spec.kind)
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
	err := r.tx.QueryRowContext(ctx, "SELECT kind, ref FROM changes WHERE seq = ?", seq).Scan(&kind, &ref)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", dbError(err, "reading changes")
	}
	return itoa(seq) + ":" + kind + ":" + ref, nil
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// indexRecord reads the current state of one record with its vector in
// space; a record that is gone (deleted, forgotten) comes back Gone.
func indexRecord(ctx context.Context, q queryer, space memory.Space, kind, id string) (memory.IndexRecord, error) {
	spec, ok := specOf(memory.VectorKind(kind))
	if !ok {
		return memory.IndexRecord{Kind: memory.VectorKind(kind), Type: memory.TargetType(kind), ID: id, Gone: true}, nil
	}
	rec, err := scanIndexRecord(q.QueryRowContext(ctx, spec.indexSQL(true), space.Provider, space.Model, space.Dim, id), spec.kind)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.IndexRecord{Kind: spec.kind, Type: memory.TargetType(kind), ID: id, Position: -1, Gone: true}, nil
	}
	return rec, err
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
	out := make([]memory.IndexRecord, 0, len(ids))
	for _, id := range ids {
		rec, err := indexRecord(ctx, r.tx, memory.Space{}, string(kind), id)
		if err != nil {
			return nil, dbError(err, "reading records")
		}
		out = append(out, rec)
	}
	return out, nil
}
