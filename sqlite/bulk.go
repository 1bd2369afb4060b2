package sqlite

import (
	"context"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

// ImportDump implements sqlstore.Importer: observations, capsules and
// logged observations through prepared statements, their full-text
// index rows at the end of the part, then the rest.
func (b backend) ImportDump(ctx context.Context, q sqlstore.Querier, d memory.Dump, count func(int)) error {
	db, tx := b.db, txOf(q)
	tick := func() { count(1) }
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

// BeginImport implements sqlstore.Importer.
func (b backend) BeginImport(ctx context.Context, q sqlstore.Querier, parts bool) error {
	return b.db.markImport(ctx, txOf(q))
}

// Imported implements sqlstore.Importer: nothing follows.
func (b backend) Imported(context.Context, int) {}

// Stats implements sqlstore.Importer: the records q sees, and the file's
// size.
func (b backend) Stats(ctx context.Context, q sqlstore.Querier) (memory.Stats, error) {
	tx := queryerOf(q)
	st := memory.Stats{Path: b.db.path}
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
	if err := sqlstore.CountRecords(ctx, q, &st); err != nil {
		return st, err
	}
	st.SizeBytes = pages * pageSize
	return st, nil
}
