package sqlstore

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

var _ memory.RemovalStore = (*Store)(nil)

// MarkRemoval implements memory.RemovalStore.
func (s *Store) MarkRemoval(ctx context.Context, ids []string, at int64) (int, error) {
	var n int64
	err := s.b.Write(ctx, "marking thoughts for removal", func(q Querier) error {
		n = 0
		for _, id := range ids {
			c, err := q.Exec(ctx, "UPDATE thoughts SET status = 'removal' WHERE id = ? AND status <> 'removal'", id)
			if err != nil {
				return err
			}
			n += c
			// A mark keeps its first time; one without a record (marked by
			// SetThoughtStatus, or imported marked) gets at.
			if _, err := q.Exec(ctx, `INSERT INTO thought_removals (thought_id, marked_at)
				SELECT id, ? FROM thoughts WHERE id = ? AND status = 'removal'
				ON CONFLICT (thought_id) DO UPDATE SET marked_at = excluded.marked_at WHERE thought_removals.marked_at = 0`, at, id); err != nil {
				return err
			}
		}
		return nil
	})
	return int(n), err
}

// Removals implements memory.RemovalStore.
func (s *Store) Removals(ctx context.Context, after, limit int) ([]memory.Removal, error) {
	if limit <= 0 {
		limit = 100
	}
	out := []memory.Removal{}
	err := s.b.Read(ctx, "listing thoughts marked for removal", func(q Querier) error {
		out = out[:0]
		return EachRow(ctx, q, "SELECT "+thoughtColumns+`, coalesce(r.marked_at, 0), coalesce(r.exported_at, 0),
			coalesce(r.archive, ''), coalesce(r.archive_sha256, '')
			FROM thoughts t LEFT JOIN thought_removals r ON r.thought_id = t.id
			WHERE t.status = 'removal' ORDER BY coalesce(r.marked_at, 0), t.id LIMIT ? OFFSET ?`,
			[]any{limit, max(0, after)}, func(sc Scanner) error {
				var r memory.Removal
				var err error
				r.Thought, err = scanThought(withExtra(sc, &r.MarkedAt, &r.ExportedAt, &r.Archive, &r.ArchiveSHA256))
				out = append(out, r)
				return err
			})
	})
	return out, err
}

// RecordExport implements memory.RemovalStore.
func (s *Store) RecordExport(ctx context.Context, ids []string, archive, sha256 string, at int64) (int, error) {
	var n int64
	err := s.b.Write(ctx, "recording an export of thoughts", func(q Querier) error {
		n = 0
		for _, id := range ids {
			c, err := q.Exec(ctx, `INSERT INTO thought_removals (thought_id, exported_at, archive, archive_sha256)
				SELECT id, ?, ?, ? FROM thoughts WHERE id = ? AND status = 'removal'
				ON CONFLICT (thought_id) DO UPDATE SET exported_at = excluded.exported_at, archive = excluded.archive,
					archive_sha256 = excluded.archive_sha256`, at, archive, sha256, id)
			if err != nil {
				return err
			}
			n += c
		}
		return nil
	})
	return int(n), err
}

// FinalizeRemoval implements memory.RemovalStore. The delete triggers log
// the change (every retrieval index drops the thought) and delete its
// vectors; the store scrubs the deleted text as it can (see Erase).
func (s *Store) FinalizeRemoval(ctx context.Context, ids []string, cutoff int64) ([]string, error) {
	out := []string{}
	err := s.b.Erase(ctx, "deleting thoughts marked for removal", func(q Querier) error {
		out = out[:0]
		for _, id := range ids {
			c, err := q.Exec(ctx, `DELETE FROM thoughts WHERE id = ? AND status = 'removal' AND id IN (
				SELECT thought_id FROM thought_removals
				WHERE exported_at > 0 AND CASE WHEN marked_at > 0 THEN marked_at ELSE exported_at END <= ?)`, id, cutoff)
			if err != nil {
				return err
			}
			if c > 0 {
				out = append(out, id)
			}
		}
		return nil
	})
	return out, err
}
