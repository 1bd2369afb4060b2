package cairn

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/peer"
	"github.com/cairnhq/cairn/sqlite"
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
func (e *Engine) ImportPeer(ctx context.Context, from string, r io.Reader, o PeerImportOptions) (PeerImportReport, error) {
	rep := PeerImportReport{From: from, Imported: map[memory.Section]int{}, Present: map[memory.Section]int{}, Notes: []string{}}
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
	if sqlite.IsDatabase(data) {
		if from == peer.Kindling {
			return rep, memory.Errorf(memory.CodeInvalidParams, "this is a Kindling store file (SQLite): import it by its path, not from standard input")
		}
		return rep, memory.Errorf(memory.CodeInvalidParams, "the file is a SQLite database, not a %s file", from)
	}
	p, err := peer.Parse(from, data, peer.Options{Now: e.nowMs(), Scope: o.Scope})
	if err != nil {
		return rep, err
	}
	return e.importParsed(ctx, from, p, rep, o)
}

// ImportPeerFile is ImportPeer for an open file: Kindling's SQLite store
// (kindling.db, found by its header) is read where it lies, read-only,
// with the queries of Kindling's own export, and gives the records its
// export would; any other file is read as ImportPeer reads it.
func (e *Engine) ImportPeerFile(ctx context.Context, from string, f *os.File, o PeerImportOptions) (PeerImportReport, error) {
	head := make([]byte, len(sqlite.Header))
	n, _ := f.ReadAt(head, 0)
	if from != peer.Kindling || !sqlite.IsDatabase(head[:n]) {
		return e.ImportPeer(ctx, from, f, o)
	}
	rep := PeerImportReport{From: from, Imported: map[memory.Section]int{}, Present: map[memory.Section]int{}, Notes: []string{}}
	if err := o.Scope.Validate(); err != nil {
		return rep, err
	}
	db, err := sqlite.OpenForeign(f.Name())
	if err != nil {
		return rep, memory.Prefixed(err, "reading the Kindling store: ")
	}
	defer db.Close()
	rows := func(ctx context.Context, what, query string, limit int) ([]map[string]any, error) {
		return db.Rows(ctx, what, query, limit)
	}
	p, err := peer.ParseKindlingStore(ctx, rows, peer.Options{Now: e.nowMs(), Scope: o.Scope})
	if err != nil {
		return rep, err
	}
	return e.importParsed(ctx, from, p, rep, o)
}

// importParsed writes what a peer's file held: the records the database
// lacks, in one transaction.
func (e *Engine) importParsed(ctx context.Context, from string, p peer.Parsed, rep PeerImportReport, o PeerImportOptions) (PeerImportReport, error) {
	rep.Mapped = p.Mapped
	rep.Notes = append(rep.Notes, p.Notes...)
	if p.Dump.Len() == 0 {
		return rep, memory.Errorf(memory.CodeInvalidParams, "the %s file holds no records", from)
	}
	d, err := e.newOnly(ctx, p.Dump, &rep)
	if err != nil {
		return rep, err
	}
	if d.Len() == 0 {
		return rep, nil
	}
	if err := e.ImportDump(ctx, d); err != nil {
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
	if e.embedOnWrite {
		er, err := e.Reembed(ctx, ReembedRequest{}, o.EmbedProgress)
		rep.Embedded, rep.Pending = er.Embedded, er.Pending
		if err != nil {
			e.log.Warn("imported records stored without vectors; run cairn reembed", "err", memory.Public(err).Message)
		}
	}
	return rep, nil
}

// newOnly drops the records the database holds already, and the records
// that would point at nothing.
func (e *Engine) newOnly(ctx context.Context, d memory.Dump, rep *PeerImportReport) (memory.Dump, error) {
	var out memory.Dump
	present := func(s memory.Section) { rep.Present[s]++ }
	exists := func(err error) (bool, error) {
		switch {
		case err == nil:
			return true, nil
		case memory.IsCode(err, memory.CodeNotFound):
			return false, nil
		}
		return false, err
	}
	known := map[string]bool{} // ids in the database or in the dump
	for _, o := range d.Observations {
		ok, err := exists(second(e.store.Observation(ctx, o.ID)))
		if err != nil {
			return out, err
		}
		known[o.ID] = true
		if ok {
			present(memory.SectionObservations)
			continue
		}
		out.Observations = append(out.Observations, o)
	}
	for _, c := range d.Capsules {
		ok, err := exists(second(e.store.Capsule(ctx, c.ID)))
		if err != nil {
			return out, err
		}
		if ok {
			present(memory.SectionCapsules)
			continue
		}
		out.Capsules = append(out.Capsules, c)
	}
	for _, s := range d.Summaries {
		ok, err := exists(second(e.store.Summary(ctx, s.ID)))
		if err != nil {
			return out, err
		}
		known[s.ID] = true
		if ok {
			present(memory.SectionSummaries)
			continue
		}
		out.Summaries = append(out.Summaries, s)
	}
	if len(d.Pins) > 0 {
		// Every pin, expired or not: active at the beginning of time.
		all, err := e.store.ActivePins(ctx, memory.PinQuery{Now: 0, IncludeRedacted: true})
		if err != nil {
			return out, err
		}
		have := map[string]bool{}
		for _, p := range all {
			have[p.Pin.ID] = true
		}
		for _, p := range d.Pins {
			if have[p.ID] {
				present(memory.SectionPins)
				continue
			}
			if !known[p.TargetID] {
				if _, err := e.findTarget(ctx, p.TargetType, p.TargetID); memory.IsCode(err, memory.CodeNotFound) {
					rep.Notes = append(rep.Notes, fmt.Sprintf("pin %s left out: its target %s %s does not exist", p.ID, p.TargetType, p.TargetID))
					continue
				} else if err != nil {
					return out, err
				}
			}
			out.Pins = append(out.Pins, p)
		}
	}
	for _, t := range d.Thoughts {
		ok, err := exists(second(e.store.Thought(ctx, t.ID)))
		if err != nil {
			return out, err
		}
		if ok {
			present(memory.SectionThoughts)
			continue
		}
		out.Thoughts = append(out.Thoughts, t)
	}
	// Entities: by id, else by name and type (the same entity made in
	// cairn before): facts and edges then join the existing one.
	remap := map[string]string{}
	ents := map[string]bool{}
	for _, ent := range d.Entities {
		ok, err := exists(second(e.store.Entity(ctx, ent.ID)))
		if err != nil {
			return out, err
		}
		if ok {
			present(memory.SectionEntities)
			ents[ent.ID] = true
			continue
		}
		same, err := e.store.EntitiesByName(ctx, ent.Name)
		if err != nil {
			return out, err
		}
		merged := false
		for _, s := range same {
			if s.Type == ent.Type && s.Scope == ent.Scope {
				remap[ent.ID] = s.ID
				ents[s.ID] = true
				rep.Notes = append(rep.Notes, fmt.Sprintf("entity %q joins cairn's entity %s of the same name and type", ent.Name, s.ID))
				present(memory.SectionEntities)
				merged = true
				break
			}
		}
		if !merged {
			out.Entities = append(out.Entities, ent)
			ents[ent.ID] = true
		}
	}
	to := func(id string) string {
		if r, ok := remap[id]; ok {
			return r
		}
		return id
	}
	haveFacts := map[string]map[string]bool{}
	factsOf := func(entity string) (map[string]bool, error) {
		if m, ok := haveFacts[entity]; ok {
			return m, nil
		}
		m := map[string]bool{}
		if ok, err := exists(second(e.store.Entity(ctx, entity))); err != nil || !ok {
			haveFacts[entity] = m
			return m, err
		}
		obs, err := e.store.KGObservations(ctx, entity)
		if err != nil {
			return nil, err
		}
		for _, o := range obs {
			m[o.ID] = true
		}
		edges, err := e.store.Edges(ctx, entity, 100_000)
		if err != nil {
			return nil, err
		}
		for _, g := range edges {
			m[g.ID] = true
		}
		haveFacts[entity] = m
		return m, nil
	}
	for _, o := range d.KGObservations {
		o.EntityID = to(o.EntityID)
		have, err := factsOf(o.EntityID)
		if err != nil {
			return out, err
		}
		if have[o.ID] {
			present(memory.SectionKGObservations)
			continue
		}
		out.KGObservations = append(out.KGObservations, o)
	}
	for _, g := range d.Edges {
		g.Source, g.Target = to(g.Source), to(g.Target)
		for _, end := range []string{g.Source, g.Target} {
			if !ents[end] {
				if ok, err := exists(second(e.store.Entity(ctx, end))); err != nil {
					return out, err
				} else if ok {
					ents[end] = true
				}
			}
		}
		if !ents[g.Source] || !ents[g.Target] {
			rep.Notes = append(rep.Notes, fmt.Sprintf("relation %s left out: an entity it relates is not in the file", g.Relation))
			continue
		}
		have, err := factsOf(g.Source)
		if err != nil {
			return out, err
		}
		if have[g.ID] {
			present(memory.SectionEdges)
			continue
		}
		out.Edges = append(out.Edges, g)
	}
	return out, nil
}

// second is the error of a (value, error) pair.
func second[T any](_ T, err error) error { return err }
