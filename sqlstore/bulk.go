package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairnhq/cairn/memory"
)

// importSummary writes an imported summary: a capsule that has one, or a
// summary id that is taken, is a conflict.
func (s *Store) importSummary(ctx context.Context, q Querier, m memory.Summary) error {
	ok, err := exists(ctx, q, "SELECT 1 FROM summaries WHERE capsule_id = ?", m.CapsuleID)
	if err != nil {
		return err
	}
	if ok {
		return memory.Errorf(memory.CodeConflict, "summary %q: capsule %q already has a summary", m.ID, m.CapsuleID)
	}
	if ok, err := exists(ctx, q, "SELECT 1 FROM summaries WHERE id = ?", m.ID); err != nil || ok {
		if ok {
			return memory.Errorf(memory.CodeConflict, "summary id %q already exists", m.ID)
		}
		return err
	}
	_, err = s.putSummary(ctx, q, m)
	return err
}

// importPin writes an imported pin; its target must exist.
func (s *Store) importPin(ctx context.Context, q Querier, p memory.Pin) error {
	if _, err := pinTarget(ctx, q, p.TargetType, p.TargetID); err != nil {
		if memory.IsCode(err, memory.CodeNotFound) {
			return memory.Errorf(memory.CodeNotFound, "pin %q points at %s %q, which does not exist", p.ID, p.TargetType, p.TargetID)
		}
		return err
	}
	return s.insertPin(ctx, q, p)
}

// ImportRest writes what follows a dump's observations and capsules,
// inside Import's transaction: summaries, pins, thoughts, entities, entity
// observations and edges, then code memory. tick counts each record.
func (s *Store) ImportRest(ctx context.Context, q Querier, d memory.Dump, tick func()) error {
	steps := []struct {
		section memory.Section
		n       int
		write   func(i int) error
	}{
		{memory.SectionSummaries, len(d.Summaries), func(i int) error { return s.importSummary(ctx, q, d.Summaries[i]) }},
		{memory.SectionPins, len(d.Pins), func(i int) error { return s.importPin(ctx, q, d.Pins[i]) }},
		{memory.SectionThoughts, len(d.Thoughts), func(i int) error { return s.insertThought(ctx, q, d.Thoughts[i]) }},
		{memory.SectionEntities, len(d.Entities), func(i int) error { return s.insertEntity(ctx, q, d.Entities[i]) }},
		{memory.SectionKGObservations, len(d.KGObservations), func(i int) error { return s.importKGObservation(ctx, q, d.KGObservations[i]) }},
		{memory.SectionEdges, len(d.Edges), func(i int) error { return s.importEdge(ctx, q, d.Edges[i]) }},
	}
	for _, st := range steps {
		for i := range st.n {
			if err := st.write(i); err != nil {
				return AtRecord(st.section, i, err)
			}
			tick()
		}
	}
	return s.importCode(ctx, q, d, tick)
}

// Export implements memory.Bulk. It reads one snapshot.
func (s *Store) Export(ctx context.Context, fn func(memory.Record) error) error {
	var fnErr error
	emit := func(r memory.Record) error {
		if err := fn(r); err != nil {
			fnErr = err
			return err
		}
		return nil
	}
	err := s.b.Read(ctx, "exporting", func(q Querier) error { return s.exportAll(ctx, q, emit) })
	if fnErr != nil {
		return fnErr
	}
	return err
}

// exportAll calls emit for every record q sees, in Export's order:
// observations, capsules with their membership, summaries, pins, then
// thoughts and the knowledge graph (entities before the observations and
// edges that name them), each kind in insertion order, which Import
// keeps, so an imported copy lists records (and breaks ties) as the
// original does; then code memory.
func (s *Store) exportAll(ctx context.Context, q Querier, emit func(memory.Record) error) error {
	steps := []struct {
		q   string
		row func(Scanner) (memory.Record, error)
	}{
		{"SELECT " + ObsColumns + " FROM observations o ORDER BY o.seq", func(sc Scanner) (memory.Record, error) {
			o, err := ScanObservation(sc)
			return memory.Record{Observation: &o}, err
		}},
		{"SELECT " + capColumns + ", " + s.d.MembersJSON + " FROM capsules c ORDER BY c.seq", scanExportedCapsule},
		{"SELECT " + SumColumns + " FROM summaries s ORDER BY s.seq", func(sc Scanner) (memory.Record, error) {
			m, err := ScanSummary(sc)
			return memory.Record{Summary: &m}, err
		}},
		{"SELECT " + pinColumns + " FROM pins p ORDER BY p.seq", func(sc Scanner) (memory.Record, error) {
			p, err := scanPin(sc)
			return memory.Record{Pin: &p}, err
		}},
		{"SELECT " + thoughtColumns + " FROM thoughts t ORDER BY t.seq", func(sc Scanner) (memory.Record, error) {
			t, err := scanThought(sc)
			return memory.Record{Thought: &t}, err
		}},
		{"SELECT " + entityColumns + " FROM kg_entities e ORDER BY e.seq", func(sc Scanner) (memory.Record, error) {
			e, err := scanEntity(sc)
			return memory.Record{KGEntity: &e}, err
		}},
		{"SELECT " + kGObsColumns + " FROM kg_observations o ORDER BY o.seq", func(sc Scanner) (memory.Record, error) {
			o, err := scanKGObs(sc)
			return memory.Record{KGObservation: &o}, err
		}},
		{"SELECT " + edgeColumns + " FROM kg_edges g ORDER BY g.seq", func(sc Scanner) (memory.Record, error) {
			g, err := scanEdge(sc)
			return memory.Record{KGEdge: &g}, err
		}},
	}
	for _, st := range steps {
		if err := EachRow(ctx, q, st.q, nil, func(sc Scanner) error {
			r, err := st.row(sc)
			if err != nil {
				return err
			}
			return emit(r)
		}); err != nil {
			return err
		}
	}
	return exportCode(ctx, q, emit)
}

// scanExportedCapsule reads a capsule with its observation ids (a JSON
// list, MembersJSON).
func scanExportedCapsule(sc Scanner) (memory.Record, error) {
	var members string
	c, err := scanCapsule(withExtra(sc, &members))
	if err != nil {
		return memory.Record{}, err
	}
	c.ObservationIDs = []string{}
	if err := json.Unmarshal([]byte(members), &c.ObservationIDs); err != nil {
		return memory.Record{}, fmt.Errorf("decoding the observations of capsule %s: %w", c.ID, err)
	}
	return memory.Record{Capsule: &c}, nil
}

// CountRecords fills in the counts of the records both stores keep the
// same way: capsules, pins, thoughts, the knowledge graph and code memory.
func CountRecords(ctx context.Context, q Querier, st *memory.Stats) error {
	for _, c := range []struct {
		q    string
		dest []any
	}{
		{"SELECT count(*), count(*) FILTER (WHERE status = 'open') FROM capsules", []any{&st.Capsules, &st.OpenCapsules}},
		{"SELECT count(*) FROM pins", []any{&st.Pins}},
		{"SELECT count(*), count(*) FILTER (WHERE redacted = true) FROM thoughts", []any{&st.Thoughts, &st.RedactedThoughts}},
		{"SELECT count(*) FROM kg_entities", []any{&st.Entities}},
		{"SELECT count(*) FROM kg_observations", []any{&st.EntityObservations}},
		{"SELECT count(*) FROM kg_edges", []any{&st.Edges}},
		{"SELECT count(*) FROM code_entities", []any{&st.CodeEntities}},
		{"SELECT count(*) FROM code_episodes", []any{&st.CodeEpisodes}},
	} {
		if err := q.QueryRow(ctx, c.q).Scan(c.dest...); err != nil {
			return err
		}
	}
	return nil
}
