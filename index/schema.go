package index

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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
	Labels   map[string]int                   `json:"labels,omitempty"`
	Extra    map[string]json.RawMessage       `json:"extra,omitempty"`
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

// openPart reads a mapped segment's sections into a part, checks their
// shapes, and marks dead the documents the manifest lists.
func openPart(f *segment.File, name string, space memory.Space, dead []uint32) (*part, error) {
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
		"doc.keyoff", "doc.keys", "doc.vec", "doc.sorted", "tag.docs", "tag.off", "tag.blob",
		"lex.termoff", "lex.terms", "lex.postoff", "lex.docs", "lex.tfs"} {
		if f.Section(s) == nil {
			return nil, errPart(name, "no section %s", s)
		}
	}
	n := info.Docs
	p := &part{name: name, file: f, n: n, lexDocs: info.LexDocs, lexTotal: info.LexTotal, counts: info.Counts}
	if p.counts == nil {
		p.counts = map[memory.VectorKind]kindCounts{}
	}
	var err error
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
	// The dictionary is large and a search reads a few entries of it: it
	// is checked where it is read, not here.
	lex := &segLexicon{secDocs: f.Section("lex.docs"), secTfs: f.Section("lex.tfs"), secPostOff: f.Section("lex.postoff")}
	lex.dict = strtab{blob: sec("lex.terms"), offSec: f.Section("lex.termoff"), blobSec: f.Section("lex.terms")}
	lex.dict.off = u32("lex.termoff", -1)
	lex.postOff = u32("lex.postoff", max(0, len(lex.dict.off)))
	if err == nil {
		lex.docs, err = segment.Uint32s(sec("lex.docs"))
	}
	lex.tfs = sec("lex.tfs")
	if err != nil {
		return nil, err
	}
	if len(lex.tfs) != len(lex.docs) || len(lex.dict.off) == 0 {
		return nil, errPart(name, "the term dictionary is malformed")
	}
	p.lex = lex
	for g := range nGroups {
		gi := info.Groups[g]
		vg := &p.groups[g]
		vg.sec = f.Section(vecSection(g, "rows"))
		if vg.sec == nil || f.Section(vecSection(g, "ids")) == nil || f.Section(vecSection(g, "lists")) == nil {
			return nil, errPart(name, "no vectors of group %d", g)
		}
		rows, e := segment.Float32s(vg.sec.Bytes())
		if e != nil || (space.Dim > 0 && len(rows) != gi.Rows*space.Dim) || (space.Dim == 0 && gi.Rows != 0) {
			return nil, errPart(name, "group %d holds %d floats for %d rows", g, len(rows), gi.Rows)
		}
		vg.chunks, vg.chunkRows, vg.rows, vg.centroids = [][]float32{rows}, max(1, gi.Rows), gi.Rows, gi.Centroids
		vg.ids = u32(vecSection(g, "ids"), gi.Rows)
		if gi.Lists > 0 {
			vg.lists = u32(vecSection(g, "lists"), gi.Lists+1)
			if err == nil && !ascending(vg.lists, gi.Rows) {
				err = errPart(name, "group %d's lists are malformed", g)
			}
		}
		if err != nil {
			return nil, err
		}
		for _, id := range vg.ids {
			if int(id) >= n {
				return nil, errPart(name, "a vector names document %d of %d", id, n)
			}
		}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	// Sections read a few bytes per candidate: a page fault there must not
	// map the pages around it.
	for _, s := range []string{"doc.words", "doc.wordoff", "doc.keys", "doc.keyoff", "doc.sorted", "lex.termoff", "lex.terms", "lex.postoff",
		vecSection(groupSearchable, "rows"), vecSection(groupInner, "rows")} {
		f.Section(s).AdviseRandom()
	}
	p.secWords, p.secWordOff = f.Section("doc.words"), f.Section("doc.wordoff")
	p.secKeys, p.secKeyOff, p.secSorted = f.Section("doc.keys"), f.Section("doc.keyoff"), f.Section("doc.sorted")
	for _, d := range dead {
		if int(d) >= n {
			return nil, errPart(name, "the manifest deletes document %d of %d", d, n)
		}
		if p.alive(d) {
			p.markDeadAtOpen(d)
		}
	}
	return p, nil
}

// validate checks what the searches index with: offsets ascending within
// their data, label ids within their tables, vectors within their rows.
func (p *part) validate() error {
	if !ascending(p.tagOff, len(p.tagBlob)) {
		return errPart(p.name, "offsets are malformed")
	}
	ns := uint32(p.scopes.count())
	nk, nt, nst, nc := uint32(p.kinds.count()), uint32(p.types.count()), uint32(p.statuses.count()), uint32(p.capsules.count())
	for i := range p.meta {
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
	if nt > 0xff || nk > 0xff {
		return errPart(p.name, "too many kinds or types")
	}
	for i, d := range p.tagDocs {
		if int(d) >= p.n || (i > 0 && d <= p.tagDocs[i-1]) {
			return errPart(p.name, "tagged documents are malformed")
		}
	}
	for _, d := range p.sortedKeys {
		if int(d) >= p.n {
			return errPart(p.name, "the key order names document %d of %d", d, p.n)
		}
	}
	return nil
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
	postOff    []uint32
	docs       []uint32
	tfs        []byte
	secDocs    *segment.Section
	secTfs     *segment.Section
	secPostOff *segment.Section
}

func (l *segLexicon) postings(term string) ([]uint32, []uint8) {
	i, ok := l.dict.lookup(term)
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

// sortTerms orders terms as the dictionaries do (bytewise).
func sortTerms(ts []string) { slices.SortFunc(ts, strings.Compare) }
