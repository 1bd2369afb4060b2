package index

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
	"github.com/cairnhq/cairn/vector"
)

// docMeta is a document's scope and attributes, as a segment stores them
// (20 bytes): what a search's filter reads of every candidate, packed so
// that filtering stays in cache.
type docMeta struct {
	// scope holds the part's label ids of the session, repo, agent and
	// user (memory.ScopeKeys order; scopeRepo is the repository's).
	scope [4]uint32
	// attr holds flags (bits 0-7), the kind's label id (8-15) and the
	// status's label id (16-31).
	attr uint32
}

// scopeRepo is the repository's place in docMeta.scope.
const scopeRepo = 1

// docMeta flags.
const (
	// attrSearchable: the tiered retrieval ranks it (observations and
	// summaries); only these have postings.
	attrSearchable = 1 << iota
	// attrVector: it has a vector in the index's space.
	attrVector
	attrPrivate
	// attrAsks: its text holds a "?".
	attrAsks
	// attrCode: a code entity; its postings are code terms (codeTerm),
	// counted in the code statistics, apart from the memories'.
	attrCode
)

func (m *docMeta) kind() uint32   { return m.attr >> 8 & 0xff }
func (m *docMeta) status() uint32 { return m.attr >> 16 }

func makeAttr(flags, kind, status uint32) uint32 { return flags | kind<<8 | status<<16 }

// Vector groups: the records tiered retrieval ranks, thoughts and the
// knowledge graph (which inner_voice ranks), and code entities (which
// code hydration ranks). Each group's vectors lie together, so no search
// scans another's rows.
const (
	groupSearchable = 0
	groupInner      = 1
	groupCode       = 2
	nGroups         = 3
)

// vecNone marks a document without a vector; otherwise a document's vec
// entry is its row + 1, with the group in the top two bits.
const (
	vecNone       = 0
	vecGroupShift = 30
	vecRowMask    = 1<<vecGroupShift - 1
	maxGroupRows  = vecRowMask - 1
)

// vecGroup is one group's vectors in a part: rows in list order when the
// part was written under the group's centroids (lists are the ranges of
// rows filed under each centroid), else in document order as one list.
type vecGroup struct {
	chunks    [][]float32
	chunkRows int
	rows      int
	ids       []uint32 // row → local document
	// ranges hold, in a segment, the first row of each (repository
	// cluster, list), then the row count: cluster c's list l is rows
	// [ranges[c*nl+l], ranges[c*nl+l+1]). The delta has none.
	ranges    []uint32
	nl        int
	centroids string // the centroid set lists refer to ("" none)
	sec       *segment.Section
	idsSec    *segment.Section
	// assigned files the rows of a part written under no centroids (or
	// other ones: the delta) under the current set, as a search needs.
	assigned assignment
}

// assignment is the list of each row of a vector group under one
// centroid set, computed as searches need it (rows are only appended).
type assignment struct {
	mu    sync.Mutex
	name  string
	lists []int32
}

// listsUnder returns the list of every row of g under c, computing those
// not yet known. Safe for concurrent searches.
func (g *vecGroup) listsUnder(c *centroids, dim int) []int32 {
	a := &g.assigned
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.name != c.name {
		a.name, a.lists = c.name, a.lists[:0]
	}
	if n := len(a.lists); n < g.rows {
		a.lists = append(a.lists, vector.AssignAll(c.data, dim, g.rows-n, func(i int) []float32 {
			return g.row(n+i, dim)
		})...)
	}
	return a.lists[:g.rows:g.rows]
}

// listOf returns the list row r of a segment is filed under.
func (g *vecGroup) listOf(r int) int {
	k := sort.Search(len(g.ranges)-1, func(k int) bool { return g.ranges[k+1] > uint32(r) })
	return k % g.nl
}

// spans calls visit for the rows of list l in cluster c (c -1: every
// cluster; l -1: every list), a stretch of rows at a time.
func (g *vecGroup) spans(c, l int, visit func(lo, hi int)) {
	if g.ranges == nil {
		if g.rows > 0 {
			visit(0, g.rows)
		}
		return
	}
	nc := (len(g.ranges) - 1) / g.nl
	for ci := range nc {
		if c >= 0 && ci != c {
			continue
		}
		if l < 0 {
			if lo, hi := int(g.ranges[ci*g.nl]), int(g.ranges[(ci+1)*g.nl]); hi > lo {
				visit(lo, hi)
			}
			continue
		}
		if lo, hi := int(g.ranges[ci*g.nl+l]), int(g.ranges[ci*g.nl+l+1]); hi > lo {
			visit(lo, hi)
		}
	}
}

// row returns row r's vector, checking its block in a mapped part.
func (g *vecGroup) row(r int, dim int) []float32 {
	c, i := r/g.chunkRows, (r%g.chunkRows)*dim
	if g.sec != nil {
		check(g.sec, i*4, dim*4)
	}
	return g.chunks[c][i : i+dim : i+dim]
}

// kindCounts counts the live documents of one kind: all of them, the
// private ones, and of each those with a vector in the active space.
type kindCounts struct {
	Alive      int `json:"alive"`
	Private    int `json:"private"`
	Vec        int `json:"vec"`
	PrivateVec int `json:"privateVec"`
}

func (c *kindCounts) add(private, vec bool, delta int) {
	c.Alive += delta
	if private {
		c.Private += delta
	}
	if vec {
		c.Vec += delta
		if private {
			c.PrivateVec += delta
		}
	}
}

// part is a run of documents: a mapped segment, or the delta in memory.
// Local document i is global document base+i.
type part struct {
	name string        // the segment's file name ("" for the delta)
	file *segment.File // nil for the delta
	base uint32
	n    int

	ts      []int64
	meta    []docMeta
	length  []uint16 // terms of a searchable document
	capsule []uint32 // capsule label id (0: none)
	pos     []int32  // position in the capsule (-1: none)
	wordOff []uint32 // n+1 offsets into words
	words   []int32  // the documents' known words (soft matching)
	keyOff  []uint32 // n+1 offsets into keys
	keys    []byte   // per document: its type's label id (one byte), then its id
	vec     []uint32 // per document: vecNone, or row+1 with the group bit
	tagDocs []uint32 // documents with tags, ascending
	tagOff  []uint32 // len(tagDocs)+1 offsets into tagBlob
	tagBlob []byte   // per tagged document: tags, each a length byte and its bytes

	scopes, capsules, kinds, types, statuses labelTable

	// Translations of the part's label ids to the state's global ids.
	kindG, typeG []uint8
	statusG      []uint32
	capG         []uint32

	// dead marks deleted documents (this process's view: the manifest's
	// deletions plus those replayed since).
	dead  []uint64
	ndead int

	lex      lexicon
	lexDocs  int     // live searchable documents
	lexTotal float64 // their terms
	// codeDocs and codeTotal are the live code entities and their terms.
	codeDocs  int
	codeTotal float64

	groups [nGroups]vecGroup
	counts map[memory.VectorKind]kindCounts

	// Lazily verified sections of a mapped part: the per-document arrays
	// (ts, meta, len, vec; see ensureDocs, which sets checked), the rest.
	secDocs                                             [len(perDocSections)]*segment.Section
	checked                                             []atomic.Uint32
	secWords, secWordOff, secKeys, secKeyOff, secSorted *segment.Section
	sortedKeys                                          []uint32 // local documents by key (mapped)
	// clusters hold, in a segment, each repository's label id and first
	// document, then (noDoc, n): see cluster.
	clusters []uint32
	// dfs caches, per term, its live documents in the part (a part with
	// deletions counts them once per term).
	dfs sync.Map

	delta *deltaData // the delta's mutable structures (nil when mapped)
}

// labelTables returns p's label tables in their sections' order.
func (p *part) labelTables() [nLabelTables]labelTable {
	return [...]labelTable{labScope: p.scopes, labCapsule: p.capsules, labKind: p.kinds, labType: p.types, labStatus: p.statuses}
}

// lexicon finds a term's postings in a part.
type lexicon interface {
	// postings returns the term's documents (local, ascending) and
	// frequencies; dead documents are among them.
	postings(term string) ([]uint32, []uint8)
	// terms lists every term in byte order (merges read it).
	terms() func(yield func(string) bool)
}

func (p *part) alive(local uint32) bool {
	w := int(local >> 6)
	return w >= len(p.dead) || p.dead[w]&(1<<(local&63)) == 0
}

func (p *part) kill(local uint32) {
	for int(local>>6) >= len(p.dead) {
		p.dead = append(p.dead, 0)
	}
	p.dead[local>>6] |= 1 << (local & 63)
	p.ndead++
	p.dfs.Clear()
}

// key returns local's key bytes: its type's label id, then its id.
func (p *part) key(local uint32) []byte {
	if p.secKeyOff != nil {
		check(p.secKeyOff, int(local)*4, 8)
	}
	lo, hi := p.keyOff[local], p.keyOff[local+1]
	if p.secKeys != nil {
		if hi <= lo || int(hi) > len(p.keys) {
			panic(corruption{errPart(p.name, "key offsets are malformed")})
		}
		check(p.secKeys, int(lo), int(hi-lo))
		if int(p.keys[lo]) > p.types.count() {
			panic(corruption{errPart(p.name, "a key names type %d of %d", p.keys[lo], p.types.count())})
		}
	}
	return p.keys[lo:hi]
}

// id is local's record id.
func (p *part) id(local uint32) string { return string(p.key(local)[1:]) }

// wordsOf returns local's known words.
func (p *part) wordsOf(local uint32) []int32 {
	if p.secWordOff != nil {
		check(p.secWordOff, int(local)*4, 8)
	}
	lo, hi := p.wordOff[local], p.wordOff[local+1]
	if p.secWords != nil {
		if hi < lo || int(hi) > len(p.words) {
			panic(corruption{errPart(p.name, "word offsets are malformed")})
		}
		check(p.secWords, int(lo)*4, int(hi-lo)*4)
	}
	return p.words[lo:hi]
}

// tagsOf returns local's tags.
func (p *part) tagsOf(local uint32) []string {
	i := sort.Search(len(p.tagDocs), func(i int) bool { return p.tagDocs[i] >= local })
	if i == len(p.tagDocs) || p.tagDocs[i] != local {
		return nil
	}
	return decodeTags(p.tagBlob[p.tagOff[i]:p.tagOff[i+1]])
}

func decodeTags(b []byte) []string {
	var out []string
	for len(b) > 0 {
		n := int(b[0])
		if 1+n > len(b) {
			break
		}
		out = append(out, string(b[1:1+n]))
		b = b[1+n:]
	}
	return out
}

func appendTags(b []byte, tags []string) []byte {
	for _, t := range tags {
		t = t[:min(len(t), 255)]
		b = append(b, byte(len(t)))
		b = append(b, t...)
	}
	return b
}

// find returns the live document whose key is key.
func (p *part) find(key []byte) (uint32, bool) {
	if p.delta != nil {
		d, ok := p.delta.byKey[string(key)]
		return d, ok
	}
	d, ok := p.lookup(key)
	return d, ok && p.alive(d)
}

// holds reports whether a segment has a document whose key is key, live
// or deleted: a deleted one's words and vector stay in the file until the
// segment is rewritten.
func (p *part) holds(key []byte) bool {
	if p.delta != nil {
		return false
	}
	_, ok := p.lookup(key)
	return ok
}

// lookup finds a segment's document whose key is key, live or deleted (a
// segment holds one document per key at most).
func (p *part) lookup(key []byte) (uint32, bool) {
	at := func(i int) uint32 {
		check(p.secSorted, i*4, 4)
		d := p.sortedKeys[i]
		if int(d) >= p.n {
			panic(corruption{errPart(p.name, "the key order names document %d of %d", d, p.n)})
		}
		return d
	}
	i := sort.Search(len(p.sortedKeys), func(i int) bool { return bytes.Compare(p.key(at(i)), key) >= 0 })
	if i < len(p.sortedKeys) {
		d := at(i)
		if bytes.Equal(p.key(d), key) {
			return d, true
		}
	}
	return 0, false
}

// localKey renders a key in the part's own type ids; false when the part
// has no record of that type.
func (p *part) localKey(buf []byte, typ string, id string) ([]byte, bool) {
	t, ok := p.types.lookup(typ)
	if !ok || t > 0xff {
		return nil, false
	}
	return append(append(buf[:0], byte(t)), id...), true
}

// corruption carries a failed lazy check out of a read (see View): the
// index stops answering from the damaged state and is rebuilt.
type corruption struct{ err error }

func check(s *segment.Section, off, n int) {
	if err := s.Check(off, n); err != nil {
		panic(corruption{err})
	}
}

// errPart wraps a structural problem found while opening a segment.
func errPart(name, format string, args ...any) error {
	return fmt.Errorf("%w: segment %s: %s", segment.ErrCorrupt, name, fmt.Sprintf(format, args...))
}
