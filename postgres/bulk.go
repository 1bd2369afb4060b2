package postgres

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

// importChunk is how many observations Import writes per statement.
const importChunk = 1000

// analyzeAfter refreshes the planner's statistics after a bulk write of n
// records, when that is many: until autovacuum gets to it, a table
// believed empty gets plans that read it whole.
func (db *DB) analyzeAfter(ctx context.Context, n int) {
	if n < 20000 {
		return
	}
	db.pool.Exec(ctx, "ANALYZE observations, capsules, capsule_observations, summaries, thoughts, kg_entities, kg_observations, kg_edges, embeddings, changes")
}

// BeginImport implements sqlstore.Importer. A Load is one long
// transaction, and its commit writes the change log of every record: no
// statement timeout applies to it.
func (b backend) BeginImport(ctx context.Context, q sqlstore.Querier, parts bool) error {
	tx := txOf(q)
	if parts {
		if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
	}
	return markImport(ctx, tx)
}

// Imported implements sqlstore.Importer: a large import is followed by
// fresh planner statistics.
func (b backend) Imported(ctx context.Context, n int) { b.db.analyzeAfter(ctx, n) }

// ImportDump implements sqlstore.Importer: observations a chunk per
// statement, capsules with their membership, logged observations a chunk
// at a time, then the rest.
func (b backend) ImportDump(ctx context.Context, q sqlstore.Querier, d memory.Dump, tick func(int)) error {
	db, tx := b.db, txOf(q)
	for i := 0; i < len(d.Observations); i += importChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := d.Observations[i:min(len(d.Observations), i+importChunk)]
		if err := insertObservations(ctx, tx, chunk, i, memory.SectionObservations); err != nil {
			return err
		}
		tick(len(chunk))
	}
	for i, c := range d.Capsules {
		if err := db.importCapsule(ctx, tx, c); err != nil {
			return atRecord(memory.SectionCapsules, i, err)
		}
		tick(1)
	}
	a := newAppender(tx)
	for i := 0; i < len(d.Logged); i += importChunk {
		chunk := d.Logged[i:min(len(d.Logged), i+importChunk)]
		obs, members, err := a.prepare(ctx, chunk, i, memory.SectionLogged)
		if err != nil {
			return err
		}
		if err := insertObservations(ctx, tx, obs, i, memory.SectionLogged); err != nil {
			return err
		}
		if err := insertMembers(ctx, tx, members); err != nil {
			return err
		}
		tick(len(chunk))
	}
	return db.ImportRest(ctx, querier{tx}, d, func() { tick(1) })
}

func (db *DB) importCapsule(ctx context.Context, tx queryer, c memory.Capsule) error {
	if err := sqlstore.CheckNewCapsule(ctx, querier{tx}, c); err != nil {
		return err
	}
	if err := db.InsertCapsule(ctx, querier{tx}, c); err != nil {
		return err
	}
	if len(c.ObservationIDs) == 0 {
		return nil
	}
	have, err := existingIDs(ctx, tx, "observations", c.ObservationIDs)
	if err != nil {
		return err
	}
	ms := make([]member, len(c.ObservationIDs))
	for i, oid := range c.ObservationIDs {
		if !have[oid] {
			return memory.Errorf(memory.CodeNotFound, "capsule %q lists observation %q, which does not exist", c.ID, oid)
		}
		ms[i] = member{c.ID, i, oid}
	}
	return insertMembers(ctx, tx, ms)
}

// Stats implements sqlstore.Importer: the records q sees, and the
// schema's size.
func (b backend) Stats(ctx context.Context, q sqlstore.Querier) (memory.Stats, error) {
	db, tx := b.db, txOf(q)
	st := memory.Stats{Path: db.display}
	var version string
	for _, c := range []struct {
		q    string
		dest []any
	}{
		{"SELECT value FROM meta WHERE key = 'schema_version'", []any{&version}},
		{`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = '` + db.schema + `' AND c.relkind IN ('r', 'S')`, []any{&st.SizeBytes}},
		{"SELECT count(*), count(*) FILTER (WHERE redacted), count(*) FILTER (WHERE fts IS NOT NULL) FROM observations",
			[]any{&st.Observations, &st.Redacted, &st.IndexedObservations}},
		{"SELECT count(*), count(*) FILTER (WHERE redacted), count(*) FILTER (WHERE fts IS NOT NULL) FROM summaries",
			[]any{&st.Summaries, &st.RedactedSummaries, &st.IndexedSummaries}},
	} {
		if err := tx.QueryRow(ctx, c.q).Scan(c.dest...); err != nil {
			return st, err
		}
	}
	if err := sqlstore.CountRecords(ctx, q, &st); err != nil {
		return st, err
	}
	fmt.Sscan(version, &st.SchemaVersion)
	return st, nil
}
