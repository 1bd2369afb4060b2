package postgres

import (
	"context"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
)

var _ memory.RemovalStore = (*DB)(nil)

// MarkRemoval implements memory.RemovalStore.
func (db *DB) MarkRemoval(ctx context.Context, ids []string, at int64) (int, error) {
	var n int64
	err := db.write(ctx, "marking thoughts for removal", func(tx pgx.Tx) error {
		n = 0
		for _, id := range ids {
			tag, err := tx.Exec(ctx, "UPDATE thoughts SET status = 'removal' WHERE id = $1 AND status <> 'removal'", id)
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
			// A mark keeps its first time; one without a record (marked by
			// SetThoughtStatus, or imported marked) gets at.
			if _, err := tx.Exec(ctx, `INSERT INTO thought_removals (thought_id, marked_at)
				SELECT id, $1 FROM thoughts WHERE id = $2 AND status = 'removal'
				ON CONFLICT (thought_id) DO UPDATE SET marked_at = excluded.marked_at WHERE thought_removals.marked_at = 0`, at, id); err != nil {
				return err
			}
		}
		return nil
	})
	return int(n), err
}

// Removals implements memory.RemovalStore.
func (db *DB) Removals(ctx context.Context, after, limit int) ([]memory.Removal, error) {
	if limit <= 0 {
		limit = 100
	}
	out := []memory.Removal{}
	err := db.read(ctx, "listing thoughts marked for removal", func(tx pgx.Tx) error {
		out = out[:0]
		return eachRow(ctx, tx, "SELECT "+thoughtColumns+`, coalesce(r.marked_at, 0), coalesce(r.exported_at, 0),
			coalesce(r.archive, ''), coalesce(r.archive_sha256, '')
			FROM thoughts t LEFT JOIN thought_removals r ON r.thought_id = t.id
			WHERE t.status = 'removal' ORDER BY coalesce(r.marked_at, 0), t.id LIMIT $1 OFFSET $2`,
			[]any{limit, max(0, after)}, func(s scanner) error {
				var r memory.Removal
				var err error
				r.Thought, err = scanThought(withExtra{s, []any{&r.MarkedAt, &r.ExportedAt, &r.Archive, &r.ArchiveSHA256}})
				out = append(out, r)
				return err
			})
	})
	return out, err
}

// withExtra scans a row's leading columns with the scanner's caller and
// the trailing ones into extra.
type withExtra struct {
	s     scanner
	extra []any
}

func (w withExtra) Scan(dest ...any) error { return w.s.Scan(append(dest, w.extra...)...) }

// RecordExport implements memory.RemovalStore.
func (db *DB) RecordExport(ctx context.Context, ids []string, archive, sha256 string, at int64) (int, error) {
	var n int64
	err := db.write(ctx, "recording an export of thoughts", func(tx pgx.Tx) error {
		n = 0
		for _, id := range ids {
			tag, err := tx.Exec(ctx, `INSERT INTO thought_removals (thought_id, exported_at, archive, archive_sha256)
				SELECT id, $1, $2, $3 FROM thoughts WHERE id = $4 AND status = 'removal'
				ON CONFLICT (thought_id) DO UPDATE SET exported_at = excluded.exported_at, archive = excluded.archive,
					archive_sha256 = excluded.archive_sha256`, at, archive, sha256, id)
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
		}
		return nil
	})
	return int(n), err
}

// FinalizeRemoval implements memory.RemovalStore. The delete triggers log
// the change (every server's retrieval index drops the thought) and
// delete its vectors. PostgreSQL keeps the deleted row's bytes in the
// table's file until VACUUM reclaims them, as it does for a forgotten
// record (docs/postgres.md, Forgetting).
func (db *DB) FinalizeRemoval(ctx context.Context, ids []string, cutoff int64) ([]string, error) {
	out := []string{}
	err := db.write(ctx, "deleting thoughts marked for removal", func(tx pgx.Tx) error {
		out = out[:0]
		for _, id := range ids {
			tag, err := tx.Exec(ctx, `DELETE FROM thoughts WHERE id = $1 AND status = 'removal' AND id IN (
				SELECT thought_id FROM thought_removals
				WHERE exported_at > 0 AND CASE WHEN marked_at > 0 THEN marked_at ELSE exported_at END <= $2)`, id, cutoff)
			if err != nil {
				return err
			}
			if tag.RowsAffected() > 0 {
				out = append(out, id)
			}
		}
		return nil
	})
	return out, err
}
