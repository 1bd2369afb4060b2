package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
	return exportAll(ctx, l.tx, fn)
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
			return atRecord(memory.SectionObservations, i, err)
		}
		tick()
	}
	for i, c := range d.Capsules {
		if err := db.importCapsule(ctx, ptx, a, c); err != nil {
			return atRecord(memory.SectionCapsules, i, err)
		}
		tick()
	}
	for i, n := range d.Logged {
		if _, err := a.append(ctx, n); err != nil {
			return atRecord(memory.SectionLogged, i, err)
		}
		tick()
	}
	if err := a.indexFTS(ctx); err != nil {
		return err
	}
	for i, s := range d.Summaries {
		if err := db.ImportSummary(ctx, querier{ptx}, s); err != nil {
			return atRecord(memory.SectionSummaries, i, err)
		}
		tick()
	}
	for i, p := range d.Pins {
		if err := db.ImportPin(ctx, querier{ptx}, p); err != nil {
			return atRecord(memory.SectionPins, i, err)
		}
		tick()
	}
	for i, t := range d.Thoughts {
		if err := db.InsertThought(ctx, querier{ptx}, t); err != nil {
			return atRecord(memory.SectionThoughts, i, err)
		}
		tick()
	}
	for i, e := range d.Entities {
		if err := insertEntity(ctx, ptx, e); err != nil {
			return atRecord(memory.SectionEntities, i, err)
		}
		tick()
	}
	for i, o := range d.KGObservations {
		if err := importKGObservation(ctx, ptx, o); err != nil {
			return atRecord(memory.SectionKGObservations, i, err)
		}
		tick()
	}
	for i, g := range d.Edges {
		if err := importEdge(ctx, ptx, g); err != nil {
			return atRecord(memory.SectionEdges, i, err)
		}
		tick()
	}
	return importCode(ctx, ptx, d, tick)
}

// atRecord names the record a typed error is about; other errors (the
// database's) pass unchanged.
func atRecord(section memory.Section, i int, err error) error {
	var me *memory.Error
	if !errors.As(err, &me) {
		return err
	}
	return &memory.RecordError{Section: section, Index: i, Err: err}
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

// entityScope returns an entity's scope; what names the record referring
// to it, for the not_found message.
func entityScope(ctx context.Context, tx queryer, id, what string) (memory.Scope, error) {
	var sc memory.Scope
	err := tx.QueryRowContext(ctx, "SELECT session_id, repo_id, agent_id, user_id FROM kg_entities WHERE id = ?", id).
		Scan(&sc.SessionID, &sc.RepoID, &sc.AgentID, &sc.UserID)
	if errors.Is(err, sql.ErrNoRows) {
		return sc, memory.Errorf(memory.CodeNotFound, "%s names entity %q, which does not exist", what, id)
	}
	return sc, err
}

// inheritScope fills the dimensions own leaves empty from the entity's
// scope; a dimension set to another value is invalid_params.
func inheritScope(own, entity memory.Scope, what, entityID string) (memory.Scope, error) {
	if dim := own.Conflicts(entity); dim != "" {
		return own, memory.Errorf(memory.CodeInvalidParams, "%s: scope %s %q differs from entity %q's %q",
			what, dim, own.Get(dim), entityID, entity.Get(dim))
	}
	return own.Fill(entity), nil
}

func importKGObservation(ctx context.Context, tx queryer, o memory.KGObservation) error {
	what := fmt.Sprintf("entity observation %q", o.ID)
	sc, err := entityScope(ctx, tx, o.EntityID, what)
	if err != nil {
		return err
	}
	if o.Scope, err = inheritScope(o.Scope, sc, what, o.EntityID); err != nil {
		return err
	}
	return insertKGObservation(ctx, tx, o)
}

func importEdge(ctx context.Context, tx queryer, g memory.KGEdge) error {
	what := fmt.Sprintf("edge %q", g.ID)
	sc, err := entityScope(ctx, tx, g.Source, what)
	if err != nil {
		return err
	}
	if _, err := entityScope(ctx, tx, g.Target, what); err != nil {
		return err
	}
	if g.Scope, err = inheritScope(g.Scope, sc, what, g.Source); err != nil {
		return err
	}
	return insertEdge(ctx, tx, g)
}

// Export implements memory.Bulk. It reads one snapshot.
func (db *DB) Export(ctx context.Context, fn func(memory.Record) error) error {
	var fnErr error
	emit := func(r memory.Record) error {
		if err := fn(r); err != nil {
			fnErr = err
			return err
		}
		return nil
	}
	err := db.read(ctx, "exporting", func(tx queryer) error { return exportAll(ctx, tx, emit) })
	if fnErr != nil {
		return fnErr
	}
	return err
}

// exportAll calls emit for every record tx sees, in Export's order.
func exportAll(ctx context.Context, tx queryer, emit func(memory.Record) error) error {
	if err := eachRow(ctx, tx, "SELECT "+obsColumns+" FROM observations o ORDER BY o.seq", func(s scanner) error {
		o, err := scanObservation(s)
		if err != nil {
			return err
		}
		return emit(memory.Record{Observation: &o})
	}); err != nil {
		return err
	}
	var capIDs []string
	if err := eachRow(ctx, tx, "SELECT id FROM capsules ORDER BY seq", func(s scanner) error {
		var id string
		err := s.Scan(&id)
		capIDs = append(capIDs, id)
		return err
	}); err != nil {
		return err
	}
	for _, id := range capIDs {
		c, err := sqlstore.GetCapsule(ctx, querier{tx}, id)
		if err != nil {
			return err
		}
		c.SummaryID = ""
		if err := emit(memory.Record{Capsule: &c}); err != nil {
			return err
		}
	}
	if err := eachRow(ctx, tx, "SELECT "+sumColumns+" FROM summaries s ORDER BY s.seq", func(s scanner) error {
		m, err := scanSummary(s)
		if err != nil {
			return err
		}
		return emit(memory.Record{Summary: &m})
	}); err != nil {
		return err
	}
	if err := eachRow(ctx, tx, "SELECT "+pinColumns+" FROM pins p ORDER BY p.seq", func(s scanner) error {
		p, err := scanPin(s)
		if err != nil {
			return err
		}
		return emit(memory.Record{Pin: &p})
	}); err != nil {
		return err
	}
	// Thoughts, then the knowledge graph: entities before the
	// observations and edges that name them. Each kind goes in insertion
	// order, which Import keeps, so an imported copy lists records (and
	// breaks ties) as the original does.
	if err := eachRow(ctx, tx, "SELECT "+sqlstore.ThoughtColumns+" FROM thoughts t ORDER BY t.seq", func(s scanner) error {
		t, err := sqlstore.ScanThought(s)
		if err != nil {
			return err
		}
		return emit(memory.Record{Thought: &t})
	}); err != nil {
		return err
	}
	if err := eachRow(ctx, tx, "SELECT "+entityColumns+" FROM kg_entities e ORDER BY e.seq", func(s scanner) error {
		e, err := scanEntity(s)
		if err != nil {
			return err
		}
		return emit(memory.Record{KGEntity: &e})
	}); err != nil {
		return err
	}
	if err := eachRow(ctx, tx, "SELECT "+kgObsColumns+" FROM kg_observations o ORDER BY o.seq", func(s scanner) error {
		o, err := scanKGObs(s)
		if err != nil {
			return err
		}
		return emit(memory.Record{KGObservation: &o})
	}); err != nil {
		return err
	}
	if err := eachRow(ctx, tx, "SELECT "+edgeColumns+" FROM kg_edges g ORDER BY g.seq", func(s scanner) error {
		g, err := scanEdge(s)
		if err != nil {
			return err
		}
		return emit(memory.Record{KGEdge: &g})
	}); err != nil {
		return err
	}
	return exportCode(ctx, tx, emit)
}

func eachRow(ctx context.Context, tx queryer, q string, fn func(scanner) error) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
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
		{"SELECT count(*), coalesce(sum(redacted), 0) FROM observations", []any{&st.Observations, &st.Redacted}},
		{"SELECT count(*), coalesce(sum(status = 'open'), 0) FROM capsules", []any{&st.Capsules, &st.OpenCapsules}},
		{"SELECT count(*), coalesce(sum(redacted), 0) FROM summaries", []any{&st.Summaries, &st.RedactedSummaries}},
		{"SELECT count(*) FROM pins", []any{&st.Pins}},
		{"SELECT count(*) FROM observations_fts", []any{&st.IndexedObservations}},
		{"SELECT count(*) FROM summaries_fts", []any{&st.IndexedSummaries}},
		{"SELECT count(*), coalesce(sum(redacted), 0) FROM thoughts", []any{&st.Thoughts, &st.RedactedThoughts}},
		{"SELECT count(*) FROM kg_entities", []any{&st.Entities}},
		{"SELECT count(*) FROM kg_observations", []any{&st.EntityObservations}},
		{"SELECT count(*) FROM kg_edges", []any{&st.Edges}},
		{"SELECT count(*) FROM code_entities", []any{&st.CodeEntities}},
		{"SELECT count(*) FROM code_episodes", []any{&st.CodeEpisodes}},
	} {
		if err := tx.QueryRowContext(ctx, c.q).Scan(c.dest...); err != nil {
			return st, err
		}
	}
	st.SizeBytes = pages * pageSize
	return st, nil
}
