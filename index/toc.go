package index

import (
	"fmt"

	"github.com/cairnhq/cairn/segment"
)

// The table of a segment's sections, which the writer (buildSegment) and
// the reader (openPart) share: each section's name, what it holds, how it
// is verified and how many values it holds, in the order the writer
// writes them. A change to it is a change of Format.

// secID names a section of a segment: its place in the table.
type secID int

// The sections, in writing order.
const (
	secDocTS       secID = iota // per document: its time
	secDocMeta                  // per document: its docMeta (docMetaWords words)
	secDocLen                   // per document: its searchable terms
	secDocCapsule               // per document: its capsule's label id
	secDocPos                   // per document: its position in its capsule
	secDocVec                   // per document: vecNone or its vector's row, with the group bit
	secDocClusters              // per repository: its label id and first document; then (noDoc, n)
	secDocWords                 // the documents' known words
	secDocWordOff               // offsets into doc.words
	secDocKeys                  // per document: its type's label id, then its id
	secDocKeyOff                // offsets into doc.keys
	secDocSorted                // the documents by key
	secTagDocs                  // the tagged documents, ascending
	secTagOff                   // offsets into tag.blob
	secTagBlob                  // per tagged document: its tags
	secLabels                   // per label table: its offsets, then its values (secLabelOff, secLabel)
)

const (
	secLexDocs    secID = secLabels + 2*nLabelTables + iota // the postings' documents
	secLexTfs                                               // the postings' term frequencies
	secLexTermOff                                           // offsets into lex.terms
	secLexTerms                                             // the terms, sorted
	secLexPostOff                                           // per term: its first posting; then the postings' count
	secLexSkipOff                                           // offsets into lex.skip
	secLexSkip                                              // every skipEvery-th term
	secVec                                                  // per vector group: its rows, their documents, its ranges (secVecRows...)
)

const (
	secInfo   = secVec + 3*nGroups // the segInfo, in JSON
	nSections = secInfo + 1
)

// The label tables of a segment, in their sections' order.
const (
	labScope = iota
	labCapsule
	labKind
	labType
	labStatus
	nLabelTables
)

// secLabelOff and secLabel are label table t's sections.
func secLabelOff(t int) secID { return secLabels + secID(2*t) }
func secLabel(t int) secID    { return secLabels + secID(2*t+1) }

// secVecRows, secVecIDs and secVecRanges are vector group g's sections.
func secVecRows(g int) secID   { return secVec + secID(3*g) }
func secVecIDs(g int) secID    { return secVec + secID(3*g+1) }
func secVecRanges(g int) secID { return secVec + secID(3*g+2) }

// secKind is what a section's values are.
type secKind uint8

const (
	kindBytes secKind = iota
	kindUint16
	kindUint32
	kindInt32
	kindInt64
	kindFloat32
	kindJSON
)

// size is the bytes of one value (1 for bytes and JSON).
func (k secKind) size() int {
	switch k {
	case kindUint16:
		return 2
	case kindUint32, kindInt32, kindFloat32:
		return 4
	case kindInt64:
		return 8
	}
	return 1
}

// secCount is how many values a section holds, in terms of the segment's
// shape.
type secCount uint8

const (
	countAny        secCount = iota // checked by what reads it, if at all
	countDocs                       // one per document
	countDocsMeta                   // docMetaWords per document
	countDocOffsets                 // one per document, and one more
	countTagOffsets                 // one per tagged document, and one more
	countTermOffs                   // as many as lex.termoff (none when it is empty)
	countRows                       // one per row of the section's vector group
	countRowFloats                  // the dimensions of each row of its group
	countRanges                     // one per (repository cluster, list) of its group, and one more
)

// docMetaWords is the uint32 words of a docMeta.
const docMetaWords = 5

// shape is what the counts of a segment's sections follow, as the reader
// learns it: from the info section, then from sections read before.
type shape struct {
	docs     int
	dim      int
	tagged   int
	termOffs int
	clusters int
	rows     [nGroups]int
	lists    [nGroups]int
}

// want is the count a section of this rule holds in s (false: any).
func (c secCount) want(s *shape, group int) (int, bool) {
	switch c {
	case countDocs:
		return s.docs, true
	case countDocsMeta:
		return docMetaWords * s.docs, true
	case countDocOffsets:
		return s.docs + 1, true
	case countTagOffsets:
		return s.tagged + 1, true
	case countTermOffs:
		return s.termOffs, true
	case countRows:
		return s.rows[group], true
	case countRowFloats:
		return s.rows[group] * s.dim, true
	case countRanges:
		return s.clusters*s.lists[group] + 1, true
	}
	return 0, false
}

// secDesc describes one section.
type secDesc struct {
	name string
	kind secKind
	// eager sections are verified whole when the segment is opened: what
	// every search reads of every candidate. The others are verified
	// block by block as they are read.
	eager bool
	// random sections are read a few bytes at a time at random: small
	// checksum blocks, and a page fault there maps no pages around it.
	random bool
	count  secCount
	// group is the vector group of a vector section.
	group int
}

// block is the section's checksum block.
func (d *secDesc) block() int {
	if d.random {
		return segment.SmallBlock
	}
	return segment.DefaultBlock
}

// labelNames name the label tables (lab.NAME and lab.NAME.off).
var labelNames = [nLabelTables]string{"scope", "capsule", "kind", "type", "status"}

// sections is the table.
var sections = func() [nSections]secDesc {
	t := [nSections]secDesc{
		secDocTS:       {name: "doc.ts", kind: kindInt64, count: countDocs},
		secDocMeta:     {name: "doc.meta", kind: kindUint32, count: countDocsMeta},
		secDocLen:      {name: "doc.len", kind: kindUint16, count: countDocs},
		secDocCapsule:  {name: "doc.capsule", kind: kindUint32, eager: true, count: countDocs},
		secDocPos:      {name: "doc.pos", kind: kindInt32, eager: true, count: countDocs},
		secDocVec:      {name: "doc.vec", kind: kindUint32, count: countDocs},
		secDocClusters: {name: "doc.clusters", kind: kindUint32, eager: true},
		secDocWords:    {name: "doc.words", kind: kindInt32, random: true},
		secDocWordOff:  {name: "doc.wordoff", kind: kindUint32, random: true, count: countDocOffsets},
		secDocKeys:     {name: "doc.keys", kind: kindBytes, random: true},
		secDocKeyOff:   {name: "doc.keyoff", kind: kindUint32, random: true, count: countDocOffsets},
		secDocSorted:   {name: "doc.sorted", kind: kindUint32, random: true, count: countDocs},
		secTagDocs:     {name: "tag.docs", kind: kindUint32, eager: true},
		secTagOff:      {name: "tag.off", kind: kindUint32, eager: true, count: countTagOffsets},
		secTagBlob:     {name: "tag.blob", kind: kindBytes, eager: true},
		secLexDocs:     {name: "lex.docs", kind: kindUint32},
		secLexTfs:      {name: "lex.tfs", kind: kindBytes},
		secLexTermOff:  {name: "lex.termoff", kind: kindUint32, random: true},
		secLexTerms:    {name: "lex.terms", kind: kindBytes, random: true},
		secLexPostOff:  {name: "lex.postoff", kind: kindUint32, random: true, count: countTermOffs},
		secLexSkipOff:  {name: "lex.skip.off", kind: kindUint32, eager: true},
		secLexSkip:     {name: "lex.skip", kind: kindBytes, eager: true},
		secInfo:        {name: "info", kind: kindJSON, eager: true},
	}
	for l, name := range labelNames {
		t[secLabelOff(l)] = secDesc{name: "lab." + name + ".off", kind: kindUint32, eager: true}
		t[secLabel(l)] = secDesc{name: "lab." + name, kind: kindBytes, eager: true}
	}
	for g := range nGroups {
		t[secVecRows(g)] = secDesc{name: fmt.Sprintf("vec.%d.rows", g), kind: kindFloat32, random: true, count: countRowFloats, group: g}
		t[secVecIDs(g)] = secDesc{name: fmt.Sprintf("vec.%d.ids", g), kind: kindUint32, count: countRows, group: g}
		t[secVecRanges(g)] = secDesc{name: fmt.Sprintf("vec.%d.ranges", g), kind: kindUint32, eager: true, count: countRanges, group: g}
	}
	return t
}()

// perDocSections are the per-document arrays a read verifies a chunk of
// documents at a time (see ensureDocs).
var perDocSections = [...]secID{secDocTS, secDocMeta, secDocLen, secDocVec}

// perDoc is the bytes a document takes in a per-document section.
func (d *secDesc) perDoc() int {
	if d.count == countDocsMeta {
		return docMetaWords * d.kind.size()
	}
	return d.kind.size()
}

// sectionWriter writes a segment's sections in the table's order, each
// as the table declares it.
type sectionWriter struct {
	w    *segment.Writer
	next secID // the section the table puts next
	cur  secID // the section being written (-1: none)
	err  error
}

func newSectionWriter(w *segment.Writer) *sectionWriter {
	return &sectionWriter{w: w, cur: -1}
}

// begin starts section id, which must be the next in the table.
func (s *sectionWriter) begin(id secID) {
	if s.err == nil && id != s.next {
		s.err = fmt.Errorf("index: section %s written where the table puts %s", sections[id].name, sections[s.next].name)
	}
	if s.err != nil {
		return
	}
	d := &sections[id]
	s.w.BeginBlocks(d.name, d.eager, d.block())
	s.next, s.cur = id+1, id
}

// end ends the current section.
func (s *sectionWriter) end() {
	if s.err == nil {
		s.w.End()
	}
	s.cur = -1
}

// is checks that the current section holds values of kind k.
func (s *sectionWriter) is(k secKind) bool {
	if s.err == nil && (s.cur < 0 || sections[s.cur].kind != k) {
		s.err = fmt.Errorf("index: values of kind %d written outside a section of that kind", k)
	}
	return s.err == nil
}

func (s *sectionWriter) bytes(b []byte) {
	if s.is(kindBytes) {
		s.w.Write(b)
	}
}

func (s *sectionWriter) json(b []byte) {
	if s.is(kindJSON) {
		s.w.Write(b)
	}
}

func (s *sectionWriter) uint16s(v []uint16) {
	if s.is(kindUint16) {
		s.w.WriteUint16s(v)
	}
}

func (s *sectionWriter) uint32s(v []uint32) {
	if s.is(kindUint32) {
		s.w.WriteUint32s(v)
	}
}

func (s *sectionWriter) int32s(v []int32) {
	if s.is(kindInt32) {
		s.w.WriteInt32s(v)
	}
}

func (s *sectionWriter) int64s(v []int64) {
	if s.is(kindInt64) {
		s.w.WriteInt64s(v)
	}
}

func (s *sectionWriter) float32s(v []float32) {
	if s.is(kindFloat32) {
		s.w.WriteFloat32s(v)
	}
}

// whole writes section id of one piece of data (bytes or JSON).
func (s *sectionWriter) whole(id secID, data []byte) {
	s.begin(id)
	if s.err == nil && sections[id].kind == kindJSON {
		s.json(data)
	} else {
		s.bytes(data)
	}
	s.end()
}

// wholeUint32s writes section id of v.
func (s *sectionWriter) wholeUint32s(id secID, v []uint32) {
	s.begin(id)
	s.uint32s(v)
	s.end()
}

// finish reports the first error: a section out of order or of another
// kind, or a section of the table left out.
func (s *sectionWriter) finish() error {
	if s.err == nil && s.next != nSections {
		s.err = fmt.Errorf("index: section %s not written", sections[s.next].name)
	}
	return s.err
}

// sectionReader reads a mapped segment's sections as the table declares
// them, checking each one's count against the shape learned so far. The
// first problem is kept in err; later reads return nothing.
type sectionReader struct {
	f     *segment.File
	part  string // the segment's name, for errors
	shape shape
	err   error
}

// section is section id of the file.
func (r *sectionReader) section(id secID) *segment.Section { return r.f.Section(sections[id].name) }

// present checks that the file has every section of the table.
func (r *sectionReader) present() {
	for id := range nSections {
		if r.err == nil && r.section(id) == nil {
			r.err = errPart(r.part, "no section %s", sections[id].name)
		}
	}
}

// raw returns section id's bytes (a bytes or JSON section).
func (r *sectionReader) raw(id secID) []byte {
	r.kindIs(id, kindBytes, kindJSON)
	if s := r.section(id); s != nil && r.err == nil {
		return s.Bytes()
	}
	return nil
}

// kindIs checks that the table declares section id of one of the kinds
// its caller reads: a mismatch is a bug of this package.
func (r *sectionReader) kindIs(id secID, kinds ...secKind) {
	for _, k := range kinds {
		if sections[id].kind == k {
			return
		}
	}
	panic(fmt.Sprintf("index: section %s read as another kind", sections[id].name))
}

// readValues views section id as values of kind k, checked against the
// table's count.
func readValues[T any](r *sectionReader, id secID, k secKind, decode func([]byte) ([]T, error)) []T {
	r.kindIs(id, k)
	if r.err != nil {
		return nil
	}
	var b []byte
	if s := r.section(id); s != nil {
		b = s.Bytes()
	}
	v, err := decode(b)
	if err != nil {
		r.err = err
		return nil
	}
	d := &sections[id]
	if want, ok := d.count.want(&r.shape, d.group); ok && len(v) != want {
		r.err = errPart(r.part, "%s holds %d values, want %d", d.name, len(v), want)
		return nil
	}
	return v
}

func (r *sectionReader) uint16s(id secID) []uint16 {
	return readValues(r, id, kindUint16, segment.Uint16s)
}

func (r *sectionReader) uint32s(id secID) []uint32 {
	return readValues(r, id, kindUint32, segment.Uint32s)
}

func (r *sectionReader) int32s(id secID) []int32 { return readValues(r, id, kindInt32, segment.Int32s) }

func (r *sectionReader) int64s(id secID) []int64 { return readValues(r, id, kindInt64, segment.Int64s) }

func (r *sectionReader) float32s(id secID) []float32 {
	return readValues(r, id, kindFloat32, segment.Float32s)
}

// fail keeps err as the reader's first problem.
func (r *sectionReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}
