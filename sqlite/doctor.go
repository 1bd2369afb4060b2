package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

const rebuildFix = "rebuild the full-text indexes: cairn doctor --fix"

// Check implements memory.Doctor.
func (db *DB) Check(ctx context.Context) ([]memory.Finding, error) {
	out := &sqlstore.Findings{RebuildFix: rebuildFix}
	add := out.Add
	if info, err := os.Stat(db.path); err == nil {
		perm := info.Mode().Perm()
		add("file", perm&0o077 == 0, fmt.Sprintf("%s, %d bytes, mode %v", db.path, info.Size(), perm),
			fmt.Sprintf("others can read your memories: chmod 600 %s", db.path))
	}
	st, err := db.Stats(ctx)
	if err != nil {
		return nil, err
	}
	add("schema", st.SchemaVersion == SchemaVersion(), fmt.Sprintf("version %d (this cairn writes %d)", st.SchemaVersion, SchemaVersion()),
		"reopen the database with this cairn to migrate it")
	err = db.read(ctx, "checking integrity", func(tx queryer) error {
		var res string
		if err := tx.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&res); err != nil {
			return err
		}
		add("integrity", res == "ok", "SQLite quick_check: "+res,
			"the file is damaged: restore a backup ('cairn export' writes one), or export what still reads into a new database")
		var fk int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pragma_foreign_key_check").Scan(&fk); err != nil {
			return err
		}
		add("references", fk == 0, fmt.Sprintf("%d broken references between records", fk),
			"export the database and import it into a new one; broken references are reported by the import")
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Indexed(st)
	for _, table := range []string{"observations_fts", "summaries_fts"} {
		err := db.write(ctx, "checking "+table, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO "+table+"("+table+") VALUES ('integrity-check')")
			return err
		})
		add(table+" structure", err == nil, structureDetail(err), rebuildFix)
	}
	return out.List, nil
}

func structureDetail(err error) string {
	if err == nil {
		return "FTS5 integrity-check passed"
	}
	return "FTS5 integrity-check failed"
}

// RebuildIndex implements memory.Doctor: both full-text indexes are emptied
// and refilled from the records (forgotten observations and summaries stay
// out).
func (db *DB) RebuildIndex(ctx context.Context) error {
	return db.write(ctx, "rebuilding the index", func(tx *sql.Tx) error {
		for _, q := range []string{
			"INSERT INTO observations_fts(observations_fts) VALUES ('delete-all')",
			"INSERT INTO observations_fts(rowid, content) SELECT seq, content FROM observations WHERE redacted = 0",
			"INSERT INTO summaries_fts(summaries_fts) VALUES ('delete-all')",
			"INSERT INTO summaries_fts(rowid, content) SELECT seq, content FROM summaries WHERE redacted = 0",
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}
