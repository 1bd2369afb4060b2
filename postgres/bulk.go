package postgres

import (
	"context"
	"errors"
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
	return exportAll(ctx, l.tx, fn)
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
	for i, s := range d.Summaries {
		if err := db.ImportSummary(ctx, querier{tx}, s); err != nil {
			return atRecord(memory.SectionSummaries, i, err)
		}
		tick(1)
	}
	for i, p := range d.Pins {
		if err := db.ImportPin(ctx, querier{tx}, p); err != nil {
			return atRecord(memory.SectionPins, i, err)
		}
		tick(1)
	}
	for i, t := range d.Thoughts {
		if err := db.InsertThought(ctx, querier{tx}, t); err != nil {
			return atRecord(memory.SectionThoughts, i, err)
		}
		tick(1)
	}
	for i, e := range d.Entities {
		if err := insertEntity(ctx, tx, e); err != nil {
			return atRecord(memory.SectionEntities, i, err)
		}
		tick(1)
	}
	for i, o := range d.KGObservations {
		if err := importKGObservation(ctx, tx, o); err != nil {
			return atRecord(memory.SectionKGObservations, i, err)
		}
		tick(1)
	}
	for i, g := range d.Edges {
		if err := importEdge(ctx, tx, g); err != nil {
			return atRecord(memory.SectionEdges, i, err)
		}
		tick(1)
	}
	return importCode(ctx, tx, d, func() { tick(1) })
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

// entityScope returns an entity's scope; what names the record referring
// to it, for the not_found message.
func entityScope(ctx context.Context, tx queryer, id, what string) (memory.Scope, error) {
	var sc memory.Scope
	err := tx.QueryRow(ctx, "SELECT session_id, repo_id, agent_id, user_id FROM kg_entities WHERE id = $1", id).
		Scan(&sc.SessionID, &sc.RepoID, &sc.AgentID, &sc.UserID)
	if errors.Is(err, pgx.ErrNoRows) {
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
	err := db.read(ctx, "exporting", func(tx pgx.Tx) error { return exportAll(ctx, tx, emit) })
	if fnErr != nil {
		return fnErr
	}
	return err
}

func exportAll(ctx context.Context, tx pgx.Tx, emit func(memory.Record) error) error {
	steps := []struct {
		q   string
		row func(scanner) (memory.Record, error)
	}{
		{"SELECT " + obsColumns + " FROM observations o ORDER BY o.seq", func(s scanner) (memory.Record, error) {
			o, err := scanObservation(s)
			return memory.Record{Observation: &o}, err
		}},
		{"SELECT " + capColumns + `, coalesce((SELECT array_agg(m.observation_id ORDER BY m.position) FROM capsule_observations m
			WHERE m.capsule_id = c.id), '{}') FROM capsules c ORDER BY c.seq`, func(s scanner) (memory.Record, error) {
			var members []string
			c, err := scanCapsule(extraScan{s, []any{&members}})
			c.ObservationIDs = members
			if c.ObservationIDs == nil {
				c.ObservationIDs = []string{}
			}
			return memory.Record{Capsule: &c}, err
		}},
		{"SELECT " + sumColumns + " FROM summaries s ORDER BY s.seq", func(s scanner) (memory.Record, error) {
			m, err := scanSummary(s)
			return memory.Record{Summary: &m}, err
		}},
		{"SELECT " + pinColumns + " FROM pins p ORDER BY p.seq", func(s scanner) (memory.Record, error) {
			p, err := scanPin(s)
			return memory.Record{Pin: &p}, err
		}},
		// Thoughts, then the knowledge graph: entities before the
		// observations and edges that name them, each in insertion order.
		{"SELECT " + sqlstore.ThoughtColumns + " FROM thoughts t ORDER BY t.seq", func(s scanner) (memory.Record, error) {
			t, err := sqlstore.ScanThought(s)
			return memory.Record{Thought: &t}, err
		}},
		{"SELECT " + entityColumns + " FROM kg_entities e ORDER BY e.seq", func(s scanner) (memory.Record, error) {
			e, err := scanEntity(s)
			return memory.Record{KGEntity: &e}, err
		}},
		{"SELECT " + kgObsColumns + " FROM kg_observations o ORDER BY o.seq", func(s scanner) (memory.Record, error) {
			o, err := scanKGObs(s)
			return memory.Record{KGObservation: &o}, err
		}},
		{"SELECT " + edgeColumns + " FROM kg_edges g ORDER BY g.seq", func(s scanner) (memory.Record, error) {
			g, err := scanEdge(s)
			return memory.Record{KGEdge: &g}, err
		}},
	}
	for _, st := range steps {
		if err := eachRow(ctx, tx, st.q, nil, func(s scanner) error {
			r, err := st.row(s)
			if err != nil {
				return err
			}
			return emit(r)
		}); err != nil {
			return err
		}
	}
	return exportCode(ctx, tx, emit)
}

// extraScan appends destinations to a scan.
type extraScan struct {
	s     scanner
	extra []any
}

func (e extraScan) Scan(dest ...any) error { return e.s.Scan(append(dest, e.extra...)...) }

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
		{"SELECT count(*), count(*) FILTER (WHERE status = 'open') FROM capsules", []any{&st.Capsules, &st.OpenCapsules}},
		{"SELECT count(*), count(*) FILTER (WHERE redacted), count(*) FILTER (WHERE fts IS NOT NULL) FROM summaries",
			[]any{&st.Summaries, &st.RedactedSummaries, &st.IndexedSummaries}},
		{"SELECT count(*) FROM pins", []any{&st.Pins}},
		{"SELECT count(*), count(*) FILTER (WHERE redacted) FROM thoughts", []any{&st.Thoughts, &st.RedactedThoughts}},
		{"SELECT count(*) FROM kg_entities", []any{&st.Entities}},
		{"SELECT count(*) FROM kg_observations", []any{&st.EntityObservations}},
		{"SELECT count(*) FROM kg_edges", []any{&st.Edges}},
		{"SELECT count(*) FROM code_entities", []any{&st.CodeEntities}},
		{"SELECT count(*) FROM code_episodes", []any{&st.CodeEpisodes}},
	} {
		if err := tx.QueryRow(ctx, c.q).Scan(c.dest...); err != nil {
			return st, err
		}
	}
	fmt.Sscan(version, &st.SchemaVersion)
	return st, nil
}
