package index

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/json"
	"iter"
	"slices"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
	"github.com/cairnhq/cairn/vector"
)

// src is a part whose live documents a new segment takes, with its
// deletions as they were when the work began (so the part may change
// meanwhile).
type src struct {
	p     *part
	dead  []uint64
	remap []uint32 // local → the new segment's document (noDoc: dropped)
}

func newSrc(p *part) *src { return &src{p: p, dead: slices.Clone(p.dead)} }

func (s *src) alive(local uint32) bool {
	return int(local>>6) >= len(s.dead) || s.dead[local>>6]&(1<<(local&63)) == 0
}

// writeChunk is the documents a section is written by at a time.
const writeChunk = 1 << 14

// vecPlace is one vector of the new segment: where it comes from.
type vecPlace struct {
	src  uint16
	row  uint32
	doc  uint32
	list int32
}

// docRef is a document of a source: the source's number and its local
// document.
type docRef struct {
	si int32
	l  uint32
}

// segLayout is what a new segment holds and where: its label tables, the
// order of its documents, the places of its vectors. buildSegment plans
// it, then writes it section by section.
type segLayout struct {
	name  string
	srcs  []*src
	space memory.Space
	cents [nGroups]*centroids

	// tabs are the new segment's label tables; trans[t][si] translates
	// source si's ids of table t to them.
	tabs  [nLabelTables]strtab
	trans [nLabelTables][][]uint32

	// order lists the documents: by repository, then source, then
	// document (each source's remap is its inverse).
	order []docRef
	// clusters lists each repository present (its scope label id) and
	// where its documents start, then a last entry (noDoc, n).
	clusters []uint32
	// repoCluster maps a repository's label id to its cluster's number.
	repoCluster []int32

	// places are each group's vectors in row order (by repository
	// cluster, list and document); ranges each (cluster, list)'s first
	// row, then the row count; docVec each document's doc.vec entry.
	places [nGroups][]vecPlace
	ranges [nGroups][]uint32
	docVec []uint32

	// info is the "info" section, its counts summed as documents are
	// written.
	info segInfo
}

// buildSegment writes the live documents of srcs as segment name: each
// repository's documents together (in the order of the repositories'
// names), in source order within it, so that a search scoped to one
// repository reads one stretch of each array; their vectors filed under
// cents (per group; nil keeps one list), by repository, then list, then
// document. It returns what the manifest records of it.
func buildSegment(ctx context.Context, stg storage, name string, srcs []*src, space memory.Space, cents [nGroups]*centroids, level int) (segRef, error) {
	l, err := planSegment(ctx, name, srcs, space, cents)
	if err != nil {
		return segRef{}, err
	}
	ref, err := stg.write(name, kindSegment, func(w *segment.Writer) error { return l.write(ctx, newSectionWriter(w)) })
	if err != nil {
		return segRef{}, err
	}
	seg := segRef{Name: name, Docs: len(l.order), Size: ref.Size, TOC: ref.TOC, Level: level}
	for g := range nGroups {
		seg.Vectors[g] = len(l.places[g])
	}
	return seg, nil
}

// planSegment lays out the segment buildSegment writes: its labels, the
// order of its documents, the places of its vectors.
func planSegment(ctx context.Context, name string, srcs []*src, space memory.Space, cents [nGroups]*centroids) (*segLayout, error) {
	for _, s := range srcs {
		s.remap = make([]uint32, s.p.n)
		for i := range s.p.n {
			s.remap[i] = noDoc
		}
	}
	l := &segLayout{name: name, srcs: srcs, space: space, cents: cents}
	if err := l.relabel(); err != nil {
		return nil, err
	}
	l.orderDocs()
	if err := l.fileVectors(ctx); err != nil {
		return nil, err
	}
	l.info = segInfo{Format: Format, Docs: len(l.order), Counts: map[memory.VectorKind]kindCounts{}, Space: space, Analyzer: analyzer(space)}
	return l, nil
}

// relabel makes the new segment's label tables of the values its live
// documents use, sorted, and each source's translation to them.
func (l *segLayout) relabel() error {
	var used [nLabelTables]map[string]uint32
	for t := range used {
		used[t] = map[string]uint32{}
		l.trans[t] = make([][]uint32, len(l.srcs))
	}
	for _, s := range l.srcs {
		s.usedLabels(used)
	}
	for t := range used {
		var ids map[string]uint32
		l.tabs[t], ids = sortedTable(used[t])
		for si, s := range l.srcs {
			tb := s.p.labelTables()[t]
			tr := make([]uint32, tb.count()+1)
			for id := 1; id < len(tr); id++ {
				tr[id] = ids[tb.name(uint32(id))]
			}
			l.trans[t][si] = tr
		}
	}
	if len(l.tabs[labKind].off) > 0x100 || len(l.tabs[labType].off) > 0x100 {
		return errPart(l.name, "more than 255 kinds or types")
	}
	return nil
}

// usedLabels adds to used the label values s's live documents use.
func (s *src) usedLabels(used [nLabelTables]map[string]uint32) {
	tb := s.p.labelTables()
	var mk [nLabelTables][]bool
	for t := range mk {
		mk[t] = make([]bool, tb[t].count()+1)
	}
	for i := range s.p.n {
		l := uint32(i)
		if !s.alive(l) {
			continue
		}
		s.p.ensureDoc(l)
		m := &s.p.meta[l]
		for _, v := range m.scope {
			mk[labScope][v] = true
		}
		mk[labCapsule][s.p.capsule[l]] = true
		mk[labKind][m.kind()] = true
		mk[labType][s.p.key(l)[0]] = true
		mk[labStatus][m.status()] = true
	}
	for t := range used {
		for id, ok := range mk[t] {
			if ok && id > 0 {
				used[t][tb[t].name(uint32(id))] = 0
			}
		}
	}
}

// repoOf is the new segment's label id of the repository of source si's
// document local.
func (l *segLayout) repoOf(si int, local uint32) uint32 {
	return l.trans[labScope][si][l.srcs[si].p.meta[local].scope[scopeRepo]]
}

// orderDocs numbers the live documents: by repository, then source,
// then document; and lists the repositories' clusters.
func (l *segLayout) orderDocs() {
	perRepo := make([]int, l.tabs[labScope].count()+2)
	n := 0
	for si, s := range l.srcs {
		for i := range s.p.n {
			if s.alive(uint32(i)) {
				perRepo[l.repoOf(si, uint32(i))+1]++
				n++
			}
		}
	}
	for r := 1; r < len(perRepo); r++ {
		perRepo[r] += perRepo[r-1]
	}
	l.order = make([]docRef, n)
	next := slices.Clone(perRepo)
	for si, s := range l.srcs {
		for i := range s.p.n {
			if local := uint32(i); s.alive(local) {
				r := l.repoOf(si, local)
				l.order[next[r]] = docRef{int32(si), local}
				s.remap[local] = uint32(next[r])
				next[r]++
			}
		}
	}
	l.repoCluster = make([]int32, len(perRepo))
	for r := 0; r+1 < len(perRepo); r++ {
		if perRepo[r+1] > perRepo[r] {
			l.repoCluster[r] = int32(len(l.clusters) / 2)
			l.clusters = append(l.clusters, uint32(r), uint32(perRepo[r]))
		}
	}
	l.clusters = append(l.clusters, noDoc, uint32(n))
}

// each calls fn for every document of the new segment, in order.
func (l *segLayout) each(fn func(si int, s *src, local uint32)) {
	for _, r := range l.order {
		fn(int(r.si), l.srcs[r.si], r.l)
	}
}

// fileVectors places each group's vectors: by repository cluster, list
// and document.
func (l *segLayout) fileVectors(ctx context.Context) error {
	l.docVec = make([]uint32, len(l.order))
	for g := range nGroups {
		ps, err := l.listGroup(ctx, g)
		if err != nil {
			return err
		}
		l.places[g], l.ranges[g] = l.sortGroup(g, ps)
	}
	return nil
}

// listGroup lists group g's vectors of the new segment's documents, in
// document order, each with its list under the group's centroids: the
// list its source filed it under when that was under the same centroids,
// else the nearest centroid's.
func (l *segLayout) listGroup(ctx context.Context, g int) ([]vecPlace, error) {
	var ps []vecPlace
	var need []int // places whose list must be computed
	cents := l.cents[g]
	l.each(func(si int, s *src, local uint32) {
		v := s.p.vec[local]
		if v == vecNone {
			return
		}
		vg, row := groupOfVec(v)
		if vg != g {
			return
		}
		pl := vecPlace{src: uint16(si), row: uint32(row), doc: s.remap[local]}
		sg := &s.p.groups[g]
		switch {
		case cents == nil:
		case sg.centroids == cents.name && sg.ranges != nil:
			pl.list = int32(sg.listOf(row))
		default:
			need = append(need, len(ps))
		}
		ps = append(ps, pl)
	})
	if cents != nil && len(need) > 0 {
		dim := l.space.Dim
		as := vector.AssignAll(cents.data, dim, len(need), func(i int) []float32 {
			pl := ps[need[i]]
			return l.srcs[pl.src].p.groups[g].row(int(pl.row), dim)
		})
		for i, k := range need {
			ps[k].list = as[i]
		}
	}
	return ps, ctx.Err()
}

// sortGroup orders group g's places by (repository cluster, list),
// stably (documents stay ascending within a list), by a counting sort;
// it gives each document its row and returns the rows' ranges.
func (l *segLayout) sortGroup(g int, ps []vecPlace) ([]vecPlace, []uint32) {
	nl := 1
	if l.cents[g] != nil {
		nl = l.cents[g].lists
	}
	key := func(pl vecPlace) int {
		o := l.order[pl.doc]
		return int(l.repoCluster[l.repoOf(int(o.si), o.l)])*nl + int(pl.list)
	}
	nClusters := len(l.clusters)/2 - 1
	starts := make([]uint32, nClusters*nl+1)
	for _, pl := range ps {
		starts[key(pl)+1]++
	}
	for k := 1; k < len(starts); k++ {
		starts[k] += starts[k-1]
	}
	sorted := make([]vecPlace, len(ps))
	fill := slices.Clone(starts)
	for _, pl := range ps {
		k := key(pl)
		sorted[fill[k]] = pl
		fill[k]++
	}
	for r, pl := range sorted {
		v := uint32(r) + 1 | uint32(g)<<vecGroupShift
		l.docVec[pl.doc] = v
	}
	return sorted, starts
}

// write writes the segment's sections in the table's order.
func (l *segLayout) write(ctx context.Context, sw *sectionWriter) error {
	l.writeDocs(sw)
	l.writeWordsAndKeys(sw)
	l.writeTags(sw)
	l.writeLabels(sw)
	if err := writeLexicon(ctx, sw, l.srcs); err != nil {
		return err
	}
	l.writeVectors(sw)
	body, err := json.Marshal(l.info)
	if err != nil {
		return err
	}
	sw.whole(secInfo, body)
	if err := sw.finish(); err != nil {
		return err
	}
	return ctx.Err()
}

// writePerDoc writes section id of one value per document, in the new
// order, writeChunk values at a time.
func writePerDoc[T any](l *segLayout, sw *sectionWriter, id secID, write func([]T), value func(si int, s *src, local uint32) T) {
	sw.begin(id)
	buf := make([]T, 0, writeChunk)
	l.each(func(si int, s *src, local uint32) {
		if buf = append(buf, value(si, s, local)); len(buf) == writeChunk {
			write(buf)
			buf = buf[:0]
		}
	})
	write(buf)
	sw.end()
}

// writeDocs writes the per-document arrays (and counts the documents
// into info).
func (l *segLayout) writeDocs(sw *sectionWriter) {
	trans := &l.trans
	writePerDoc(l, sw, secDocTS, sw.int64s, func(_ int, s *src, local uint32) int64 { return s.p.ts[local] })
	writePerDoc(l, sw, secDocMeta, func(ms []docMeta) { sw.uint32s(metaWords(ms)) }, l.metaOf)
	writePerDoc(l, sw, secDocLen, sw.uint16s, func(_ int, s *src, local uint32) uint16 { return s.p.length[local] })
	writePerDoc(l, sw, secDocCapsule, sw.uint32s, func(si int, s *src, local uint32) uint32 { return trans[labCapsule][si][s.p.capsule[local]] })
	writePerDoc(l, sw, secDocPos, sw.int32s, func(_ int, s *src, local uint32) int32 { return s.p.pos[local] })
	writePerDoc(l, sw, secDocVec, sw.uint32s, func(_ int, s *src, local uint32) uint32 { return l.docVec[s.remap[local]] })
	sw.wholeUint32s(secDocClusters, l.clusters)
}

// metaOf is a document's docMeta in the new segment's label ids; it
// counts the document into info.
func (l *segLayout) metaOf(si int, s *src, local uint32) docMeta {
	m := s.p.meta[local]
	for i := range m.scope {
		m.scope[i] = l.trans[labScope][si][m.scope[i]]
	}
	m.attr = makeAttr(m.attr&0xff, l.trans[labKind][si][m.kind()], l.trans[labStatus][si][m.status()])
	if l.docVec[s.remap[local]] == vecNone {
		m.attr &^= attrVector
	}
	kind := memory.VectorKind(l.tabs[labKind].name(m.kind()))
	c := l.info.Counts[kind]
	c.add(m.attr&attrPrivate != 0, m.attr&attrVector != 0, 1)
	l.info.Counts[kind] = c
	if m.attr&attrSearchable != 0 {
		l.info.LexDocs++
		l.info.LexTotal += float64(s.p.length[local])
	}
	if m.attr&attrCode != 0 {
		l.info.CodeDocs++
		l.info.CodeTotal += float64(s.p.length[local])
	}
	return m
}

// writeWordsAndKeys writes the documents' words and keys, each with its
// offsets after it, then the documents in key order.
func (l *segLayout) writeWordsAndKeys(sw *sectionWriter) {
	offs := make([]uint32, 1, len(l.order)+1)
	sw.begin(secDocWords)
	var total uint32
	l.each(func(_ int, s *src, local uint32) {
		ws := s.p.wordsOf(local)
		sw.int32s(ws)
		total += uint32(len(ws))
		offs = append(offs, total)
	})
	sw.end()
	sw.wholeUint32s(secDocWordOff, offs)

	offs, total = offs[:1], 0
	sw.begin(secDocKeys)
	var kb []byte
	types := l.trans[labType]
	l.each(func(si int, s *src, local uint32) {
		k := s.p.key(local)
		kb = append(append(kb[:0], byte(types[si][k[0]])), k[1:]...)
		sw.bytes(kb)
		total += uint32(len(kb))
		offs = append(offs, total)
	})
	sw.end()
	sw.wholeUint32s(secDocKeyOff, offs)
	sw.wholeUint32s(secDocSorted, mergeKeyOrder(l.srcs, types))
}

// writeTags writes the tagged documents, ascending, and their tags.
func (l *segLayout) writeTags(sw *sectionWriter) {
	type tagged struct {
		doc  uint32
		tags []byte
	}
	var tg []tagged
	for _, s := range l.srcs {
		p := s.p
		for i, d := range p.tagDocs {
			if s.remap[d] != noDoc {
				tg = append(tg, tagged{s.remap[d], p.tagBlob[p.tagOff[i]:p.tagOff[i+1]]})
			}
		}
	}
	slices.SortFunc(tg, func(a, b tagged) int { return cmp.Compare(a.doc, b.doc) })
	tagDocs := make([]uint32, len(tg))
	tagOff := []uint32{0}
	var tagBlob []byte
	for i, t := range tg {
		tagDocs[i] = t.doc
		tagBlob = append(tagBlob, t.tags...)
		tagOff = append(tagOff, uint32(len(tagBlob)))
	}
	sw.wholeUint32s(secTagDocs, tagDocs)
	sw.wholeUint32s(secTagOff, tagOff)
	sw.whole(secTagBlob, tagBlob)
}

// writeLabels writes the label tables.
func (l *segLayout) writeLabels(sw *sectionWriter) {
	for t := range nLabelTables {
		sw.wholeUint32s(secLabelOff(t), l.tabs[t].off)
		sw.whole(secLabel(t), l.tabs[t].blob)
	}
}

// writeVectors writes each group's rows, their documents and ranges.
func (l *segLayout) writeVectors(sw *sectionWriter) {
	for g := range nGroups {
		sw.begin(secVecRows(g))
		for _, pl := range l.places[g] {
			sw.float32s(l.srcs[pl.src].p.groups[g].row(int(pl.row), l.space.Dim))
		}
		sw.end()
		ids := make([]uint32, len(l.places[g]))
		for r, pl := range l.places[g] {
			ids[r] = pl.doc
		}
		sw.wholeUint32s(secVecIDs(g), ids)
		sw.wholeUint32s(secVecRanges(g), l.ranges[g])
		gi := groupInfo{Rows: len(l.places[g]), Lists: 1}
		if l.cents[g] != nil {
			gi.Lists, gi.Centroids = l.cents[g].lists, l.cents[g].name
		}
		l.info.Groups[g] = gi
	}
}

// mergeKeyOrder lists the new segment's documents by key: each source's
// own order (a segment's is stored; the delta's is sorted here), merged.
// Keys compare with the new segment's type ids, which keep the sorted
// order of the type names.
func mergeKeyOrder(srcs []*src, typeTrans [][]uint32) []uint32 {
	outKey := func(si int, local uint32, buf []byte) []byte {
		k := srcs[si].p.key(local)
		return append(append(buf[:0], byte(typeTrans[si][k[0]])), k[1:]...)
	}
	orders := make([][]uint32, len(srcs))
	for si, s := range srcs {
		var ord []uint32
		if s.p.delta == nil {
			for i, d := range s.p.sortedKeys {
				check(s.p.secSorted, i*4, 4)
				if int(d) >= s.p.n {
					panic(corruption{errPart(s.p.name, "the key order names document %d of %d", d, s.p.n)})
				}
				if s.remap[d] != noDoc {
					ord = append(ord, d)
				}
			}
		} else {
			for i := range s.p.n {
				if s.remap[i] != noDoc {
					ord = append(ord, uint32(i))
				}
			}
			var a, b []byte
			slices.SortFunc(ord, func(x, y uint32) int {
				a, b = outKey(si, x, a), outKey(si, y, b)
				return bytes.Compare(a, b)
			})
		}
		orders[si] = ord
	}
	h := &keyHeap{}
	for si, ord := range orders {
		if len(ord) > 0 {
			h.items = append(h.items, keyItem{si: si, key: outKey(si, ord[0], nil)})
		}
	}
	heap.Init(h)
	pos := make([]int, len(srcs))
	var out []uint32
	for h.Len() > 0 {
		it := &h.items[0]
		si := it.si
		out = append(out, srcs[si].remap[orders[si][pos[si]]])
		pos[si]++
		if pos[si] < len(orders[si]) {
			it.key = outKey(si, orders[si][pos[si]], it.key)
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return out
}

type keyItem struct {
	si  int
	key []byte
}

type keyHeap struct{ items []keyItem }

func (h *keyHeap) Len() int { return len(h.items) }
func (h *keyHeap) Less(i, j int) bool {
	if c := bytes.Compare(h.items[i].key, h.items[j].key); c != 0 {
		return c < 0
	}
	return h.items[i].si < h.items[j].si
}
func (h *keyHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *keyHeap) Push(x any)    { h.items = append(h.items, x.(keyItem)) }
func (h *keyHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}

// writeLexicon merges the sources' dictionaries: each term's postings,
// renumbered and sorted, dead documents dropped; terms left with none are
// dropped too. Every skipEvery-th term also goes to a small sorted sample
// (lex.skip) that finds a term's block of the dictionary without reading
// the rest.
func writeLexicon(ctx context.Context, sw *sectionWriter, srcs []*src) error {
	tm := newTermMerge(srcs)
	defer tm.close()
	lw := newLexWriter(sw)
	var merged []uint64
	for count := 0; !tm.done(); count++ {
		if count%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		t := tm.smallest()
		merged = tm.postings(t, merged[:0])
		if len(merged) > 0 {
			lw.add(t, merged)
		}
		tm.advance(t)
	}
	lw.finish()
	return nil
}

// termCursor walks one source's dictionary.
type termCursor struct {
	next func() (string, bool)
	stop func()
	term string
	si   int
}

// termMerge walks the sources' dictionaries together, in term order.
type termMerge struct {
	srcs []*src
	cs   []*termCursor // the cursors not exhausted
}

func newTermMerge(srcs []*src) *termMerge {
	tm := &termMerge{srcs: srcs}
	for si, s := range srcs {
		next, stop := iter.Pull(s.p.lex.terms())
		c := &termCursor{next: next, stop: stop, si: si}
		if t, ok := next(); ok {
			c.term = t
			tm.cs = append(tm.cs, c)
		} else {
			stop()
		}
	}
	return tm
}

// done reports whether every dictionary is exhausted.
func (tm *termMerge) done() bool { return len(tm.cs) == 0 }

// smallest is the smallest term of the cursors.
func (tm *termMerge) smallest() string {
	t := tm.cs[0].term
	for _, c := range tm.cs[1:] {
		if c.term < t {
			t = c.term
		}
	}
	return t
}

// postings appends to merged term t's live postings of every source, in
// the new segment's documents (document << 8 | frequency), sorted.
func (tm *termMerge) postings(t string, merged []uint64) []uint64 {
	for _, c := range tm.cs {
		if c.term != t {
			continue
		}
		s := tm.srcs[c.si]
		ds, fs := s.p.lex.postings(t)
		for i, d := range ds {
			if o := s.remap[d]; o != noDoc {
				merged = append(merged, uint64(o)<<8|uint64(fs[i]))
			}
		}
	}
	slices.Sort(merged)
	return merged
}

// advance moves the cursors on t to their next terms, dropping the
// exhausted ones.
func (tm *termMerge) advance(t string) {
	kept := tm.cs[:0]
	for _, c := range tm.cs {
		if c.term == t {
			nt, ok := c.next()
			if !ok {
				c.stop()
				continue
			}
			c.term = nt
		}
		kept = append(kept, c)
	}
	tm.cs = kept
}

func (tm *termMerge) close() {
	for _, c := range tm.cs {
		c.stop()
	}
}

// lexWriter writes a dictionary, term by term: the postings' documents
// as they come (lex.docs), the rest at the end.
type lexWriter struct {
	sw               *sectionWriter
	termOff, postOff []uint32
	skip             strtab
	terms, tfs       []byte
	posted           uint32
	docs             []uint32 // the documents not yet written
}

func newLexWriter(sw *sectionWriter) *lexWriter {
	sw.begin(secLexDocs)
	return &lexWriter{sw: sw, termOff: []uint32{0}, postOff: []uint32{0}, skip: strtab{off: []uint32{0}},
		docs: make([]uint32, 0, writeChunk)}
}

// add writes term t's postings (document << 8 | frequency, sorted).
func (lw *lexWriter) add(t string, postings []uint64) {
	for _, m := range postings {
		lw.docs = append(lw.docs, uint32(m>>8))
		lw.tfs = append(lw.tfs, byte(m))
		if len(lw.docs) == writeChunk {
			lw.sw.uint32s(lw.docs)
			lw.docs = lw.docs[:0]
		}
	}
	lw.posted += uint32(len(postings))
	if (len(lw.termOff)-1)%skipEvery == 0 {
		lw.skip.blob = append(lw.skip.blob, t...)
		lw.skip.off = append(lw.skip.off, uint32(len(lw.skip.blob)))
	}
	lw.terms = append(lw.terms, t...)
	lw.termOff = append(lw.termOff, uint32(len(lw.terms)))
	lw.postOff = append(lw.postOff, lw.posted)
}

// finish writes the rest of the dictionary's sections.
func (lw *lexWriter) finish() {
	sw := lw.sw
	sw.uint32s(lw.docs)
	sw.end()
	sw.whole(secLexTfs, lw.tfs)
	sw.wholeUint32s(secLexTermOff, lw.termOff)
	sw.whole(secLexTerms, lw.terms)
	sw.wholeUint32s(secLexPostOff, lw.postOff)
	sw.wholeUint32s(secLexSkipOff, lw.skip.off)
	sw.whole(secLexSkip, lw.skip.blob)
}

// skipEvery is the dictionary's block: a lookup reads the sample, then at
// most this many terms.
const skipEvery = 64
