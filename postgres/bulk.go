package postgres

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"github.com/jackc/pgx/v5"
)

// importChunk is how many observations Import writes per statement.
const importChunk = 1000

// Import implements memory.Bulk: one transaction, all of it or none.
// Observations go in first (redacted ones stay out of the full-text
// index), then capsules with their membership, logged observations,
// summaries, pins, thoughts, entities, entity observations and edges,
// then code memory.
func (db *DB) Import(ctx context.Context, d memory.Dump, progress func(done int)) error {
	if progress == nil {
		progress = func(int) {}
	}
	err := db.write(ctx, "importing", func(tx pgx.Tx) error {
		if err := markImport(ctx, tx); err != nil {
			return err
		}
		c := &importCount{progress: progress}
		if err := db.importDump(ctx, tx, d, c); err != nil {
			return err
		}
		progress(c.done)
		return nil
	})
	if err == nil {
		db.analyzeAfter(ctx, d.Len())
	}
	return err
}

// analyzeAfter refreshes the planner's statistics after a bulk write of n
// records, when that is many: until autovacuum gets to it, a table
// believed empty gets plans that read it whole.
func (db *DB) analyzeAfter(ctx context.Context, n int) {
	if n < 20000 {
		return
	}
	db.pool.Exec(ctx, "ANALYZE observations, capsules, capsule_observations, summaries, thoughts, kg_entities, kg_observations, kg_edges, embeddings, changes")
}

var _ memory.Loader = (*DB)(nil)

// Load implements memory.Loader: the parts go in through one transaction,
// and check runs in it before the commit.
func (db *DB) Load(ctx context.Context, next func() (memory.Dump, error), progress func(done int), check func(memory.Loaded) error) error {
	if progress == nil {
		progress = func(int) {}
	}
	started := false
	total := 0
	err := db.write(ctx, "importing", func(tx pgx.Tx) error {
		if started {
			// The parts already read cannot be read again: a retry would
			// import only what is left. Nothing was committed.
			return memory.Errorf(memory.CodeDBError, "the import conflicted with another writer; nothing was written, run it again")
		}
		started = true
		// A migration is one long transaction, and its commit writes the
		// change log of every record: no statement timeout applies.
		if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
		if err := markImport(ctx, tx); err != nil {
			return err
		}
		c := &importCount{progress: progress}
		for {
			d, err := next()
			if err != nil {
				return err
			}
			if d.Len() == 0 {
				break
			}
			if err := db.importDump(ctx, tx, d, c); err != nil {
				return err
			}
		}
		progress(c.done)
		total = c.done
		if check != nil {
			return check(loadedTx{db: db, tx: tx})
		}
		return nil
	})
	if err == nil {
		db.analyzeAfter(ctx, total)
	}
	return err
}

// loadedTx is a Load's transaction as its check sees it.
type loadedTx struct {
	db *DB
	tx pgx.Tx
}

func (l loadedTx) Stats(ctx context.Context) (memory.Stats, error) { return l.db.stats(ctx, l.tx) }

func (l loadedTx) Export(ctx context.Context, fn func(memory.Record) error) error {
	return l.db.ExportAll(ctx, querier{l.tx}, fn)
}

func (l loadedTx) FillEmbeddings(ctx context.Context, es []memory.Embedding) (int, error) {
	if err := sqlstore.CheckEmbeddings(es); err != nil {
		return 0, err
	}
	return l.db.putEmbeddingsTx(ctx, l.tx, es, true)
}

// importCount counts the records an import has written and reports them
// now and then.
type importCount struct {
	done, last int
	progress   func(int)
}

func (c *importCount) tick(n int) {
	c.done += n
	if c.done-c.last >= importChunk/2 {
		c.progress(c.done)
		c.last = c.done
	}
}

func (db *DB) importDump(ctx context.Context, tx pgx.Tx, d memory.Dump, c *importCount) error {
	tick := c.tick
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

func (db *DB) importCapsule(ctx context.Context, tx pgx.Tx, c memory.Capsule) error {
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

// Stats implements memory.Store.
func (db *DB) Stats(ctx context.Context) (memory.Stats, error) {
	var st memory.Stats
	err := db.read(ctx, "reading stats", func(tx pgx.Tx) error {
		var err error
		st, err = db.stats(ctx, tx)
		return err
	})
	return st, err
}

// stats counts the records tx sees.
func (db *DB) stats(ctx context.Context, tx pgx.Tx) (memory.Stats, error) {
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
	if err := sqlstore.CountRecords(ctx, querier{tx}, &st); err != nil {
		return st, err
	}
	fmt.Sscan(version, &st.SchemaVersion)
	return st, nil
}
