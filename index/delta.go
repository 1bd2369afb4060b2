package index

import (
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
)

// deltaData is what only the delta has: the maps that let it grow.
type deltaData struct {
	byKey                                    map[string]uint32 // live documents by key
	dict                                     map[string]*plist
	scopes, capsules, kinds, types, statuses labels
}

// plist is a term's postings in the delta.
type plist struct {
	docs []uint32
	tfs  []uint8
}

type deltaLexicon struct{ d *deltaData }

func (l deltaLexicon) postings(term string) ([]uint32, []uint8) {
	if p := l.d.dict[term]; p != nil {
		return p.docs, p.tfs
	}
	return nil, nil
}

func (l deltaLexicon) terms() func(yield func(string) bool) {
	ts := make([]string, 0, len(l.d.dict))
	for t := range l.d.dict {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return slices.Values(ts)
}

// deltaChunkRows is the rows per chunk of the delta's vectors: growing
// never copies the vectors already held.
const deltaChunkRows = 4096

// newDelta returns an empty delta starting at global document base.
func newDelta(base uint32) *part {
	d := &deltaData{byKey: map[string]uint32{}, dict: map[string]*plist{}}
	p := &part{base: base, wordOff: []uint32{0}, keyOff: []uint32{0}, tagOff: []uint32{0},
		delta: d, lex: deltaLexicon{d}, counts: map[memory.VectorKind]kindCounts{}}
	p.scopes, p.capsules, p.kinds, p.types, p.statuses = &d.scopes, &d.capsules, &d.kinds, &d.types, &d.statuses
	for g := range p.groups {
		p.groups[g].chunkRows = deltaChunkRows
	}
	return p
}

// analysis is what adding a searchable record derives from its text.
type analysis struct {
	terms []string
	words []int32
	// length is a code entity's length for BM25: its code's terms, not
	// its fields' (set for code entities only).
	length int
}

// searchable reports whether the tiered retrieval ranks records of kind.
func searchable(kind memory.VectorKind) bool {
	return kind == memory.VectorObservation || kind == memory.VectorSummary
}

// recordKind is rec's kind: its Kind, or for observations and summaries
// its type.
func recordKind(rec *memory.IndexRecord) memory.VectorKind {
	if rec.Kind == "" {
		return memory.VectorKind(rec.Type)
	}
	return rec.Kind
}

// isCode reports whether records of kind are code entities.
func isCode(kind memory.VectorKind) bool { return kind == memory.VectorCodeEntity }

func groupOf(kind memory.VectorKind) int {
	switch {
	case searchable(kind):
		return groupSearchable
	case isCode(kind):
		return groupCode
	}
	return groupInner
}

func isStopword(w string) bool { return lexical.Stopwords[w] }

// analyse derives rec's analysis; records tiered retrieval does not rank
// have none.
func analyse(wv embed.WordVectors, rec *memory.IndexRecord) analysis {
	if !rec.Gone && isCode(recordKind(rec)) {
		terms, length := codeDocTerms(rec.Content)
		return analysis{terms: terms, length: length}
	}
	if rec.Gone || !searchable(recordKind(rec)) {
		return analysis{}
	}
	a := analysis{terms: lexical.Terms(rec.Content)}
	if wv != nil {
		a.words = wv.WordIDs(rec.Content, isStopword)
	}
	return a
}

// analyseAll analyses recs' texts in parallel over the cores (tokenising
// and stemming are most of a load's work).
func analyseAll(wv embed.WordVectors, recs []memory.IndexRecord) []analysis {
	as := make([]analysis, len(recs))
	workers := runtime.GOMAXPROCS(0)
	if len(recs) < 64 {
		workers = 1
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(recs); i += workers {
				as[i] = analyse(wv, &recs[i])
			}
		}()
	}
	wg.Wait()
	return as
}

// maxPosition bounds the capsule positions kept for neighbour lookups, so
// that one record claiming a huge position cannot make a huge slice.
const maxPosition = 1 << 20

// noDoc marks an empty capsule position.
const noDoc = ^uint32(0)

// putAll applies recs in order: each replaces (or, when Gone, deletes)
// the live document of its key, and a record that is not gone becomes a
// new document in the delta.
func (st *state) putAll(recs []memory.IndexRecord, wv embed.WordVectors) {
	as := analyseAll(wv, recs)
	for i := range recs {
		st.put(&recs[i], as[i])
	}
}

// put applies one record.
func (st *state) put(rec *memory.IndexRecord, a analysis) {
	if doc, ok := st.find(string(rec.Type), rec.ID); ok {
		st.kill(doc, rec.Gone)
	}
	if rec.Gone {
		st.expungeKey(string(rec.Type), rec.ID)
		return
	}
	p := st.delta
	d := p.delta
	local := uint32(p.n)
	kind := recordKind(rec)
	typ, m := st.labelsOf(rec, kind)
	var flags uint32
	if rec.Private {
		flags |= attrPrivate
	}
	length := 0
	if searchable(kind) {
		flags |= attrSearchable
		if strings.Contains(rec.Content, "?") {
			flags |= attrAsks
		}
		length = len(a.terms)
		d.post(local, a.terms)
		p.lexDocs++
		p.lexTotal += float64(min(length, 0xffff))
		st.lexDocs++
		st.lexTotal += float64(min(length, 0xffff))
	}
	if isCode(kind) {
		flags |= attrCode
		length = a.length
		d.post(local, a.terms)
		p.codeDocs++
		p.codeTotal += float64(min(length, 0xffff))
		st.codeDocs++
		st.codeTotal += float64(min(length, 0xffff))
	}
	pos := int32(-1)
	if capID := m.capsule; capID != 0 {
		pos = int32(rec.Position)
		st.setSlot(p.capG[capID], rec.Position, p.base+local)
	}
	vec := uint32(vecNone)
	if rec.Vector != nil && st.dim > 0 && len(rec.Vector) == st.dim {
		if vec = p.addVector(groupOf(kind), rec.Vector, local); vec != vecNone {
			flags |= attrVector
		}
	}
	m.meta.attr |= flags
	p.appendDoc(rec, m, typ, length, pos, vec, a.words)
	d.byKey[string(p.keys[p.keyOff[local]:])] = local
	c := p.counts[kind]
	c.add(rec.Private, vec != vecNone, 1)
	p.counts[kind] = c
	sc := st.counts[kind]
	sc.add(rec.Private, vec != vecNone, 1)
	st.counts[kind] = sc
}

// docLabels is a new document's labels in the delta: its docMeta (scope,
// kind and status; flags unset) and its capsule.
type docLabels struct {
	meta    docMeta
	capsule uint32
}

// labelsOf interns rec's labels in the delta (giving them global ids)
// and returns its type's label id and its labels.
func (st *state) labelsOf(rec *memory.IndexRecord, kind memory.VectorKind) (uint32, docLabels) {
	d := st.delta.delta
	typ, kid := d.types.id(string(rec.Type)), d.kinds.id(string(kind))
	if typ > 0xff || kid > 0xff {
		// Kinds and types take a handful of values fixed by the code; a
		// 256th would be a bug, and panics rather than mixing records up.
		panic("index: more than 255 record kinds or types")
	}
	var l docLabels
	if rec.CapsuleID != "" && rec.Position >= 0 && rec.Position < maxPosition {
		l.capsule = d.capsules.id(rec.CapsuleID)
	}
	status := d.statuses.id(rec.Status)
	st.translate(st.delta) // the labels interned above get their global ids
	for i, k := range memory.ScopeKeys {
		l.meta.scope[i] = d.scopes.id(rec.Scope.Get(k))
	}
	l.meta.attr = makeAttr(0, kid, status)
	return typ, l
}

// post adds document local's terms to the delta's postings.
func (d *deltaData) post(local uint32, terms []string) {
	counts := map[string]uint8{}
	for _, t := range terms {
		if counts[t] < 255 {
			counts[t]++
		}
	}
	for t, n := range counts {
		pl := d.dict[t]
		if pl == nil {
			pl = &plist{}
			// A term can be a slice of the record's text (a word kept
			// as it is): copied, so the dictionary holds the term, not
			// the whole text.
			d.dict[strings.Clone(t)] = pl
		}
		pl.docs, pl.tfs = append(pl.docs, local), append(pl.tfs, n)
	}
}

// addVector appends document local's vector to the delta's group g and
// returns its doc.vec entry (vecNone when the group is full).
func (p *part) addVector(g int, v []float32, local uint32) uint32 {
	vg := &p.groups[g]
	if vg.rows >= maxGroupRows {
		return vecNone
	}
	if vg.rows%vg.chunkRows == 0 {
		vg.chunks = append(vg.chunks, make([]float32, 0, vg.chunkRows*len(v)))
	}
	last := len(vg.chunks) - 1
	vg.chunks[last] = append(vg.chunks[last], v...)
	vg.ids = append(vg.ids, local)
	vec := uint32(vg.rows) + 1 | uint32(g)<<vecGroupShift
	vg.rows++
	return vec
}

// appendDoc appends a new document to the delta's arrays.
func (p *part) appendDoc(rec *memory.IndexRecord, l docLabels, typ uint32, length int, pos int32, vec uint32, words []int32) {
	local := uint32(p.n)
	p.ts = append(p.ts, rec.TS)
	p.meta = append(p.meta, l.meta)
	p.length = append(p.length, uint16(min(length, 0xffff)))
	p.capsule = append(p.capsule, l.capsule)
	p.pos = append(p.pos, pos)
	p.words = append(p.words, words...)
	p.wordOff = append(p.wordOff, uint32(len(p.words)))
	p.keys = append(append(p.keys, byte(typ)), rec.ID...)
	p.keyOff = append(p.keyOff, uint32(len(p.keys)))
	p.vec = append(p.vec, vec)
	if len(rec.Tags) > 0 {
		p.tagDocs = append(p.tagDocs, local)
		p.tagBlob = appendTags(p.tagBlob, rec.Tags)
		p.tagOff = append(p.tagOff, uint32(len(p.tagBlob)))
	}
	p.n++
}

// find returns the live document of (typ, id), looking in the delta, then
// in the segments from the newest.
func (st *state) find(typ, id string) (uint32, bool) {
	var buf [64]byte
	for i := len(st.parts) - 1; i >= 0; i-- {
		p := st.parts[i]
		k, ok := p.localKey(buf[:0], typ, id)
		if !ok {
			continue
		}
		if local, ok := p.find(k); ok {
			return p.base + local, true
		}
	}
	return 0, false
}

// kill deletes doc: it leaves the counts, the statistics and its capsule
// slot. A record gone from the store (forgotten, deleted) that a segment
// holds makes that segment due for an expunge, which rewrites it without
// the record's text.
func (st *state) kill(doc uint32, gone bool) {
	p := st.partOf(doc)
	local := doc - p.base
	if !p.alive(local) {
		return
	}
	p.kill(local)
	m := &p.meta[local]
	kind := memory.VectorKind(st.kinds.name(uint32(p.kindG[m.kind()])))
	private, vec := m.attr&attrPrivate != 0, m.attr&attrVector != 0
	c := st.counts[kind]
	c.add(private, vec, -1)
	st.counts[kind] = c
	pc := p.counts[kind]
	pc.add(private, vec, -1)
	p.counts[kind] = pc
	if m.attr&attrSearchable != 0 {
		st.lexDocs--
		st.lexTotal -= float64(p.length[local])
		p.lexDocs--
		p.lexTotal -= float64(p.length[local])
	}
	if m.attr&attrCode != 0 {
		st.codeDocs--
		st.codeTotal -= float64(p.length[local])
		p.codeDocs--
		p.codeTotal -= float64(p.length[local])
	}
	if c := p.capsule[local]; c != 0 {
		if g, pos := p.capG[c], p.pos[local]; int(pos) < len(st.slots[g]) && st.slots[g][pos] == doc {
			st.slots[g][pos] = noDoc
		}
	}
	if p.delta != nil {
		delete(p.delta.byKey, string(p.key(local)))
		return
	}
	st.killedSince++
	if gone {
		st.expunge[p.name] = true
	}
}

// expungeKey makes every segment that still holds a document of (typ,
// id), live or deleted, due for an expunge: a record gone from the store
// leaves no earlier version of itself in a file either (an edit deletes
// the old version's document, but its words and vector stay in the
// segment until a merge drops them).
func (st *state) expungeKey(typ, id string) {
	var buf [64]byte
	for _, p := range st.parts {
		if p.delta != nil {
			continue
		}
		if k, ok := p.localKey(buf[:0], typ, id); ok && p.holds(k) {
			st.expunge[p.name] = true
		}
	}
}

// setSlot puts doc at position pos of global capsule g.
func (st *state) setSlot(g uint32, pos int, doc uint32) {
	for int(g) >= len(st.slots) {
		st.slots = append(st.slots, nil)
	}
	s := st.slots[g]
	for len(s) <= pos {
		s = append(s, noDoc)
	}
	s[pos] = doc
	st.slots[g] = s
}
