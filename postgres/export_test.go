package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

var migrationsMu sync.Mutex

// OpenAtVersion opens a store as a build whose newest migration is
// version would: for testing the upgrade of a database it wrote.
func OpenAtVersion(ctx context.Context, url string, version int) (*DB, error) {
	migrationsMu.Lock()
	defer migrationsMu.Unlock()
	all := migrations
	defer func() { migrations = all }()
	migrations = migrations[:version]
	return Open(ctx, url, nil)
}

// ReapplyMigration runs migration version's statements again on db's
// schema (they must be idempotent).
func ReapplyMigration(ctx context.Context, db *DB, version int) error {
	for _, m := range migrations {
		if m.version != version {
			continue
		}
		tx, err := db.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SELECT set_config('search_path', $1, true)", db.searchPath); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, strings.ReplaceAll(m.sql(db.vectors, lockSpace(db.schema)), "{{s}}", db.schema)); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	return fmt.Errorf("no migration %d", version)
}
