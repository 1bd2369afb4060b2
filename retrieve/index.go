package retrieve

import (
	"context"
	"runtime"
	"strings"
	"sync"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
)

// Index mirrors the store's searchable records in memory for the hybrid
// provider: a lexical index, each record's scope and time, and each
// observation's neighbours in its capsule. It loads on first use and then
// follows the store's change log, so writes by any process show up at the
// next search. Content stays in the store; results are read back from it.
//
// A million records make a million docInfos, so every repeated string (a
// kind, a type, a capsule id, a scope value, a status) is held
// once and named by a small integer, and an id's string is shared by the
// document and the map that finds it.
type Index struct {
	mu      sync.RWMutex
	loaded  bool
	lastSeq int64

	docs []docInfo
	// meta is what the scope filter reads of each document, packed apart
	// from docs so that filtering a large index stays in cache.
	meta []docMeta
	// counts are the live documents per kind, for inner_voice's
	// diagnostics without a walk over every document.
	counts map[memory.VectorKind]kindCounts
	// byKey finds a live document by its key (see docInfo.key).
	byKey map[string]uint32
	// capsules holds, per interned capsule id, its observations' documents
	// by position (noDoc where there is none).
	capsules [][]uint32
	// tags holds the tags of the documents that have any (thoughts).
	tags map[uint32][]string

	scopes, capsuleIDs, kinds, types, statuses labels

	lex *lexical.Index
	// unindexed are documents removed since the last sync, whose postings
	// leave the lexical index together at its end.
	unindexed []uint32
	vectors   *vectorSet
	// embedder embeds queries in the space the vectors are in.
	embedder embed.Embedder
}

// noDoc marks an empty position in a capsule.
const noDoc = ^uint32(0)

// maxPosition bounds the capsule positions kept for neighbour lookups, so
// that one record claiming a huge position cannot make a huge slice.
const maxPosition = 1 << 20

// docInfo is one record, 72 bytes plus its id.
type docInfo struct {
	// key is the record's interned type (one byte) followed by its id.
	key string
	ts  int64
	// words are the record's known words without stopwords, when the
	// embedder has word vectors (soft matching).
	words   []int32
	capsule uint32 // interned capsule id (0 = none)
	pos     int32  // position in the capsule (-1 = none)
	status  uint32 // interned thought status
	kind    uint8  // interned VectorKind
	alive   bool
	private bool
	// asks says the record asks a question (holds a "?"): the record
	// after it takes Before of its text rather than BeforeOther.
	asks bool
}

// id is the record's id.
func (d *docInfo) id() string { return d.key[1:] }

// docMeta is a document's scope and state, 20 bytes.
type docMeta struct {
	scope [4]uint32
	flags uint8
}

// docMeta flags.
const (
	metaAlive uint8 = 1 << iota
	metaSearchable
	// metaVector: the document has a vector in the active space.
	metaVector
)

// kindCounts counts the live documents of one kind: all of them, the
// private ones, and of each those with a vector in the active space.
type kindCounts struct {
	alive, private, vec, privateVec int
}

// count adds delta to the counts of a document of kind.
func (x *Index) count(kind memory.VectorKind, private, vec bool, delta int) {
	c := x.counts[kind]
	c.alive += delta
	if private {
		c.private += delta
	}
	if vec {
		c.vec += delta
		if private {
			c.privateVec += delta
		}
	}
	x.counts[kind] = c
}

// searchable reports whether the tiered retrieval ranks records of kind
// (observations and summaries; thoughts and the knowledge graph are
// inner_voice's).
func searchable(kind memory.VectorKind) bool {
	return kind == memory.VectorObservation || kind == memory.VectorSummary
}

// kindOf is doc's kind.
func (x *Index) kindOf(doc uint32) memory.VectorKind {
	return memory.VectorKind(x.kinds.name(uint32(x.docs[doc].kind)))
}

// ref is doc's entity reference.
func (x *Index) ref(doc uint32) memory.EntityRef {
	d := &x.docs[doc]
	return memory.EntityRef{Type: memory.TargetType(x.types.name(uint32(d.key[0]))), ID: d.id()}
}

// docOf finds the live document of ref.
func (x *Index) docOf(ref memory.EntityRef) (uint32, bool) {
	t, ok := x.types.lookup(string(ref.Type))
	if !ok || t > 0xff {
		return 0, false
	}
	var b [64]byte
	k := append(append(b[:0], byte(t)), ref.ID...)
	doc, ok := x.byKey[string(k)] // no allocation: the compiler looks up without copying
	return doc, ok
}

// labels interns the values of one record attribute as small integers
// (0 is the empty value).
type labels struct {
	ids   map[string]uint32
	names []string
}

func (l *labels) id(s string) uint32 {
	if s == "" {
		return 0
	}
	if l.ids == nil {
		l.ids = map[string]uint32{}
		l.names = []string{""}
	}
	if id, ok := l.ids[s]; ok {
		return id
	}
	id := uint32(len(l.names))
	l.ids[s] = id
	l.names = append(l.names, s)
	return id
}

// lookup returns the id of s, or false when s was never interned.
func (l *labels) lookup(s string) (uint32, bool) {
	if s == "" {
		return 0, true
	}
	id, ok := l.ids[s]
	return id, ok
}

// name is the value interned as id.
func (l *labels) name(id uint32) string {
	if id == 0 || int(id) >= len(l.names) {
		return ""
	}
	return l.names[id]
}

// small interns s in l as a byte. The attributes held this way (kinds and
// types) take a handful of values fixed by the code; a 256th
// would be a bug, and panics rather than mixing records up.
func small(l *labels, s string) uint8 {
	id := l.id(s)
	if id > 0xff {
		panic("retrieve: more than 255 record kinds or types")
	}
	return uint8(id)
}

// NewIndex returns an empty index. With an embedder, it holds the
// records' vectors in the embedder's space (and only that space) and
// embeds queries.
func NewIndex(e embed.Embedder) *Index {
	x := &Index{byKey: map[string]uint32{}, tags: map[uint32][]string{}, counts: map[memory.VectorKind]kindCounts{},
		lex: lexical.New(), embedder: e}
	x.vectors = newVectorSet(x.space())
	return x
}

// embedQuery embeds a query in the active space.
func (x *Index) embedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := x.embedder.Embed(ctx, []string{text})
	if err == nil {
		err = embed.Check(x.embedder.Space(), []string{text}, vs)
	}
	if err != nil {
		return nil, memory.Wrap(memory.CodeEmbedderUnavailable, err, "embedding the query: %s", memory.Public(err).Message)
	}
	return vs[0], nil
}

// Sync brings the index up to the state r sees: a full load the first
// time, then the changes since the last sync.
func (x *Index) Sync(ctx context.Context, r memory.Reader) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	space := x.space()
	if !x.loaded {
		batch := make([]memory.IndexRecord, 0, loadBatch)
		last, err := r.LoadIndex(ctx, space, func(rec memory.IndexRecord) error {
			if batch = append(batch, rec); len(batch) == loadBatch {
				x.putAllLocked(batch)
				batch = batch[:0]
			}
			return nil
		})
		if err != nil {
			return err
		}
		x.putAllLocked(batch)
		x.loaded, x.lastSeq = true, last
		x.flushLocked()
		return nil
	}
	recs, last, err := r.ChangesSince(ctx, space, x.lastSeq)
	if err != nil {
		return err
	}
	x.putAllLocked(recs)
	x.lastSeq = last
	x.flushLocked()
	return nil
}

// loadBatch is the number of records a load analyses together.
const loadBatch = 4096

// analysis is what putLocked derives from a searchable record's text.
type analysis struct {
	terms []string
	words []int32
}

// analyse derives rec's analysis; records tiered retrieval does not rank
// have none.
func (x *Index) analyse(rec *memory.IndexRecord) analysis {
	if rec.Gone || !searchable(recordKind(rec)) {
		return analysis{}
	}
	a := analysis{terms: lexical.Terms(rec.Content)}
	if wv := x.wordVectors(); wv != nil {
		a.words = wv.WordIDs(rec.Content, isStopword)
	}
	return a
}

// putAllLocked puts recs in order. Their texts are analysed first, in
// parallel over the cores (tokenising and stemming are most of a load's
// work); the index itself changes in one goroutine, so documents get the
// same numbers as one by one.
func (x *Index) putAllLocked(recs []memory.IndexRecord) {
	if len(recs) < 64 {
		for i := range recs {
			x.putAnalysedLocked(recs[i], x.analyse(&recs[i]))
		}
		return
	}
	as := make([]analysis, len(recs))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(recs); i += workers {
				as[i] = x.analyse(&recs[i])
			}
		}()
	}
	wg.Wait()
	for i := range recs {
		x.putAnalysedLocked(recs[i], as[i])
	}
}

// recordKind is rec's kind: its Kind, or for observations and summaries
// its type.
func recordKind(rec *memory.IndexRecord) memory.VectorKind {
	if rec.Kind == "" {
		return memory.VectorKind(rec.Type)
	}
	return rec.Kind
}

// flushLocked ends a sync: removed documents leave the lexical index in one
// batch, and the vectors' approximate index is rebuilt if it is due.
func (x *Index) flushLocked() {
	if len(x.unindexed) > 0 {
		x.lex.Remove(x.unindexed...)
		x.unindexed = x.unindexed[:0]
	}
	x.vectors.maybeBuild()
}

// putLocked adds, replaces or removes one record.
func (x *Index) putLocked(rec memory.IndexRecord) { x.putAnalysedLocked(rec, x.analyse(&rec)) }

// putAnalysedLocked is putLocked with the record's text already analysed.
func (x *Index) putAnalysedLocked(rec memory.IndexRecord, a analysis) {
	key := string([]byte{small(&x.types, string(rec.Type))}) + rec.ID
	if old, ok := x.byKey[key]; ok {
		x.removeLocked(old)
		delete(x.byKey, key)
	}
	if rec.Gone {
		return
	}
	doc := uint32(len(x.docs))
	kind := recordKind(&rec)
	info := docInfo{key: key, ts: rec.TS, pos: -1, alive: true, private: rec.Private,
		kind: small(&x.kinds, string(kind)), status: x.statuses.id(rec.Status)}
	m := docMeta{flags: metaAlive}
	for i, k := range memory.ScopeKeys {
		m.scope[i] = x.scopes.id(rec.Scope.Get(k))
	}
	if searchable(kind) {
		m.flags |= metaSearchable
		x.lex.AddTerms(doc, a.terms)
		info.asks = strings.Contains(rec.Content, "?")
		info.words = a.words
	}
	if rec.CapsuleID != "" && rec.Position >= 0 && rec.Position < maxPosition {
		c := x.capsuleIDs.id(rec.CapsuleID)
		for int(c) >= len(x.capsules) {
			x.capsules = append(x.capsules, nil)
		}
		slots := x.capsules[c]
		for len(slots) <= rec.Position {
			slots = append(slots, noDoc)
		}
		slots[rec.Position] = doc
		x.capsules[c] = slots
		info.capsule, info.pos = c, int32(rec.Position)
	}
	if len(rec.Tags) > 0 {
		x.tags[doc] = rec.Tags
	}
	x.docs = append(x.docs, info)
	x.byKey[key] = doc
	vec := rec.Vector != nil && x.vectors.add(doc, rec.Vector)
	if vec {
		m.flags |= metaVector
	}
	x.meta = append(x.meta, m)
	x.count(kind, info.private, vec, 1)
}

// wordVectors is the embedder's word vectors, or nil when it has none.
func (x *Index) wordVectors() embed.WordVectors {
	wv, _ := x.embedder.(embed.WordVectors)
	return wv
}

func isStopword(w string) bool { return lexical.Stopwords[w] }

// space is the active vector space (zero without an embedder).
func (x *Index) space() memory.Space {
	if x.embedder == nil {
		return memory.Space{}
	}
	return x.embedder.Space()
}

func (x *Index) removeLocked(doc uint32) {
	d := &x.docs[doc]
	if !d.alive {
		return
	}
	d.alive = false
	x.count(x.kindOf(doc), d.private, x.meta[doc].flags&metaVector != 0, -1)
	x.meta[doc].flags &^= metaAlive | metaVector
	d.words = nil
	delete(x.tags, doc)
	x.unindexed = append(x.unindexed, doc)
	x.vectors.remove(doc)
	if d.capsule != 0 && x.capsules[d.capsule][d.pos] == doc {
		x.capsules[d.capsule][d.pos] = noDoc
	}
}

// scopeFilter is a query scope in interned form.
type scopeFilter struct {
	want  [4]uint32
	set   [4]bool
	empty bool // a dimension names a value no record has: nothing matches
}

func (x *Index) filterLocked(s memory.Scope) scopeFilter {
	var f scopeFilter
	for i, k := range memory.ScopeKeys {
		v := s.Get(k)
		if v == "" {
			continue
		}
		id, ok := x.scopes.lookup(v)
		if !ok {
			f.empty = true
		}
		f.want[i], f.set[i] = id, true
	}
	return f
}

// matchesScope reports whether an interned scope passes the filter.
func (f *scopeFilter) matchesScope(s *[4]uint32) bool {
	for i := range 4 {
		if f.set[i] && s[i] != f.want[i] {
			return false
		}
	}
	return true
}

// neighbour returns the document k positions away from doc in its capsule.
func (x *Index) neighbour(doc uint32, k int) (uint32, bool) {
	d := &x.docs[doc]
	if d.capsule == 0 {
		return 0, false
	}
	slots, p := x.capsules[d.capsule], int(d.pos)+k
	if p < 0 || p >= len(slots) || slots[p] == noDoc {
		return 0, false
	}
	n := slots[p]
	return n, x.docs[n].alive
}

// Len is the number of live documents.
func (x *Index) Len() int { return x.lex.Len() }
