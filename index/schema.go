package index

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
)

// Format is the index's on-disk format: what a segment's sections hold
// and what the manifest says. A change to either, or to how texts are
// analysed (lexical.Version), bumps it; an index of another format is
// rebuilt (older) or left alone (newer), never misread.
const Format = 2

// File kinds of the segment container.
const (
	kindSegment   = "CSEG"
	kindManifest  = "CMAN"
	kindCentroids = "CCEN"
)

// analyzer names how texts become terms and words in a segment: the
// lexical analysis and, for soft matching, the embedder's vocabulary
// (its space). Segments of another analyzer are rebuilt.
func analyzer(space memory.Space) string {
	return fmt.Sprintf("lexical-%d/%s", lexical.Version, space)
}

// segInfo is a segment's "info" section.
type segInfo struct {
	Format    int                              `json:"format"`
	Docs      int                              `json:"docs"`
	LexDocs   int                              `json:"lexDocs"`
	LexTotal  float64                          `json:"lexTotal"`
	CodeDocs  int                              `json:"codeDocs"`
	CodeTotal float64                          `json:"codeTotal"`
	Counts    map[memory.VectorKind]kindCounts `json:"counts"`
	Space     memory.Space                     `json:"space"`
	Analyzer  string                           `json:"analyzer"`
	Groups    [nGroups]groupInfo               `json:"groups"`
}

type groupInfo struct {
	Rows      int    `json:"rows"`
	Lists     int    `json:"lists"`
	Centroids string `json:"centroids,omitempty"`
}

// openPart reads a mapped segment's sections into a part, checks the
// shapes of its arrays, and marks dead the documents the manifest lists.
// The per-document arrays are verified and their values checked a chunk
// of documents at a time, when a search first reads the chunk (see
// ensureDocs): a search scoped to one repository reads only its stretch.
func openPart(f *segment.File, name string, space memory.Space, dead []uint32) (p *part, err error) {
	// Marking the deleted documents reads their chunks, verified then:
	// damage there is this open's error, not a panic.
	defer func() {
		if c, ok := recoverCorruption(recover()); ok {
			p, err = nil, c
		}
	}()
	r := &sectionReader{f: f, part: name}
	info, err := r.info(space)
	if err != nil {
		return nil, err
	}
	n := info.Docs
	p = &part{name: name, file: f, n: n, lexDocs: info.LexDocs, lexTotal: info.LexTotal,
		codeDocs: info.CodeDocs, codeTotal: info.CodeTotal, counts: info.Counts,
		checked: make([]atomic.Uint32, (n/docChunk+32)/32)}
	if p.counts == nil {
		p.counts = map[memory.VectorKind]kindCounts{}
	}
	r.docs(p)
	r.tags(p)
	r.labels(p)
	if r.err == nil && !p.clustersValid() {
		r.fail(errPart(name, "the repository clusters are malformed"))
	}
	r.lexicon(p)
	r.vectors(p, info)
	if r.err != nil {
		return nil, r.err
	}
	if err := p.checkEager(); err != nil {
		return nil, err
	}
	for id := range nSections {
		if sections[id].random {
			r.section(id).AdviseRandom()
		}
	}
	for _, d := range dead {
		if int(d) >= n {
			return nil, errPart(name, "the manifest deletes document %d of %d", d, n)
		}
		if p.alive(d) {
			p.ensureDoc(d)
			p.markDeadAtOpen(d)
		}
	}
	return p, nil
}

// info reads and checks the segment's info section, checks that the
// segment has every section, and learns the shape its counts follow.
func (r *sectionReader) info(space memory.Space) (segInfo, error) {
	var info segInfo
	if err := json.Unmarshal(r.raw(secInfo), &info); err != nil {
		return info, errPart(r.part, "info: %v", err)
	}
	if info.Format != Format {
		return info, fmt.Errorf("%w: segment %s has index format %d, this build reads %d", segment.ErrFormat, r.part, info.Format, Format)
	}
	if info.Space != space || info.Analyzer != analyzer(space) {
		return info, fmt.Errorf("%w: segment %s was written for %s (%s)", segment.ErrFormat, r.part, info.Space, info.Analyzer)
	}
	r.present()
	r.shape = shape{docs: info.Docs, dim: space.Dim}
	for g, gi := range info.Groups {
		if gi.Lists < 1 || (space.Dim == 0 && gi.Rows != 0) {
			r.fail(errPart(r.part, "group %d has %d rows in %d lists", g, gi.Rows, gi.Lists))
		}
		r.shape.rows[g], r.shape.lists[g] = gi.Rows, gi.Lists
	}
	return info, r.err
}

// docs reads the per-document arrays, the words and keys, and the
// repositories' clusters.
func (r *sectionReader) docs(p *part) {
	p.ts = r.int64s(secDocTS)
	if words := r.uint32s(secDocMeta); r.err == nil && p.n > 0 {
		p.meta = unsafeMeta(words)
	}
	p.length = r.uint16s(secDocLen)
	p.capsule = r.uint32s(secDocCapsule)
	p.pos = r.int32s(secDocPos)
	p.vec = r.uint32s(secDocVec)
	p.clusters = r.uint32s(secDocClusters)
	r.shape.clusters = len(p.clusters)/2 - 1
	p.words = r.int32s(secDocWords)
	p.wordOff = r.uint32s(secDocWordOff)
	p.keys = r.raw(secDocKeys)
	p.keyOff = r.uint32s(secDocKeyOff)
	p.sortedKeys = r.uint32s(secDocSorted)
	for i, id := range perDocSections {
		p.secDocs[i] = r.section(id)
	}
	p.secWords, p.secWordOff = r.section(secDocWords), r.section(secDocWordOff)
	p.secKeys, p.secKeyOff, p.secSorted = r.section(secDocKeys), r.section(secDocKeyOff), r.section(secDocSorted)
}

// tags reads the tagged documents and their tags.
func (r *sectionReader) tags(p *part) {
	p.tagDocs = r.uint32s(secTagDocs)
	r.shape.tagged = len(p.tagDocs)
	p.tagOff = r.uint32s(secTagOff)
	p.tagBlob = r.raw(secTagBlob)
}

// labels reads the label tables.
func (r *sectionReader) labels(p *part) {
	var tabs [nLabelTables]*strtab
	for t := range tabs {
		tab := &strtab{blob: r.raw(secLabel(t))}
		tab.off = r.uint32s(secLabelOff(t))
		if r.err == nil && !tab.valid() {
			r.fail(errPart(r.part, "label table %s is not sorted", labelNames[t]))
		}
		tabs[t] = tab
	}
	p.scopes, p.capsules, p.kinds, p.types, p.statuses = tabs[labScope], tabs[labCapsule], tabs[labKind], tabs[labType], tabs[labStatus]
}

// lexicon reads the term dictionary. It is large and a search reads a
// few entries of it: the sample finds a term's block, the block is
// checked where it is read.
func (r *sectionReader) lexicon(p *part) {
	lex := &segLexicon{secDocs: r.section(secLexDocs), secTfs: r.section(secLexTfs), secPostOff: r.section(secLexPostOff)}
	lex.dict = strtab{blob: r.raw(secLexTerms), offSec: r.section(secLexTermOff), blobSec: r.section(secLexTerms)}
	lex.dict.off = r.uint32s(secLexTermOff)
	r.shape.termOffs = len(lex.dict.off)
	lex.postOff = r.uint32s(secLexPostOff)
	lex.skip = strtab{blob: r.raw(secLexSkip)}
	lex.skip.off = r.uint32s(secLexSkipOff)
	lex.docs = r.uint32s(secLexDocs)
	lex.tfs = r.raw(secLexTfs)
	if r.err == nil && (len(lex.tfs) != len(lex.docs) || len(lex.dict.off) == 0 || !lex.skip.valid() || lex.skip.count() != (lex.dict.count()+skipEvery-1)/skipEvery) {
		r.fail(errPart(r.part, "the term dictionary is malformed"))
	}
	p.lex = lex
}

// vectors reads each group's rows, their documents and ranges.
func (r *sectionReader) vectors(p *part, info segInfo) {
	for g := range nGroups {
		gi := info.Groups[g]
		vg := &p.groups[g]
		vg.sec, vg.idsSec = r.section(secVecRows(g)), r.section(secVecIDs(g))
		rows := r.float32s(secVecRows(g))
		vg.chunks, vg.chunkRows, vg.rows, vg.centroids, vg.nl = [][]float32{rows}, max(1, gi.Rows), gi.Rows, gi.Centroids, gi.Lists
		vg.ids = r.uint32s(secVecIDs(g))
		vg.ranges = r.uint32s(secVecRanges(g))
		if r.err == nil && !ascending(vg.ranges, gi.Rows) {
			r.fail(errPart(r.part, "group %d's ranges are malformed", g))
		}
	}
}

// checkEager checks what the eager sections say of each other: tags of
// documents the part has, kinds and types that fit a byte, capsule ids
// within their table (capsule places are read whole when the state joins
// capsules across segments).
func (p *part) checkEager() error {
	for i, d := range p.tagDocs {
		if int(d) >= p.n || (i > 0 && d <= p.tagDocs[i-1]) {
			return errPart(p.name, "tagged documents are malformed")
		}
	}
	if !ascending(p.tagOff, len(p.tagBlob)) {
		return errPart(p.name, "tag offsets are malformed")
	}
	if p.kinds.count() > 0xff || p.types.count() > 0xff {
		return errPart(p.name, "too many kinds or types")
	}
	nc := uint32(p.capsules.count())
	for i, c := range p.capsule {
		if c > nc {
			return errPart(p.name, "document %d names capsule %d of %d", i, c, nc)
		}
	}
	return nil
}

// docChunk is the documents whose arrays are verified together.
const docChunk = 4096

// ensureDocs verifies the per-document arrays of documents [lo, hi) and
// checks what searches index with (label ids within their tables, vector
// rows within their groups), a chunk at a time, once per chunk. A read
// calls it for the stretch it is about to read.
func (p *part) ensureDocs(lo, hi uint32) {
	if p.file == nil || lo >= hi {
		return
	}
	for c := lo / docChunk; c <= (hi-1)/docChunk; c++ {
		if p.checked[c/32].Load()&(1<<(c%32)) != 0 {
			continue
		}
		a, b := int(c*docChunk), min(p.n, int(c+1)*docChunk)
		for i, id := range perDocSections {
			w := sections[id].perDoc()
			check(p.secDocs[i], a*w, (b-a)*w)
		}
		if err := p.validate(a, b); err != nil {
			panic(corruption{err})
		}
		p.checked[c/32].Or(1 << (c % 32))
	}
}

// ensureDoc is ensureDocs for one document.
func (p *part) ensureDoc(l uint32) { p.ensureDocs(l, l+1) }

// validate checks documents [a, b): label ids within their tables, vector
// rows within their groups.
func (p *part) validate(a, b int) error {
	ns := uint32(p.scopes.count())
	nk, nst, nc := uint32(p.kinds.count()), uint32(p.statuses.count()), uint32(p.capsules.count())
	for i := a; i < b; i++ {
		m := &p.meta[i]
		if m.scope[0] > ns || m.scope[1] > ns || m.scope[2] > ns || m.scope[3] > ns || m.kind() > nk || m.status() > nst || p.capsule[i] > nc {
			return errPart(p.name, "document %d names a label the segment lacks", i)
		}
		if v := p.vec[i]; v != vecNone {
			g, r := groupOfVec(v)
			if r >= p.groups[g].rows {
				return errPart(p.name, "document %d names vector row %d of %d", i, r, p.groups[g].rows)
			}
		}
	}
	return nil
}

// clustersValid checks the repository clusters: ascending repository ids
// and starts, from 0 to the document count.
func (p *part) clustersValid() bool {
	c := p.clusters
	if len(c) < 2 || len(c)%2 != 0 || c[len(c)-2] != noDoc || int(c[len(c)-1]) != p.n {
		return false
	}
	for i := 0; i+2 < len(c); i += 2 {
		if c[i] > uint32(p.scopes.count()) || c[i+1] > c[i+3] || (i > 0 && c[i] <= c[i-2]) {
			return false
		}
	}
	return len(c) == 2 || c[1] == 0
}

// cluster returns the documents of repository label id repo, [lo, hi),
// and the cluster's number; false when the part has none.
func (p *part) cluster(repo uint32) (lo, hi uint32, ci int, ok bool) {
	c := p.clusters
	k := len(c)/2 - 1
	i := sort.Search(k, func(i int) bool { return c[2*i] >= repo })
	if i == k || c[2*i] != repo {
		return 0, 0, 0, false
	}
	return c[2*i+1], c[2*i+3], i, true
}

// markDeadAtOpen marks a document the manifest deletes, taking it out of
// the part's statistics (the state adds them up after).
func (p *part) markDeadAtOpen(local uint32) {
	if p.dead == nil {
		p.dead = make([]uint64, (p.n+63)/64)
	}
	p.kill(local)
	m := &p.meta[local]
	kind := memory.VectorKind(p.kinds.name(m.kind()))
	c := p.counts[kind]
	c.add(m.attr&attrPrivate != 0, m.attr&attrVector != 0, -1)
	p.counts[kind] = c
	if m.attr&attrSearchable != 0 {
		p.lexDocs--
		p.lexTotal -= float64(p.length[local])
	}
	if m.attr&attrCode != 0 {
		p.codeDocs--
		p.codeTotal -= float64(p.length[local])
	}
}

// groupOfVec splits a document's vec entry into its group and row.
func groupOfVec(v uint32) (int, int) {
	return int(v >> vecGroupShift), int(v&vecRowMask) - 1
}

// ascending reports whether offs starts at 0, never decreases and ends at
// most at limit (exactly at limit when it is not empty).
func ascending(offs []uint32, limit int) bool {
	if len(offs) == 0 {
		return true
	}
	if offs[0] != 0 || int(offs[len(offs)-1]) != limit {
		return false
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return false
		}
	}
	return true
}

// segLexicon is a segment's term dictionary and postings.
type segLexicon struct {
	dict       strtab
	skip       strtab
	postOff    []uint32
	docs       []uint32
	tfs        []byte
	secDocs    *segment.Section
	secTfs     *segment.Section
	secPostOff *segment.Section
}

// lookup finds term's id: its block through the sample, then within the
// block.
func (l *segLexicon) lookup(term string) (uint32, bool) {
	nb := l.skip.count()
	b := sort.Search(nb, func(i int) bool { return string(l.skip.at(uint32(i+1))) > term }) - 1
	if b < 0 {
		return 0, false
	}
	lo, hi := b*skipEvery, min(l.dict.count(), (b+1)*skipEvery)
	i := lo + sort.Search(hi-lo, func(i int) bool { return string(l.dict.at(uint32(lo+i+1))) >= term })
	if i < hi && string(l.dict.at(uint32(i+1))) == term {
		return uint32(i + 1), true
	}
	return 0, false
}

func (l *segLexicon) postings(term string) ([]uint32, []uint8) {
	i, ok := l.lookup(term)
	if !ok {
		return nil, nil
	}
	check(l.secPostOff, int(i-1)*4, 8)
	lo, hi := l.postOff[i-1], l.postOff[i]
	if hi < lo || int(hi) > len(l.docs) {
		panic(corruption{errPart("", "postings offsets are malformed")})
	}
	check(l.secDocs, int(lo)*4, int(hi-lo)*4)
	check(l.secTfs, int(lo), int(hi-lo))
	return l.docs[lo:hi:hi], l.tfs[lo:hi:hi]
}

func (l *segLexicon) terms() func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for i := 1; i <= l.dict.count(); i++ {
			if !yield(string(l.dict.at(uint32(i)))) {
				return
			}
		}
	}
}
