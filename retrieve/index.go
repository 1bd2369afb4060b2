package retrieve

import (
	"context"
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
	byRef  map[memory.EntityRef]uint32
	// capsules maps a capsule to its observations' documents by position.
	capsules map[string]map[int]uint32
	scopes   interner
	lex      *lexical.Index
	vectors  *vectorSet
	// embedder embeds queries in the space the vectors are in.
	embedder embed.Embedder
}

type docInfo struct {
	kind    memory.VectorKind
	ref     memory.EntityRef
	ts      int64
	scope   [4]uint32 // interned sessionId, repoId, agentId, userId (0 = none)
	capsule string
	pos     int
	alive   bool
	// Thought attributes, for inner_voice's filters and trust tiers.
	origin  memory.Origin
	tags    []string
	private bool
	status  string
	// words are the record's known words without stopwords, when the
	// embedder has word vectors (soft matching).
	words []int32
	// asks says the record asks a question (holds a "?"): the record
	// after it takes Before of its text rather than BeforeOther.
	asks bool
}

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

// searchable reports whether the tiered retrieval ranks this record
// (observations and summaries; thoughts and the knowledge graph are
// inner_voice's).
func (d *docInfo) searchable() bool {
	return d.kind == memory.VectorObservation || d.kind == memory.VectorSummary
}

// interner maps scope values to small integers (0 is the empty value).
type interner struct {
	ids map[string]uint32
}

func (in *interner) id(s string) uint32 {
	if s == "" {
		return 0
	}
	if in.ids == nil {
		in.ids = map[string]uint32{}
	}
	if id, ok := in.ids[s]; ok {
		return id
	}
	id := uint32(len(in.ids) + 1)
	in.ids[s] = id
	return id
}

// lookup returns the id of s, or false when s was never interned.
func (in *interner) lookup(s string) (uint32, bool) {
	if s == "" {
		return 0, true
	}
	id, ok := in.ids[s]
	return id, ok
}

// NewIndex returns an empty index. With an embedder, it holds the
// records' vectors in the embedder's space (and only that space) and
// embeds queries.
func NewIndex(e embed.Embedder) *Index {
	x := &Index{byRef: map[memory.EntityRef]uint32{}, capsules: map[string]map[int]uint32{}, counts: map[memory.VectorKind]kindCounts{},
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
		last, err := r.LoadIndex(ctx, space, func(rec memory.IndexRecord) error {
			x.putLocked(rec)
			return nil
		})
		if err != nil {
			return err
		}
		x.loaded, x.lastSeq = true, last
		x.vectors.maybeBuild()
		return nil
	}
	recs, last, err := r.ChangesSince(ctx, space, x.lastSeq)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		x.putLocked(rec)
	}
	x.lastSeq = last
	x.vectors.maybeBuild()
	return nil
}

// putLocked adds, replaces or removes one record.
func (x *Index) putLocked(rec memory.IndexRecord) {
	ref := memory.EntityRef{Type: rec.Type, ID: rec.ID}
	if old, ok := x.byRef[ref]; ok {
		x.removeLocked(old)
		delete(x.byRef, ref)
	}
	if rec.Gone {
		return
	}
	doc := uint32(len(x.docs))
	kind := rec.Kind
	if kind == "" {
		kind = memory.VectorKind(rec.Type)
	}
	info := docInfo{kind: kind, ref: ref, ts: rec.TS, capsule: rec.CapsuleID, pos: rec.Position, alive: true,
		origin: rec.Origin, tags: rec.Tags, private: rec.Private, status: rec.Status}
	for i, k := range memory.ScopeKeys {
		info.scope[i] = x.scopes.id(rec.Scope.Get(k))
	}
	x.docs = append(x.docs, info)
	m := docMeta{scope: info.scope, flags: metaAlive}
	if info.searchable() {
		m.flags |= metaSearchable
	}
	x.meta = append(x.meta, m)
	x.byRef[ref] = doc
	if rec.CapsuleID != "" && rec.Position >= 0 {
		m := x.capsules[rec.CapsuleID]
		if m == nil {
			m = map[int]uint32{}
			x.capsules[rec.CapsuleID] = m
		}
		m[rec.Position] = doc
	}
	if info.searchable() {
		x.lex.Add(doc, rec.Content)
		x.docs[doc].asks = strings.Contains(rec.Content, "?")
		if wv := x.wordVectors(); wv != nil {
			x.docs[doc].words = wv.WordIDs(rec.Content, isStopword)
		}
	}
	vec := rec.Vector != nil && x.vectors.add(doc, rec.Vector)
	if vec {
		x.meta[doc].flags |= metaVector
	}
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
	x.count(d.kind, d.private, x.meta[doc].flags&metaVector != 0, -1)
	x.meta[doc].flags &^= metaAlive | metaVector
	d.words = nil
	x.lex.Remove(doc)
	x.vectors.remove(doc)
	if m := x.capsules[d.capsule]; m != nil && m[d.pos] == doc {
		delete(m, d.pos)
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
	if d.capsule == "" || d.pos < 0 {
		return 0, false
	}
	n, ok := x.capsules[d.capsule][d.pos+k]
	return n, ok && x.docs[n].alive
}

// Len is the number of live documents.
func (x *Index) Len() int { return x.lex.Len() }
