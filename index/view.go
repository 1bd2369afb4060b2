package index

import (
	"bytes"
	"errors"
	"slices"
	"sort"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
)

// ErrCorrupt says a read met a damaged segment. The read returned no
// answer; Repair rebuilds the index.
var ErrCorrupt = segment.ErrCorrupt

// View reads one consistent state of the index. It is valid only during
// the function Read calls. Documents are global numbers below Docs().
type View struct {
	st *state
	// ivfFrom is the index's IVFThreshold.
	ivfFrom int
}

// Read calls fn with a view of the current state, under the read lock
// (syncs wait). A damaged segment met while reading ends fn early and Read
// returns an error that wraps ErrCorrupt.
func (x *Index) Read(fn func(v *View) error) (err error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.st == nil {
		return memory.Errorf(memory.CodeInternal, "the retrieval index is read before it is synced")
	}
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(corruption)
			if !ok {
				panic(r)
			}
			x.log.Error("a segment of the retrieval index is damaged; it will be rebuilt", "err", c.err.Error())
			err = memory.Wrap(memory.CodeDBError, c.err, "the retrieval index is damaged and must be rebuilt")
		}
	}()
	return fn(&View{st: x.st, ivfFrom: x.o.IVFThreshold})
}

// IsCorrupt reports whether err says the index is damaged.
func IsCorrupt(err error) bool { return errors.Is(err, ErrCorrupt) }

// Docs is one more than the highest document number: the length a
// per-document scratch slice needs.
func (v *View) Docs() int { return v.st.docs() }

// Live is the number of live searchable documents (BM25's N).
func (v *View) Live() int { return v.st.lexDocs }

// loc returns doc's part and local number, its arrays verified.
func (v *View) loc(doc uint32) (*part, uint32) {
	p := v.st.partOf(doc)
	l := doc - p.base
	p.ensureDoc(l)
	return p, l
}

// TS is doc's time (Unix ms).
func (v *View) TS(doc uint32) int64 {
	p, l := v.loc(doc)
	return p.ts[l]
}

// Asks reports whether doc's text holds a "?".
func (v *View) Asks(doc uint32) bool {
	p, l := v.loc(doc)
	return p.meta[l].attr&attrAsks != 0
}

// Words are doc's known words (soft matching).
func (v *View) Words(doc uint32) []int32 {
	p, l := v.loc(doc)
	return p.wordsOf(l)
}

// ID is doc's record id.
func (v *View) ID(doc uint32) string {
	p, l := v.loc(doc)
	return p.id(l)
}

// CompareIDs orders documents a and b by their record ids.
func (v *View) CompareIDs(a, b uint32) int {
	pa, la := v.loc(a)
	pb, lb := v.loc(b)
	return bytes.Compare(pa.key(la)[1:], pb.key(lb)[1:])
}

// Ref is doc's record type and id.
func (v *View) Ref(doc uint32) memory.EntityRef {
	p, l := v.loc(doc)
	k := p.key(l)
	return memory.EntityRef{Type: memory.TargetType(v.st.types.name(uint32(p.typeG[k[0]]))), ID: string(k[1:])}
}

// DocOf finds the live document of ref.
func (v *View) DocOf(ref memory.EntityRef) (uint32, bool) { return v.st.find(string(ref.Type), ref.ID) }

// Capsule is doc's capsule as a number shared by the capsule's documents
// (0: none).
func (v *View) Capsule(doc uint32) uint32 {
	p, l := v.loc(doc)
	return p.capG[p.capsule[l]] // label ids start at 1; 0 is none
}

// Capsules is the number of capsules: Capsule gives each a number in
// [1, Capsules()].
func (v *View) Capsules() int { return v.st.capIDs.count() }

// Doc is what inner_voice reads of a document.
type Doc struct {
	Kind    memory.VectorKind
	Status  string
	Private bool
	Vector  bool
	TS      int64
}

// Doc returns doc's attributes.
func (v *View) Doc(doc uint32) Doc {
	p, l := v.loc(doc)
	m := &p.meta[l]
	return Doc{
		Kind: memory.VectorKind(v.st.kinds.name(uint32(p.kindG[m.kind()]))), Status: v.st.statuses.name(p.statusG[m.status()]),
		Private: m.attr&attrPrivate != 0, Vector: m.attr&attrVector != 0, TS: p.ts[l],
	}
}

// Tags are doc's tags.
func (v *View) Tags(doc uint32) []string {
	p, l := v.loc(doc)
	return p.tagsOf(l)
}

// Counts are the live documents of kind.
func (v *View) Counts(kind memory.VectorKind) (alive, private, vec, privateVec int) {
	c := v.st.counts[kind]
	return c.Alive, c.Private, c.Vec, c.PrivateVec
}

// Each calls fn for every live document of kind, in order.
func (v *View) Each(kind memory.VectorKind, fn func(doc uint32)) {
	kid, ok := v.st.kinds.lookup(string(kind))
	if !ok {
		return
	}
	for _, p := range v.st.parts {
		p.ensureDocs(0, uint32(p.n))
		for l := range p.n {
			if p.alive(uint32(l)) && uint32(p.kindG[p.meta[l].kind()]) == kid {
				fn(p.base + uint32(l))
			}
		}
	}
}

// HasTag reports whether some live document carries tag.
func (v *View) HasTag(tag string) bool {
	for _, p := range v.st.parts {
		for i, d := range p.tagDocs {
			if p.alive(d) && slices.Contains(decodeTags(p.tagBlob[p.tagOff[i]:p.tagOff[i+1]]), tag) {
				return true
			}
		}
	}
	return false
}

// Filter selects the searchable live documents of a scope (every key
// given must match), leaving out excluded ones.
type Filter struct {
	st       *state
	parts    []partFilter
	excluded map[uint32]bool
	// Empty says no document can match (a value no record has).
	Empty bool
	// code selects code entities instead of searchable memories.
	code bool
}

type partFilter struct {
	want [4]uint32
	set  [4]bool
	none bool // the part has no document of the scope
	// lo and hi bound the part's documents that may match: a repository's
	// cluster in a segment, else all; ci is the cluster (-1: all).
	lo, hi uint32
	ci     int
}

// Filter compiles a scope filter. A scope with a repository reads, in
// each segment, only that repository's documents (segments keep them
// together).
func (v *View) Filter(s memory.Scope) *Filter {
	f := &Filter{st: v.st, parts: make([]partFilter, len(v.st.parts)), Empty: true}
	for pi, p := range v.st.parts {
		pf := &f.parts[pi]
		pf.lo, pf.hi, pf.ci = 0, uint32(p.n), -1
		for i, k := range memory.ScopeKeys {
			val := s.Get(k)
			if val == "" {
				continue
			}
			id, ok := p.scopes.lookup(val)
			if !ok {
				pf.none = true
			}
			pf.want[i], pf.set[i] = id, true
		}
		if !pf.none && pf.set[1] && p.clusters != nil {
			lo, hi, ci, ok := p.cluster(pf.want[1])
			if !ok {
				pf.none = true
			}
			pf.lo, pf.hi, pf.ci = lo, hi, ci
		}
		if pf.none || pf.lo == pf.hi {
			pf.none = true
			continue
		}
		p.ensureDocs(pf.lo, pf.hi)
		f.Empty = false
	}
	return f
}

// Exclude leaves doc out.
func (f *Filter) Exclude(doc uint32) {
	if f.excluded == nil {
		f.excluded = map[uint32]bool{}
	}
	f.excluded[doc] = true
}

// allowIn reports whether local document l of part pi passes.
func (f *Filter) allowIn(pi int, p *part, l uint32) bool {
	pf := &f.parts[pi]
	if pf.none || l < pf.lo || l >= pf.hi || !p.alive(l) {
		return false
	}
	m := &p.meta[l]
	if f.code {
		if m.attr&attrCode == 0 {
			return false
		}
	} else if m.attr&attrSearchable == 0 {
		return false
	}
	for i := range 4 {
		if pf.set[i] && m.scope[i] != pf.want[i] {
			return false
		}
	}
	return f.excluded == nil || !f.excluded[p.base+l]
}

// Allow reports whether doc passes.
func (f *Filter) Allow(doc uint32) bool {
	pi := f.st.partNumber(doc)
	p := f.st.parts[pi]
	return f.allowIn(pi, p, doc-p.base)
}

// partNumber returns the number of the part holding doc (its place in
// st.parts).
func (st *state) partNumber(doc uint32) int {
	if doc >= st.delta.base {
		return len(st.parts) - 1
	}
	return sort.Search(len(st.parts), func(i int) bool { return st.parts[i].base > doc }) - 1
}
