// Package sqlite is cairn's embedded store: one SQLite database file (pure Go,
// modernc.org/sqlite) in WAL mode with foreign keys on, FTS5 full-text indexes
// with the porter unicode61 tokenizer over observations and summaries, and
// numbered migrations applied at open.
//
// The SQL it shares with the PostgreSQL store is in sqlstore, which DB
// embeds; this package keeps the connections, the migrations, FTS5, how
// vectors are kept, batched observation writes and backups. It is the
// only package that imports the SQLite driver. Several processes
// may open the same file at once: writes run in short BEGIN IMMEDIATE
// transactions behind a busy timeout and are retried when the database stays
// busy, reads run on a separate read-only pool.
package sqlite
