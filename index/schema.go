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
const Format = 1

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
	Format   int                              `json:"format"`
	Docs     int                              `json:"docs"`
	LexDocs  int                              `json:"lexDocs"`
	LexTotal float64                          `json:"lexTotal"`
	Counts   map[memory.VectorKind]kindCounts `json:"counts"`
	Space    memory.Space                     `json:"space"`
	Analyzer string                           `json:"analyzer"`
	Groups   [nGroups]groupInfo               `json:"groups"`
}

type groupInfo struct {
	Rows      int    `json:"rows"`
	Lists     int    `json:"lists"`
	Centroids string `json:"centroids,omitempty"`
}

// Section names of a segment. Eager sections (verified when the segment
// is opened) are what every search reads of every candidate; the bulky
// ones a search reads a little of are lazy, verified block by block.
var labelSections = [...]string{"scope", "capsule", "kind", "type", "status"}

func vecSection(g int, what string) string { return fmt.Sprintf("vec.%d.%s", g, what) }

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
	sec := func(n string) []byte {
		if s := f.Section(n); s != nil {
			return s.Bytes()
		}
		return nil
	}
	var info segInfo
	if err := json.Unmarshal(sec("info"), &info); err != nil {
		return nil, errPart(name, "info: %v", err)
	}
	if info.Format != Format {
		return nil, fmt.Errorf("%w: segment %s has index format %d, this build reads %d", segment.ErrFormat, name, info.Format, Format)
	}
	if info.Space != space || info.Analyzer != analyzer(space) {
		return nil, fmt.Errorf("%w: segment %s was written for %s (%s)", segment.ErrFormat, name, info.Space, info.Analyzer)
	}
	for _, s := range []string{"info", "doc.ts", "doc.meta", "doc.len", "doc.capsule", "doc.pos", "doc.wordoff", "doc.words",
		"doc.keyoff", "doc.keys", "doc.vec", "doc.sorted", "doc.clusters", "tag.docs", "tag.off", "tag.blob",
		"lex.termoff", "lex.terms", "lex.postoff", "lex.docs", "lex.tfs", "lex.skip", "lex.skip.off"} {
		if f.Section(s) == nil {
			return nil, errPart(name, "no section %s", s)
		}
	}
	n := info.Docs
	p = &part{name: name, file: f, n: n, lexDocs: info.LexDocs, lexTotal: info.LexTotal, counts: info.Counts,
		checked: make([]atomic.Uint32, (n/docChunk+32)/32)}
	if p.counts == nil {
		p.counts = map[memory.VectorKind]kindCounts{}
	}
	u32 := func(s string, want int) []uint32 {
		if err != nil {
			return nil
		}
		var v []uint32
		v, err = segment.Uint32s(sec(s))
		if err == nil && want >= 0 && len(v) != want {
			err = errPart(name, "%s holds %d values, want %d", s, len(v), want)
		}
		return v
	}
	if p.ts, err = segment.Int64s(sec("doc.ts")); err == nil && len(p.ts) != n {
		err = errPart(name, "doc.ts holds %d values, want %d", len(p.ts), n)
	}
	metaWords := u32("doc.meta", 5*n)
	if err == nil && n > 0 {
		p.meta = unsafeMeta(metaWords)
	}
	if err == nil {
		if p.length, err = segment.Uint16s(sec("doc.len")); err == nil && len(p.length) != n {
			err = errPart(name, "doc.len holds %d values", len(p.length))
		}
	}
	p.capsule = u32("doc.capsule", n)
	if err == nil {
		if p.pos, err = segment.Int32s(sec("doc.pos")); err == nil && len(p.pos) != n {
			err = errPart(name, "doc.pos holds %d values", len(p.pos))
		}
	}
	p.wordOff = u32("doc.wordoff", n+1)
	if err == nil {
		p.words, err = segment.Int32s(sec("doc.words"))
	}
	p.keyOff = u32("doc.keyoff", n+1)
	p.keys = sec("doc.keys")
	p.vec = u32("doc.vec", n)
	p.sortedKeys = u32("doc.sorted", n)
	p.clusters = u32("doc.clusters", -1)
	p.tagDocs = u32("tag.docs", -1)
	p.tagOff = u32("tag.off", len(p.tagDocs)+1)
	p.tagBlob = sec("tag.blob")
	var tabs [len(labelSections)]*strtab
	for i, l := range labelSections {
		t := &strtab{blob: sec("lab." + l)}
		t.off = u32("lab."+l+".off", -1)
		if err == nil && !t.valid() {
			err = errPart(name, "label table %s is not sorted", l)
		}
		tabs[i] = t
	}
	if err != nil {
		return nil, err
	}
	p.scopes, p.capsules, p.kinds, p.types, p.statuses = tabs[0], tabs[1], tabs[2], tabs[3], tabs[4]
	if !p.clustersValid() {
		return nil, errPart(name, "the repository clusters are malformed")
	}
	// The dictionary is large and a search reads a few entries of it: the
	// sample finds a term's block, the block is checked where it is read.
	lex := &segLexicon{secDocs: f.Section("lex.docs"), secTfs: f.Section("lex.tfs"), secPostOff: f.Section("lex.postoff")}
	lex.dict = strtab{blob: sec("lex.terms"), offSec: f.Section("lex.termoff"), blobSec: f.Section("lex.terms")}
	lex.dict.off = u32("lex.termoff", -1)
	lex.postOff = u32("lex.postoff", max(0, len(lex.dict.off)))
	lex.skip = strtab{blob: sec("lex.skip")}
	lex.skip.off = u32("lex.skip.off", -1)
	if err == nil {
		lex.docs, err = segment.Uint32s(sec("lex.docs"))
	}
	lex.tfs = sec("lex.tfs")
	if err != nil {
		return nil, err
	}
	if len(lex.tfs) != len(lex.docs) || len(lex.dict.off) == 0 || !lex.skip.valid() || lex.skip.count() != (lex.dict.count()+skipEvery-1)/skipEvery {
		return nil, errPart(name, "the term dictionary is malformed")
	}
	p.lex = lex
	nClusters := len(p.clusters)/2 - 1
	for g := range nGroups {
		gi := info.Groups[g]
		vg := &p.groups[g]
		vg.sec, vg.idsSec = f.Section(vecSection(g, "rows")), f.Section(vecSection(g, "ids"))
		if vg.sec == nil || vg.idsSec == nil || f.Section(vecSection(g, "ranges")) == nil || gi.Lists < 1 {
			return nil, errPart(name, "no vectors of group %d", g)
		}
		rows, e := segment.Float32s(vg.sec.Bytes())
		if e != nil || (space.Dim > 0 && len(rows) != gi.Rows*space.Dim) || (space.Dim == 0 && gi.Rows != 0) {
			return nil, errPart(name, "group %d holds %d floats for %d rows", g, len(rows), gi.Rows)
		}
		vg.chunks, vg.chunkRows, vg.rows, vg.centroids, vg.nl = [][]float32{rows}, max(1, gi.Rows), gi.Rows, gi.Centroids, gi.Lists
		vg.ids = u32(vecSection(g, "ids"), gi.Rows)
		vg.ranges = u32(vecSection(g, "ranges"), nClusters*gi.Lists+1)
		if err == nil && !ascending(vg.ranges, gi.Rows) {
			err = errPart(name, "group %d's ranges are malformed", g)
		}
		if err != nil {
			return nil, err
		}
	}
	for i, d := range p.tagDocs {
		if int(d) >= p.n || (i > 0 && d <= p.tagDocs[i-1]) {
			return nil, errPart(p.name, "tagged documents are malformed")
		}
	}
	if !ascending(p.tagOff, len(p.tagBlob)) {
		return nil, errPart(p.name, "tag offsets are malformed")
	}
	if p.kinds.count() > 0xff || p.types.count() > 0xff {
		return nil, errPart(p.name, "too many kinds or types")
	}
	// Capsule places are read whole when the state joins capsules across
	// segments: check them here.
	nc := uint32(p.capsules.count())
	for i, c := range p.capsule {
		if c > nc {
			return nil, errPart(p.name, "document %d names capsule %d of %d", i, c, nc)
		}
	}
	// Sections read a few bytes per candidate: a page fault there should
	// not map the pages around it.
	for _, s := range []string{"doc.words", "doc.wordoff", "doc.keys", "doc.keyoff", "doc.sorted", "lex.termoff", "lex.terms", "lex.postoff",
		vecSection(groupSearchable, "rows"), vecSection(groupInner, "rows")} {
		f.Section(s).AdviseRandom()
	}
	p.secWords, p.secWordOff = f.Section("doc.words"), f.Section("doc.wordoff")
	p.secKeys, p.secKeyOff, p.secSorted = f.Section("doc.keys"), f.Section("doc.keyoff"), f.Section("doc.sorted")
	p.secDocs = [...]*segment.Section{f.Section("doc.ts"), f.Section("doc.meta"), f.Section("doc.len"), f.Section("doc.vec")}
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
		check(p.secDocs[0], a*8, (b-a)*8)
		check(p.secDocs[1], a*20, (b-a)*20)
		check(p.secDocs[2], a*2, (b-a)*2)
		check(p.secDocs[3], a*4, (b-a)*4)
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
}

// groupOfVec splits a document's vec entry into its group and row.
func groupOfVec(v uint32) (int, int) {
	if v&vecGroupBit != 0 {
		return groupInner, int(v&^vecGroupBit) - 1
	}
	return groupSearchable, int(v) - 1
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
