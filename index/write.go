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

// buildSegment writes the live documents of srcs as segment name: each
// repository's documents together (in the order of the repositories'
// names), in source order within it, so that a search scoped to one
// repository reads one stretch of each array; their vectors filed under
// cents (per group; nil keeps one list), by repository, then list, then
// document. It returns what the manifest records of it.
func buildSegment(ctx context.Context, stg storage, name string, srcs []*src, space memory.Space, cents [nGroups]*centroids, level int) (segRef, error) {
	for _, s := range srcs {
		s.remap = make([]uint32, s.p.n)
		for i := range s.p.n {
			s.remap[i] = noDoc
		}
	}
	// Labels: the values live documents use, sorted, and each source's
	// translation to them.
	var used [len(labelSections)]map[string]uint32
	var trans [len(labelSections)][][]uint32
	tables := func(p *part) [len(labelSections)]labelTable {
		return [...]labelTable{p.scopes, p.capsules, p.kinds, p.types, p.statuses}
	}
	for t := range used {
		used[t] = map[string]uint32{}
		trans[t] = make([][]uint32, len(srcs))
	}
	for _, s := range srcs {
		tb := tables(s.p)
		var mk [len(labelSections)][]bool
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
				mk[0][v] = true
			}
			mk[1][s.p.capsule[l]] = true
			mk[2][m.kind()] = true
			mk[3][s.p.key(l)[0]] = true
			mk[4][m.status()] = true
		}
		for t := range used {
			for id, ok := range mk[t] {
				if ok && id > 0 {
					used[t][tb[t].name(uint32(id))] = 0
				}
			}
		}
	}
	var outTabs [len(labelSections)]strtab
	for t := range used {
		var ids map[string]uint32
		outTabs[t], ids = sortedTable(used[t])
		for si, s := range srcs {
			tb := tables(s.p)
			tr := make([]uint32, tb[t].count()+1)
			for id := 1; id < len(tr); id++ {
				tr[id] = ids[tb[t].name(uint32(id))]
			}
			trans[t][si] = tr
		}
	}
	if len(outTabs[2].off) > 0x100 || len(outTabs[3].off) > 0x100 {
		return segRef{}, errPart(name, "more than 255 kinds or types")
	}

	// The order: by repository, then source, then document.
	type docRef struct {
		si int32
		l  uint32
	}
	repoOf := func(si int, l uint32) uint32 { return trans[0][si][srcs[si].p.meta[l].scope[1]] }
	perRepo := make([]int, outTabs[0].count()+2)
	n := 0
	for si, s := range srcs {
		for i := range s.p.n {
			if s.alive(uint32(i)) {
				perRepo[repoOf(si, uint32(i))+1]++
				n++
			}
		}
	}
	for r := 1; r < len(perRepo); r++ {
		perRepo[r] += perRepo[r-1]
	}
	order := make([]docRef, n)
	next := slices.Clone(perRepo)
	for si, s := range srcs {
		for i := range s.p.n {
			if l := uint32(i); s.alive(l) {
				r := repoOf(si, l)
				order[next[r]] = docRef{int32(si), l}
				s.remap[l] = uint32(next[r])
				next[r]++
			}
		}
	}
	// clusters lists each repository present (its scope label id) and
	// where its documents start, then a last entry (noDoc, n).
	var clusters []uint32
	repoIndex := make([]int32, len(perRepo)) // repository id → cluster number
	for r := 0; r+1 < len(perRepo); r++ {
		if perRepo[r+1] > perRepo[r] {
			repoIndex[r] = int32(len(clusters) / 2)
			clusters = append(clusters, uint32(r), uint32(perRepo[r]))
		}
	}
	clusters = append(clusters, noDoc, uint32(n))
	nClusters := len(clusters)/2 - 1
	each := func(fn func(si int, s *src, local uint32)) {
		for _, r := range order {
			fn(int(r.si), srcs[r.si], r.l)
		}
	}

	// Vectors: each group's rows, by repository, list and document.
	var places [nGroups][]vecPlace
	var ranges [nGroups][]uint32
	outVec := make([]uint32, n)
	for g := range nGroups {
		var ps []vecPlace
		var need []int // places whose list must be computed
		each(func(si int, s *src, local uint32) {
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
			case cents[g] == nil:
			case sg.centroids == cents[g].name && sg.ranges != nil:
				pl.list = int32(sg.listOf(row))
			default:
				need = append(need, len(ps))
			}
			ps = append(ps, pl)
		})
		if cents[g] != nil && len(need) > 0 {
			as := vector.AssignAll(cents[g].data, space.Dim, len(need), func(i int) []float32 {
				pl := ps[need[i]]
				return srcs[pl.src].p.groups[g].row(int(pl.row), space.Dim)
			})
			for i, k := range need {
				ps[k].list = as[i]
			}
		}
		if err := ctx.Err(); err != nil {
			return segRef{}, err
		}
		nl := 1
		if cents[g] != nil {
			nl = cents[g].lists
		}
		// Counting sort by (repository cluster, list), stable: documents
		// stay ascending within a list.
		key := func(pl vecPlace) int {
			o := order[pl.doc]
			return int(repoIndex[repoOf(int(o.si), o.l)])*nl + int(pl.list)
		}
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
			v := uint32(r) + 1
			if g == groupInner {
				v |= vecGroupBit
			}
			outVec[pl.doc] = v
		}
		places[g], ranges[g] = sorted, starts
	}

	info := segInfo{Format: Format, Docs: n, Counts: map[memory.VectorKind]kindCounts{}, Space: space, Analyzer: analyzer(space)}
	ref, err := stg.write(name, kindSegment, func(w *segment.Writer) error {
		// Per-document arrays.
		w.Begin("doc.ts", false)
		buf64 := make([]int64, 0, writeChunk)
		each(func(_ int, s *src, local uint32) {
			if buf64 = append(buf64, s.p.ts[local]); len(buf64) == writeChunk {
				w.WriteInt64s(buf64)
				buf64 = buf64[:0]
			}
		})
		w.WriteInt64s(buf64)
		w.End()

		w.Begin("doc.meta", false)
		metas := make([]docMeta, 0, writeChunk)
		each(func(si int, s *src, local uint32) {
			m := s.p.meta[local]
			for i := range m.scope {
				m.scope[i] = trans[0][si][m.scope[i]]
			}
			m.attr = makeAttr(m.attr&0xff, trans[2][si][m.kind()], trans[4][si][m.status()])
			if outVec[s.remap[local]] == vecNone {
				m.attr &^= attrVector
			}
			kind := memory.VectorKind(outTabs[2].name(m.kind()))
			c := info.Counts[kind]
			c.add(m.attr&attrPrivate != 0, m.attr&attrVector != 0, 1)
			info.Counts[kind] = c
			if m.attr&attrSearchable != 0 {
				info.LexDocs++
				info.LexTotal += float64(s.p.length[local])
			}
			if metas = append(metas, m); len(metas) == writeChunk {
				w.WriteUint32s(metaWords(metas))
				metas = metas[:0]
			}
		})
		w.WriteUint32s(metaWords(metas))
		w.End()

		w.Begin("doc.len", false)
		buf16 := make([]uint16, 0, writeChunk)
		each(func(_ int, s *src, local uint32) {
			if buf16 = append(buf16, s.p.length[local]); len(buf16) == writeChunk {
				w.WriteUint16s(buf16)
				buf16 = buf16[:0]
			}
		})
		w.WriteUint16s(buf16)
		w.End()

		writeU32 := func(section string, eager bool, fn func(si int, s *src, local uint32) uint32) {
			w.Begin(section, eager)
			buf := make([]uint32, 0, writeChunk)
			each(func(si int, s *src, local uint32) {
				if buf = append(buf, fn(si, s, local)); len(buf) == writeChunk {
					w.WriteUint32s(buf)
					buf = buf[:0]
				}
			})
			w.WriteUint32s(buf)
			w.End()
		}
		// Capsule places are read whole when a process opens the index
		// (they join capsules across segments): eager.
		writeU32("doc.capsule", true, func(si int, s *src, local uint32) uint32 { return trans[1][si][s.p.capsule[local]] })
		writeU32("doc.pos", true, func(_ int, s *src, local uint32) uint32 { return uint32(s.p.pos[local]) })
		writeU32("doc.vec", false, func(_ int, s *src, local uint32) uint32 { return outVec[s.remap[local]] })
		w.Begin("doc.clusters", true)
		w.WriteUint32s(clusters)
		w.End()

		// Words and keys, with their offsets after them.
		offs := make([]uint32, 1, n+1)
		w.BeginBlocks("doc.words", false, segment.SmallBlock)
		var total uint32
		each(func(_ int, s *src, local uint32) {
			ws := s.p.wordsOf(local)
			w.WriteInt32s(ws)
			total += uint32(len(ws))
			offs = append(offs, total)
		})
		w.End()
		w.BeginBlocks("doc.wordoff", false, segment.SmallBlock)
		w.WriteUint32s(offs)
		w.End()

		offs = offs[:1]
		total = 0
		w.BeginBlocks("doc.keys", false, segment.SmallBlock)
		var kb []byte
		each(func(si int, s *src, local uint32) {
			k := s.p.key(local)
			kb = append(append(kb[:0], byte(trans[3][si][k[0]])), k[1:]...)
			w.Write(kb)
			total += uint32(len(kb))
			offs = append(offs, total)
		})
		w.End()
		w.BeginBlocks("doc.keyoff", false, segment.SmallBlock)
		w.WriteUint32s(offs)
		w.End()
		w.BeginBlocks("doc.sorted", false, segment.SmallBlock)
		w.WriteUint32s(mergeKeyOrder(srcs, trans[3]))
		w.End()

		// Tags, by document.
		type tagged struct {
			doc  uint32
			tags []byte
		}
		var tg []tagged
		for _, s := range srcs {
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
		w.Begin("tag.docs", true)
		w.WriteUint32s(tagDocs)
		w.End()
		w.Begin("tag.off", true)
		w.WriteUint32s(tagOff)
		w.End()
		w.Section("tag.blob", true, tagBlob)

		for t, l := range labelSections {
			w.Begin("lab."+l+".off", true)
			w.WriteUint32s(outTabs[t].off)
			w.End()
			w.Section("lab."+l, true, outTabs[t].blob)
		}

		if err := writeLexicon(ctx, w, srcs); err != nil {
			return err
		}

		for g := range nGroups {
			w.BeginBlocks(vecSection(g, "rows"), false, segment.SmallBlock)
			for _, pl := range places[g] {
				w.WriteFloat32s(srcs[pl.src].p.groups[g].row(int(pl.row), space.Dim))
			}
			w.End()
			w.Begin(vecSection(g, "ids"), false)
			ids := make([]uint32, len(places[g]))
			for r, pl := range places[g] {
				ids[r] = pl.doc
			}
			w.WriteUint32s(ids)
			w.End()
			w.Begin(vecSection(g, "ranges"), true)
			w.WriteUint32s(ranges[g])
			w.End()
			gi := groupInfo{Rows: len(places[g]), Lists: 1}
			if cents[g] != nil {
				gi.Lists, gi.Centroids = cents[g].lists, cents[g].name
			}
			info.Groups[g] = gi
		}
		body, err := json.Marshal(info)
		if err != nil {
			return err
		}
		w.Section("info", true, body)
		return ctx.Err()
	})
	if err != nil {
		return segRef{}, err
	}
	return segRef{Name: name, Docs: n, Size: ref.Size, TOC: ref.TOC, Level: level, Vectors: [nGroups]int{len(places[0]), len(places[1])}}, nil
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
func writeLexicon(ctx context.Context, w *segment.Writer, srcs []*src) error {
	type cursor struct {
		next func() (string, bool)
		stop func()
		term string
		si   int
	}
	var cs []*cursor
	for si, s := range srcs {
		next, stop := iter.Pull(s.p.lex.terms())
		c := &cursor{next: next, stop: stop, si: si}
		if t, ok := next(); ok {
			c.term = t
			cs = append(cs, c)
		} else {
			stop()
		}
	}
	defer func() {
		for _, c := range cs {
			c.stop()
		}
	}()
	termOff, postOff := []uint32{0}, []uint32{0}
	skip := strtab{off: []uint32{0}}
	var terms, tfs []byte
	var posted uint32
	var merged []uint64
	docs := make([]uint32, 0, writeChunk)
	w.Begin("lex.docs", false)
	for count := 0; len(cs) > 0; count++ {
		if count%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		// The smallest term, and the cursors on it.
		t := cs[0].term
		for _, c := range cs[1:] {
			if c.term < t {
				t = c.term
			}
		}
		merged = merged[:0]
		for _, c := range cs {
			if c.term != t {
				continue
			}
			s := srcs[c.si]
			ds, fs := s.p.lex.postings(t)
			for i, d := range ds {
				if o := s.remap[d]; o != noDoc {
					merged = append(merged, uint64(o)<<8|uint64(fs[i]))
				}
			}
		}
		if len(merged) > 0 {
			slices.Sort(merged)
			for _, m := range merged {
				docs = append(docs, uint32(m>>8))
				tfs = append(tfs, byte(m))
				if len(docs) == writeChunk {
					w.WriteUint32s(docs)
					docs = docs[:0]
				}
			}
			posted += uint32(len(merged))
			if (len(termOff)-1)%skipEvery == 0 {
				skip.blob = append(skip.blob, t...)
				skip.off = append(skip.off, uint32(len(skip.blob)))
			}
			terms = append(terms, t...)
			termOff = append(termOff, uint32(len(terms)))
			postOff = append(postOff, posted)
		}
		// Advance the cursors on t; drop the exhausted ones.
		kept := cs[:0]
		for _, c := range cs {
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
		cs = kept
	}
	w.WriteUint32s(docs)
	w.End()
	w.Section("lex.tfs", false, tfs)
	w.BeginBlocks("lex.termoff", false, segment.SmallBlock)
	w.WriteUint32s(termOff)
	w.End()
	w.BeginBlocks("lex.terms", false, segment.SmallBlock)
	w.Write(terms)
	w.End()
	w.BeginBlocks("lex.postoff", false, segment.SmallBlock)
	w.WriteUint32s(postOff)
	w.End()
	w.Begin("lex.skip.off", true)
	w.WriteUint32s(skip.off)
	w.End()
	w.Section("lex.skip", true, skip.blob)
	return nil
}

// skipEvery is the dictionary's block: a lookup reads the sample, then at
// most this many terms.
const skipEvery = 64
