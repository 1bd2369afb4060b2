// Package sqlstore is the half of cairn's SQL stores that SQLite and
// PostgreSQL share: the statements that read and write the same tables
// the same way on both, and the Go around them (validation, scanning,
// paging, the change feed's merging, import and export of everything but
// observations). The sqlite and postgres packages embed a *Store and keep
// what is really their own: connections and transactions, migrations,
// full-text search (FTS5 on SQLite, tsvector columns ranked by FTS5's
// bm25 on PostgreSQL), how vectors are kept, batched observation writes,
// backups, and the driver import. This package imports no driver.
//
// Three small seams join the halves:
//
//   - execution: a Querier (Exec, Query, QueryRow) that database/sql's
//     transactions and pgx's both satisfy through a thin adapter in each
//     store. Statements here use ? placeholders (?N for the Nth
//     argument); the PostgreSQL adapter numbers them $N.
//   - dialect: a Dialect value that says what differs in the SQL text
//     (lists bound as one array or a placeholder each, row locks, a
//     handful of functions and statements) and how the driver's errors
//     classify (unique, foreign key, constraint name).
//   - backend: a Backend, the store's own transactions (read, write, and
//     write-then-scrub for deletes) and the few steps it does its own
//     way (a summary's full-text indexing, text search, writing
//     vectors), and an Importer, its part of an import (a dump's
//     observations and capsules, what the transaction needs first and
//     after) and of its statistics.
//
// Why a seam rather than a generator: the two stores differ in a few
// dozen fragments among some two hundred statements, and in behaviour
// that SQL text does not carry (PostgreSQL locks what it reads before
// writing and retries lost races; SQLite's writers take turns and its
// deletes checkpoint the log). A generator would need templates for the
// fragments and hooks for the behaviour anyway, and would add a build
// step and generated files that review has to read twice. A seam keeps
// one copy of each statement, in Go, next to the code that runs it, and
// a dialect small enough to read at a glance; the conformance suite
// (storetest) runs every statement on both engines.
package sqlstore
