package postgres

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"github.com/jackc/pgx/v5"
)

const rebuildFix = "rebuild the full-text columns: cairn doctor --fix"

// Check implements memory.Doctor: the server and the connection, the
// schema version, how vectors are kept, and whether the full-text columns
// and bm25's statistics agree with the records.
func (db *DB) Check(ctx context.Context) ([]memory.Finding, error) {
	out := &sqlstore.Findings{RebuildFix: rebuildFix}
	add := out.Add
	st, err := db.Stats(ctx)
	if err != nil {
		return nil, err
	}
	err = db.read(ctx, "checking the database", func(tx pgx.Tx) error {
		var version, user, dbname string
		var ssl *bool
		var timeout string
		if err := tx.QueryRow(ctx, `SELECT current_setting('server_version'), current_user, current_database(),
			(SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), current_setting('statement_timeout')`).
			Scan(&version, &user, &dbname, &ssl, &timeout); err != nil {
			return err
		}
		tls := "without TLS"
		if ssl != nil && *ssl {
			tls = "over TLS"
		}
		add("database", true, fmt.Sprintf("PostgreSQL %s, database %s, schema %s, as %s, %s; statement timeout %s; %d bytes",
			version, dbname, db.schema, user, tls, timeout, st.SizeBytes), "")
		ps := db.PoolStats()
		add("connection pool", true, fmt.Sprintf("%d of at most %d connections open, %d in use", ps.TotalConns, ps.MaxConns, ps.AcquiredConns), "")
		vec := "real[] arrays, compared in cairn"
		if db.vectors == vectorsPGVector {
			var ext string
			if err := tx.QueryRow(ctx, "SELECT extversion FROM pg_extension WHERE extname = 'vector'").Scan(&ext); err != nil {
				return err
			}
			vec = "pgvector " + ext + " vector columns"
		}
		add("vectors", true, "kept in "+vec, "")
		for _, t := range []struct {
			table, label string
			indexed      int
		}{{"observations", "observation", st.IndexedObservations}, {"summaries", "summary", st.IndexedSummaries}} {
			var docs, tokens, wantDocs, wantTokens int64
			if err := tx.QueryRow(ctx, "SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM fts_stats WHERE tbl = $1", t.table).
				Scan(&docs, &tokens); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, "SELECT count(*), coalesce(sum(fts_len), 0) FROM "+t.table+" WHERE fts IS NOT NULL").
				Scan(&wantDocs, &wantTokens); err != nil {
				return err
			}
			add(t.label+" statistics", docs == wantDocs && tokens == wantTokens,
				fmt.Sprintf("bm25 counts %d rows and %d tokens; the table holds %d and %d", docs, tokens, wantDocs, wantTokens), rebuildFix)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	add("schema", st.SchemaVersion == SchemaVersion(), fmt.Sprintf("version %d (this cairn writes %d)", st.SchemaVersion, SchemaVersion()),
		"open the database with this cairn to migrate it")
	out.Indexed(st)
	return out.List, nil
}

// rebuildChunk is how many rows RebuildIndex rewrites per statement.
const rebuildChunk = 2000

// RebuildIndex implements memory.Doctor: every searchable observation's
// and summary's full-text column is computed again from its text
// (forgotten ones are cleared), and bm25's statistics are counted again,
// in one transaction.
func (db *DB) RebuildIndex(ctx context.Context) error {
	return db.write(ctx, "rebuilding the index", func(tx pgx.Tx) error {
		for _, table := range []string{"observations", "summaries"} {
			if _, err := tx.Exec(ctx, "UPDATE "+table+" SET fts = NULL, fts_len = 0 WHERE redacted AND fts IS NOT NULL"); err != nil {
				return err
			}
			var after int64
			for {
				var seqs []int64
				var docs []string
				var lens []int32
				err := sqlstore.EachRow(ctx, querier{tx}, "SELECT seq, content FROM "+table+" WHERE NOT redacted AND seq > $1 ORDER BY seq LIMIT $2",
					[]any{after, rebuildChunk}, func(s sqlstore.Scanner) error {
						var seq int64
						var content string
						if err := s.Scan(&seq, &content); err != nil {
							return err
						}
						doc, n := ftsDoc(content)
						seqs, docs, lens = append(seqs, seq), append(docs, doc), append(lens, int32(n))
						return nil
					})
				if err != nil {
					return err
				}
				if len(seqs) == 0 {
					break
				}
				if _, err := tx.Exec(ctx, `UPDATE `+table+` t SET fts = u.doc::tsvector, fts_len = u.len
					FROM unnest($1::bigint[], $2::text[], $3::int[]) AS u(seq, doc, len) WHERE t.seq = u.seq`, seqs, docs, lens); err != nil {
					return err
				}
				after = seqs[len(seqs)-1]
			}
			if _, err := tx.Exec(ctx, `UPDATE fts_stats SET docs = 0, tokens = 0 WHERE tbl = $1`, table); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE fts_stats SET (docs, tokens) = (SELECT count(*), coalesce(sum(fts_len), 0) FROM `+table+
				` WHERE fts IS NOT NULL) WHERE tbl = $1 AND shard = 0`, table); err != nil {
				return err
			}
		}
		return nil
	})
}
