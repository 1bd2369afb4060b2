package postgres

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// Backup answers that a PostgreSQL database is backed up by PostgreSQL's
// own tools (cairn backup copies a SQLite file).
func (db *DB) Backup(ctx context.Context, dest string, overwrite bool) (int64, error) {
	return 0, memory.Errorf(memory.CodeFeatureDisabled,
		"cairn backup copies a SQLite database; back up PostgreSQL with pg_dump -n %s (or your platform's backups), or copy the memory to a SQLite file with cairn migrate --from DATABASE --to FILE.db", db.schema)
}
