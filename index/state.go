package index

import "github.com/cairnhq/cairn/memory"

// state is one consistent index: the mapped segments of a manifest, the
// delta replayed since, and what joins them (global label ids, capsule
// positions, statistics).
type state struct {
	space memory.Space
	dim   int
	// parts are the segments, oldest first, then the delta.
	parts []*part
	delta *part
	// seq is the store's change sequence number the state reflects, and
	// seqRef that change's fingerprint.
	seq    int64
	seqRef string
	// killedSince counts the segments' documents deleted since the
	// manifest.
	killedSince int
	// man is the manifest the segments come from (nil: none yet).
	man *manifest

	kinds, types, statuses labels
	capIDs                 labels
	// slots holds per global capsule its documents by position.
	slots [][]uint32

	lexDocs  int
	lexTotal float64
	// codeDocs and codeTotal are the code entities' statistics.
	codeDocs  int
	codeTotal float64
	counts    map[memory.VectorKind]kindCounts
	cents     [nGroups]*centroids

	// expunge names the segments that hold a record gone from the store.
	expunge map[string]bool
}

// newState returns a state of the given segments (their bases set, dead
// documents marked) with an empty delta after them.
func newState(space memory.Space, man *manifest, segs []*part, cents [nGroups]*centroids) *state {
	st := &state{space: space, dim: space.Dim, man: man, counts: map[memory.VectorKind]kindCounts{},
		expunge: map[string]bool{}, cents: cents}
	if man != nil {
		st.seq, st.seqRef = man.Seq, man.SeqRef
	}
	var base uint32
	for _, p := range segs {
		p.base = base
		base += uint32(p.n)
		st.parts = append(st.parts, p)
		st.translate(p)
		st.lexDocs += p.lexDocs
		st.lexTotal += p.lexTotal
		st.codeDocs += p.codeDocs
		st.codeTotal += p.codeTotal
		for k, c := range p.counts {
			sc := st.counts[k]
			sc.Alive, sc.Private, sc.Vec, sc.PrivateVec = sc.Alive+c.Alive, sc.Private+c.Private, sc.Vec+c.Vec, sc.PrivateVec+c.PrivateVec
			st.counts[k] = sc
		}
		for local := range p.n {
			c := p.capsule[local]
			if c == 0 || !p.alive(uint32(local)) {
				continue
			}
			if pos := p.pos[local]; pos >= 0 && pos < maxPosition {
				st.setSlot(p.capG[c], int(pos), p.base+uint32(local))
			}
		}
	}
	st.delta = newDelta(base)
	st.parts = append(st.parts, st.delta)
	st.translate(st.delta)
	return st
}

// translate extends p's translations to every label it holds.
func (st *state) translate(p *part) {
	for i := len(p.kindG); i <= p.kinds.count(); i++ {
		p.kindG = append(p.kindG, uint8(st.kinds.id(p.kinds.name(uint32(i)))))
	}
	for i := len(p.typeG); i <= p.types.count(); i++ {
		p.typeG = append(p.typeG, uint8(st.types.id(p.types.name(uint32(i)))))
	}
	for i := len(p.statusG); i <= p.statuses.count(); i++ {
		p.statusG = append(p.statusG, st.statuses.id(p.statuses.name(uint32(i))))
	}
	for i := len(p.capG); i <= p.capsules.count(); i++ {
		p.capG = append(p.capG, st.capIDs.id(p.capsules.name(uint32(i))))
	}
}

// docs is the number of global document numbers in use.
func (st *state) docs() int { return int(st.delta.base) + st.delta.n }

// partOf returns the part holding global document doc.
func (st *state) partOf(doc uint32) *part {
	if doc >= st.delta.base {
		return st.delta
	}
	return st.parts[st.partNumber(doc)]
}

// freeze ends the delta: it stays searchable but takes no more
// documents (a flush writes it out meanwhile); a new delta follows it.
func (st *state) freeze() {
	if st.delta.n == 0 {
		return
	}
	st.delta = newDelta(st.delta.base + uint32(st.delta.n))
	st.parts = append(st.parts, st.delta)
	st.translate(st.delta)
}

// memDocs is the live documents held in memory (the delta and frozen
// deltas not yet replaced by a segment).
func (st *state) memDocs() int {
	n := 0
	for _, p := range st.parts {
		if p.delta != nil {
			n += p.n - p.ndead
		}
	}
	return n
}
