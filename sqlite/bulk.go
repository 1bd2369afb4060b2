package sqlite

import (
	"context"
	"database/sql"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

// progressEvery is how many records Import writes between progress calls.
const progressEvery = 500

// Import implements memory.Bulk. Observations go in first (redacted ones
// stay out of the index), then capsules with their membership, logged
// observations, summaries, pins, thoughts, entities, entity observations
// and edges, then code memory; any failure rolls everything back.
func (db *DB) Import(ctx context.Context, d memory.Dump, progress func(done int)) error {
	if progress == nil {
		progress = func(int) {}
	}
	return db.write(ctx, "importing", func(tx *sql.Tx) error {
		if err := db.markImport(ctx, tx); err != nil {
			return err
		}
		done := 0
		if err := db.importDump(ctx, tx, d, &done, progress); err != nil {
			return err
		}
		progress(done)
		return nil
	})
}

var _ memory.Loader = (*DB)(nil)

// Load implements memory.Loader: the parts go in through one write
// transaction, which holds the database's write lock until the last, and
// check runs in it before the commit.
func (db *DB) Load(ctx context.Context, next func() (memory.Dump, error), progress func(done int), check func(memory.Loaded) error) error {
	if progress == nil {
		progress = func(int) {}
	}
	started := false
	return db.write(ctx, "importing", func(tx *sql.Tx) error {
		if started {
			// The parts already read cannot be read again: a retry would
			// import only what is left. Nothing was committed.
			return memory.Errorf(memory.CodeDBError, "the import was interrupted by another writer; nothing was written, run it again")
		}
		started = true
		if err := db.markImport(ctx, tx); err != nil {
			return err
		}
		done := 0
		for {
			d, err := next()
			if err != nil {
				return err
			}
			if d.Len() == 0 {
				break
			}
			if err := db.importDump(ctx, tx, d, &done, progress); err != nil {
				return err
			}
		}
		progress(done)
		if check != nil {
			return check(loadedTx{db: db, tx: tx})
		}
		return nil
	})
}

// loadedTx is a Load's transaction as its check sees it.
type loadedTx struct {
	db *DB
	tx *sql.Tx
}

func (l loadedTx) Stats(ctx context.Context) (memory.Stats, error) { return l.db.stats(ctx, l.tx) }

func (l loadedTx) Export(ctx context.Context, fn func(memory.Record) error) error {
	return l.db.ExportAll(ctx, querier{l.tx}, fn)
}

func (l loadedTx) FillEmbeddings(ctx context.Context, es []memory.Embedding) (int, error) {
	if err := sqlstore.CheckEmbeddings(es); err != nil {
		return 0, err
	}
	return putEmbeddingsTx(ctx, l.tx, es, true)
}

// importDump writes one dump inside a write transaction, counting the
// records in done.
func (db *DB) importDump(ctx context.Context, tx *sql.Tx, d memory.Dump, done *int, progress func(int)) error {
	tick := func() {
		*done++
		if *done%progressEvery == 0 {
			progress(*done)
		}
	}
	a, err := newAppender(ctx, tx)
	if err != nil {
		return err
	}
	defer a.close()
	ptx := newPreparedTx(tx)
	defer ptx.close()
	for i, o := range d.Observations {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.insert(ctx, o); err != nil {
			return sqlstore.AtRecord(memory.SectionObservations, i, err)
		}
		tick()
	}
	for i, c := range d.Capsules {
		if err := db.importCapsule(ctx, ptx, a, c); err != nil {
			return sqlstore.AtRecord(memory.SectionCapsules, i, err)
		}
		tick()
	}
	for i, n := range d.Logged {
		if _, err := a.append(ctx, n); err != nil {
			return sqlstore.AtRecord(memory.SectionLogged, i, err)
		}
		tick()
	}
	if err := a.indexFTS(ctx); err != nil {
		return err
	}
	return db.ImportRest(ctx, querier{ptx}, d, tick)
}

func (db *DB) importCapsule(ctx context.Context, tx queryer, a *appender, c memory.Capsule) error {
	if err := sqlstore.CheckNewCapsule(ctx, querier{tx}, c); err != nil {
		return err
	}
	if err := db.InsertCapsule(ctx, querier{tx}, c); err != nil {
		return err
	}
	for i, oid := range c.ObservationIDs {
		// The capsule exists (just written), so a foreign key failing
		// names a missing observation: the insert is the check.
		if _, err := a.insMember.ExecContext(ctx, c.ID, i, oid); err != nil {
			if isForeignKey(err) {
				return memory.Errorf(memory.CodeNotFound, "capsule %q lists observation %q, which does not exist", c.ID, oid)
			}
			return err
		}
	}
	return nil
}

// Stats implements memory.Store.
func (db *DB) Stats(ctx context.Context) (memory.Stats, error) {
	var st memory.Stats
	err := db.read(ctx, "reading stats", func(tx queryer) error {
		var err error
		st, err = db.stats(ctx, tx)
		return err
	})
	return st, err
}

// stats counts the records tx sees.
func (db *DB) stats(ctx context.Context, tx queryer) (memory.Stats, error) {
	st := memory.Stats{Path: db.path}
	var pages, pageSize int64
	for _, c := range []struct {
		q    string
		dest []any
	}{
		{"PRAGMA user_version", []any{&st.SchemaVersion}},
		{"PRAGMA page_count", []any{&pages}},
		{"PRAGMA page_size", []any{&pageSize}},
		{"SELECT count(*), count(*) FILTER (WHERE redacted = true) FROM observations", []any{&st.Observations, &st.Redacted}},
		{"SELECT count(*), count(*) FILTER (WHERE redacted = true) FROM summaries", []any{&st.Summaries, &st.RedactedSummaries}},
		{"SELECT count(*) FROM observations_fts", []any{&st.IndexedObservations}},
		{"SELECT count(*) FROM summaries_fts", []any{&st.IndexedSummaries}},
	} {
		if err := tx.QueryRowContext(ctx, c.q).Scan(c.dest...); err != nil {
			return st, err
		}
	}
	if err := sqlstore.CountRecords(ctx, querier{tx}, &st); err != nil {
		return st, err
	}
	st.SizeBytes = pages * pageSize
	return st, nil
}
