// Package sqlite is cairn's embedded store: one SQLite database file (pure Go,
// modernc.org/sqlite) in WAL mode with foreign keys on, FTS5 full-text indexes
// with the porter unicode61 tokenizer over observations and summaries, and
// numbered migrations applied at open.
//
// It is the only package that imports the SQLite driver. Several processes
// may open the same file at once: writes run in short BEGIN IMMEDIATE
// transactions behind a busy timeout and are retried when the database stays
// busy, reads run on a separate read-only pool.
package sqlite
