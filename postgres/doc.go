// Package postgres is cairn's scale-out store: a schema of a PostgreSQL
// database (pgx), which any number of cairn processes on any number of
// hosts use at once. It implements memory.Store with the same behaviour
// as the SQLite store (the storetest suite runs on both), and it is the
// only package that imports pgx.
//
// What it keeps, and how:
//
//   - one table per record kind, as the SQLite store has, with text
//     columns in the "C" collation so ids sort by their bytes;
//   - vectors in pgvector's vector type when the extension is installed
//     (or can be), in real[] otherwise;
//   - for full-text search, each observation's and summary's terms as
//     SQLite's FTS5 'porter unicode61' tokenizer makes them (fts5token.go,
//     porter.go, on SQLite's own Unicode tables), in a tsvector with their
//     positions behind a GIN index; queries in FTS5 syntax (ftsquery.go)
//     ranked by FTS5's bm25 (search.go, ftsmatch.go), from statistics kept
//     exact by triggers (fts_stats);
//   - a change log written by deferred triggers under a transaction-level
//     advisory lock, so its numbers follow commit order and a process that
//     follows it misses no write;
//   - numbered migrations (schema.go), applied under a session advisory
//     lock; a schema newer than this build is refused, untouched.
//
// The SQL it shares with the SQLite store is in sqlstore, which DB embeds
// (statements there use ? placeholders, numbered $N here).
//
// Writes run in read-committed transactions that lock what they read
// before writing (a capsule before joining it, code-memory keys before
// their guards), and are retried on serialization failures and deadlocks.
// Reads run in repeatable-read, read-only transactions: one snapshot each.
package postgres
