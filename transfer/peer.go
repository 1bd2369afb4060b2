package transfer

import (
	"context"
	"fmt"
	"io"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/peer"
)

// PeerImportOptions tune an import from another memory system.
type PeerImportOptions struct {
	// Scope is given to records the peer keeps no scope for (the MCP
	// memory server's graph).
	Scope memory.Scope
	// Progress and EmbedProgress are as in ImportOptions.
	Progress      func(done, total int)
	EmbedProgress func(done, total int)
}

// PeerImportReport says what an import from a peer mapped where.
type PeerImportReport struct {
	From string `json:"from"`
	// Mapped counts, per kind of the peer's record, what it became
	// ("entity → kg_entity").
	Mapped map[string]int `json:"mapped"`
	// Imported counts the records written, by cairn section; Present
	// those already in the database (an earlier import of the same
	// data), which are left as they are.
	Imported map[memory.Section]int `json:"imported"`
	Present  map[memory.Section]int `json:"present"`
	// Notes are records changed or left out, with the reason.
	Notes []string `json:"notes"`
	// Embedded and Pending are as in ImportReport.
	Embedded int `json:"embedded"`
	Pending  int `json:"pending"`
}

// ImportPeer reads a file of another agent-memory system (peer.MCPMemory,
// peer.Kindling, peer.Mem0) and writes what it holds in one transaction:
// all of it or, when a record is invalid, none. Records already in the
// database (by id; an entity also by name and type) are left as they are,
// so importing the same file again writes nothing.
func (m *Mover) ImportPeer(ctx context.Context, from string, r io.Reader, o PeerImportOptions) (PeerImportReport, error) {
	rep := newPeerReport(from)
	if err := o.Scope.Validate(); err != nil {
		return rep, err
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxImportBytes+1))
	if err != nil {
		return rep, memory.Wrap(memory.CodeInvalidParams, err, "reading the import failed")
	}
	if len(data) > MaxImportBytes {
		return rep, memory.Errorf(memory.CodeInvalidParams, "the import is over %d bytes; split it", MaxImportBytes)
	}
	if m.IsDatabase(data) {
		if from == peer.Kindling {
			return rep, memory.Errorf(memory.CodeInvalidParams, "this is a Kindling store file (SQLite): import it by its path, not from standard input")
		}
		return rep, memory.Errorf(memory.CodeInvalidParams, "the file is a SQLite database, not a %s file", from)
	}
	p, err := peer.Parse(from, data, peer.Options{Now: m.Now(), Scope: o.Scope})
	if err != nil {
		return rep, err
	}
	return m.importParsed(ctx, from, p, rep, o)
}

// ImportKindlingStore imports what Kindling's store file holds, read
// through rows with the queries of Kindling's own export (the records its
// export would give), as ImportPeer imports a file.
func (m *Mover) ImportKindlingStore(ctx context.Context, from string, rows peer.Rows, o PeerImportOptions) (PeerImportReport, error) {
	rep := newPeerReport(from)
	p, err := peer.ParseKindlingStore(ctx, rows, peer.Options{Now: m.Now(), Scope: o.Scope})
	if err != nil {
		return rep, err
	}
	return m.importParsed(ctx, from, p, rep, o)
}

// newPeerReport is the empty report of an import from a peer.
func newPeerReport(from string) PeerImportReport {
	return PeerImportReport{From: from, Imported: map[memory.Section]int{}, Present: map[memory.Section]int{}, Notes: []string{}}
}

// importParsed writes what a peer's file held: the records the database
// lacks, in one transaction.
func (m *Mover) importParsed(ctx context.Context, from string, p peer.Parsed, rep PeerImportReport, o PeerImportOptions) (PeerImportReport, error) {
	rep.Mapped = p.Mapped
	rep.Notes = append(rep.Notes, p.Notes...)
	if p.Dump.Len() == 0 {
		return rep, memory.Errorf(memory.CodeInvalidParams, "the %s file holds no records", from)
	}
	d, err := m.newOnly(ctx, p.Dump, &rep)
	if err != nil {
		return rep, err
	}
	if d.Len() == 0 {
		return rep, nil
	}
	if err := m.ImportDump(ctx, d); err != nil {
		return rep, err
	}
	count := func(s memory.Section, n int) {
		if n > 0 {
			rep.Imported[s] = n
		}
	}
	count(memory.SectionObservations, len(d.Observations))
	count(memory.SectionCapsules, len(d.Capsules))
	count(memory.SectionSummaries, len(d.Summaries))
	count(memory.SectionPins, len(d.Pins))
	count(memory.SectionThoughts, len(d.Thoughts))
	count(memory.SectionEntities, len(d.Entities))
	count(memory.SectionKGObservations, len(d.KGObservations))
	count(memory.SectionEdges, len(d.Edges))
	rep.Embedded, rep.Pending = m.embed(ctx, o.EmbedProgress, false)
	return rep, nil
}

// newOnly drops the records the database holds already, and the records
// that would point at nothing.
func (m *Mover) newOnly(ctx context.Context, d memory.Dump, rep *PeerImportReport) (memory.Dump, error) {
	f := &freshness{m: m, rep: rep, known: map[string]bool{}, remap: map[string]string{}, ents: map[string]bool{},
		facts: map[string]map[string]bool{}}
	for _, step := range []func(context.Context, memory.Dump) error{f.records, f.pins, f.thoughts, f.entities, f.kgObservations, f.edges} {
		if err := step(ctx, d); err != nil {
			return f.out, err
		}
	}
	return f.out, nil
}

// freshness sorts a peer's records into those the database lacks (out)
// and those it holds (counted in rep.Present), in dependency order.
type freshness struct {
	m   *Mover
	rep *PeerImportReport
	out memory.Dump
	// known are the ids of observations and summaries in the database or
	// in the dump (what a pin may point at).
	known map[string]bool
	// remap sends an entity of the dump to the one of the same name and
	// type the database holds; ents are the entities either holds.
	remap map[string]string
	ents  map[string]bool
	// facts caches, per entity, the ids of its facts and edges.
	facts map[string]map[string]bool
}

// exists reads a lookup's error: found, not found, or a failure.
func exists(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case memory.IsCode(err, memory.CodeNotFound):
		return false, nil
	}
	return false, err
}

// records keeps the observations, capsules and summaries the database
// lacks.
func (f *freshness) records(ctx context.Context, d memory.Dump) error {
	st := f.m.Store
	for _, o := range d.Observations {
		ok, err := exists(second(st.Observation(ctx, o.ID)))
		if err != nil {
			return err
		}
		f.known[o.ID] = true
		if ok {
			f.rep.Present[memory.SectionObservations]++
			continue
		}
		f.out.Observations = append(f.out.Observations, o)
	}
	for _, c := range d.Capsules {
		ok, err := exists(second(st.Capsule(ctx, c.ID)))
		if err != nil {
			return err
		}
		if ok {
			f.rep.Present[memory.SectionCapsules]++
			continue
		}
		f.out.Capsules = append(f.out.Capsules, c)
	}
	for _, s := range d.Summaries {
		ok, err := exists(second(st.Summary(ctx, s.ID)))
		if err != nil {
			return err
		}
		f.known[s.ID] = true
		if ok {
			f.rep.Present[memory.SectionSummaries]++
			continue
		}
		f.out.Summaries = append(f.out.Summaries, s)
	}
	return nil
}

// pins keeps the pins the database lacks whose target exists.
func (f *freshness) pins(ctx context.Context, d memory.Dump) error {
	if len(d.Pins) == 0 {
		return nil
	}
	// Every pin, expired or not: active at the beginning of time.
	all, err := f.m.Store.ActivePins(ctx, memory.PinQuery{Now: 0, IncludeRedacted: true})
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, p := range all {
		have[p.Pin.ID] = true
	}
	for _, p := range d.Pins {
		if have[p.ID] {
			f.rep.Present[memory.SectionPins]++
			continue
		}
		if !f.known[p.TargetID] {
			if _, err := f.m.Target(ctx, p.TargetType, p.TargetID); memory.IsCode(err, memory.CodeNotFound) {
				f.rep.Notes = append(f.rep.Notes, fmt.Sprintf("pin %s left out: its target %s %s does not exist", p.ID, p.TargetType, p.TargetID))
				continue
			} else if err != nil {
				return err
			}
		}
		f.out.Pins = append(f.out.Pins, p)
	}
	return nil
}

// thoughts keeps the thoughts the database lacks.
func (f *freshness) thoughts(ctx context.Context, d memory.Dump) error {
	for _, t := range d.Thoughts {
		ok, err := exists(second(f.m.Store.Thought(ctx, t.ID)))
		if err != nil {
			return err
		}
		if ok {
			f.rep.Present[memory.SectionThoughts]++
			continue
		}
		f.out.Thoughts = append(f.out.Thoughts, t)
	}
	return nil
}

// entities keeps the entities the database lacks, by id, else by name
// and type (the same entity made in cairn before): facts and edges then
// join the existing one.
func (f *freshness) entities(ctx context.Context, d memory.Dump) error {
	for _, ent := range d.Entities {
		ok, err := exists(second(f.m.Store.Entity(ctx, ent.ID)))
		if err != nil {
			return err
		}
		if ok {
			f.rep.Present[memory.SectionEntities]++
			f.ents[ent.ID] = true
			continue
		}
		same, err := f.m.Store.EntitiesByName(ctx, ent.Name)
		if err != nil {
			return err
		}
		merged := false
		for _, s := range same {
			if s.Type == ent.Type && s.Scope == ent.Scope {
				f.remap[ent.ID] = s.ID
				f.ents[s.ID] = true
				f.rep.Notes = append(f.rep.Notes, fmt.Sprintf("entity %q joins cairn's entity %s of the same name and type", ent.Name, s.ID))
				f.rep.Present[memory.SectionEntities]++
				merged = true
				break
			}
		}
		if !merged {
			f.out.Entities = append(f.out.Entities, ent)
			f.ents[ent.ID] = true
		}
	}
	return nil
}

// to is the entity an id of the dump stands for in the database.
func (f *freshness) to(id string) string {
	if r, ok := f.remap[id]; ok {
		return r
	}
	return id
}

// factsOf are the ids of the facts and edges an entity of the database
// has (none when it is not in the database).
func (f *freshness) factsOf(ctx context.Context, entity string) (map[string]bool, error) {
	if m, ok := f.facts[entity]; ok {
		return m, nil
	}
	st := f.m.Store
	m := map[string]bool{}
	if ok, err := exists(second(st.Entity(ctx, entity))); err != nil || !ok {
		f.facts[entity] = m
		return m, err
	}
	obs, err := st.KGObservations(ctx, entity)
	if err != nil {
		return nil, err
	}
	for _, o := range obs {
		m[o.ID] = true
	}
	edges, err := st.Edges(ctx, entity, 100_000)
	if err != nil {
		return nil, err
	}
	for _, g := range edges {
		m[g.ID] = true
	}
	f.facts[entity] = m
	return m, nil
}

// kgObservations keeps the facts their entity lacks.
func (f *freshness) kgObservations(ctx context.Context, d memory.Dump) error {
	for _, o := range d.KGObservations {
		o.EntityID = f.to(o.EntityID)
		have, err := f.factsOf(ctx, o.EntityID)
		if err != nil {
			return err
		}
		if have[o.ID] {
			f.rep.Present[memory.SectionKGObservations]++
			continue
		}
		f.out.KGObservations = append(f.out.KGObservations, o)
	}
	return nil
}

// edges keeps the edges the database lacks between entities either
// holds.
func (f *freshness) edges(ctx context.Context, d memory.Dump) error {
	for _, g := range d.Edges {
		g.Source, g.Target = f.to(g.Source), f.to(g.Target)
		for _, end := range []string{g.Source, g.Target} {
			if !f.ents[end] {
				if ok, err := exists(second(f.m.Store.Entity(ctx, end))); err != nil {
					return err
				} else if ok {
					f.ents[end] = true
				}
			}
		}
		if !f.ents[g.Source] || !f.ents[g.Target] {
			f.rep.Notes = append(f.rep.Notes, fmt.Sprintf("relation %s left out: an entity it relates is not in the file", g.Relation))
			continue
		}
		have, err := f.factsOf(ctx, g.Source)
		if err != nil {
			return err
		}
		if have[g.ID] {
			f.rep.Present[memory.SectionEdges]++
			continue
		}
		f.out.Edges = append(f.out.Edges, g)
	}
	return nil
}

// second is the error of a (value, error) pair.
func second[T any](_ T, err error) error { return err }
