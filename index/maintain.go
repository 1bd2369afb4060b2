package index

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
)

// deadShare is the share of deleted documents from which a segment is
// rewritten without them.
const deadShare = 0.25

// levelOf is the merge level of a segment of docs documents: segments of
// one level are within a factor mergeFactor of each other in size.
func levelOf(docs, flushDocs int) int {
	l := 0
	for size := flushDocs * mergeFactor; docs >= size; size *= mergeFactor {
		l++
	}
	return l
}

// due reports whether maintenance has work. The caller holds mu.
func (x *Index) due() bool {
	st := x.st
	if st == nil || st.man == nil {
		return false
	}
	if st.memDocs() >= x.o.FlushDocs || st.killedSince >= x.o.FlushDocs || len(st.expunge) > 0 {
		return true
	}
	_, ok := planMerge(st.man, x.o.FlushDocs, 0, x.space, x.o.IVFThreshold)
	return ok
}

// LargeMergeDue reports whether a merge is due that a process without
// Background leaves undone at Close (larger than ShortMergeDocs).
func (x *Index) LargeMergeDue() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.st == nil || x.st.man == nil || x.o.Background {
		return false
	}
	if _, short := planMerge(x.st.man, x.o.FlushDocs, x.o.ShortMergeDocs, x.space, x.o.IVFThreshold); short {
		return false
	}
	_, any := planMerge(x.st.man, x.o.FlushDocs, 0, x.space, x.o.IVFThreshold)
	return any
}

// startMaintenance runs maintain in a goroutine unless one runs.
func (x *Index) startMaintenance() {
	if !x.maintaining.CompareAndSwap(false, true) {
		return
	}
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer x.maintaining.Store(false)
		x.maintain(x.ctx, 0)
	}()
}

// maintain writes out the documents held in memory (rewriting the
// segments that hold records gone from the store in the same commit) and
// merges segments while merges are due (those of at most mergeLimit
// documents; 0: any). Failures are logged and kept for Status; damage met
// in the files marks them for a rebuild at the next Sync. The index stays
// usable either way.
func (x *Index) maintain(ctx context.Context, mergeLimit int) {
	stg := x.store()
	note := func(what string, err error) bool {
		if err == nil || ctx.Err() != nil {
			return err == nil
		}
		x.log.Warn("retrieval index maintenance failed", "step", what, "err", err.Error())
		x.lastErr.Store(&err)
		return false
	}
	if !note("flush", x.guard(stg, func() error { return x.flush(ctx, stg, false) })) {
		return
	}
	for ctx.Err() == nil {
		var merged bool
		err := x.guard(stg, func() (err error) {
			merged, err = x.mergeOnce(ctx, stg, mergeLimit)
			return err
		})
		if !note("merge", err) || !merged {
			return
		}
	}
}

// guard runs fn, turning damage it meets in the files into an error and a
// mark that the next Sync rebuilds them.
func (x *Index) guard(stg storage, fn func() error) (err error) {
	defer func() {
		if c, ok := recoverCorruption(recover()); ok {
			id := ""
			if m, merr := readManifest(stg); merr == nil && m != nil {
				id = m.ID
			}
			x.markDamaged(id, c)
			err = memory.Wrap(memory.CodeDBError, c, "a segment of the retrieval index is damaged")
		}
	}()
	return fn()
}

// committedIsCurrent reads the committed manifest and checks it is the one
// the state was loaded from: work based on an older state must not
// commit. The caller holds the writers' lock and mu.
func (x *Index) committedIsCurrent(stg storage) (*manifest, bool, error) {
	m, err := readManifest(stg)
	if err != nil {
		return nil, false, err
	}
	st := x.st
	if st == nil || m == nil || st.man == nil || m.ID != st.man.ID {
		return m, false, nil
	}
	return m, true, nil
}

// flush writes what this process holds out, if it is due (or force) and
// no other process holds the writers' lock; see flushLocked.
func (x *Index) flush(ctx context.Context, stg storage, force bool) error {
	unlock, ok, err := stg.tryLock()
	if err != nil || !ok {
		return err
	}
	defer unlock()
	return x.flushLocked(ctx, stg, force)
}

// flushLocked commits a manifest that reflects the state's change
// sequence number: the documents held in memory written out as a new
// segment, the segments' documents deleted since, and every segment that
// holds a record gone from the store (forgotten, deleted) rewritten
// without it, so that no commit moves past a forgetting whose text is
// still in a file. Without force it does so only when due. It does
// nothing when the state is not the committed one (the next Sync moves
// to that). The caller holds the writers' lock.
func (x *Index) flushLocked(ctx context.Context, stg storage, force bool) error {
	x.mu.Lock()
	m, current, err := x.committedIsCurrent(stg)
	st := x.st
	if err != nil || !current {
		x.mu.Unlock()
		return err
	}
	idle := st.seq == st.man.Seq && st.memDocs() == 0 && st.killedSince == 0 && len(st.expunge) == 0
	due := st.memDocs() >= x.o.FlushDocs || st.killedSince >= x.o.FlushDocs || len(st.expunge) > 0
	if idle || !(force || due) {
		x.mu.Unlock()
		return nil
	}
	var mem []*src
	deads := make([][]uint32, len(m.Segments))
	rewrite := map[int]*src{}
	for i, p := range st.parts {
		switch {
		case p.delta != nil:
			mem = append(mem, newSrc(p))
		case i < len(deads):
			deads[i] = deadList(p)
			if st.expunge[p.name] {
				rewrite[i] = newSrc(p)
			}
		}
	}
	seq, seqRef, cents := st.seq, st.seqRef, st.cents
	st.freeze()
	x.mu.Unlock()

	next := *m
	next.Generation++
	next.Seq, next.SeqRef = seq, seqRef
	next.Segments = slices.Clone(m.Segments)
	next.dead = deads
	var written []string
	fail := func(err error) error {
		for _, n := range written {
			stg.remove(n)
		}
		return err
	}
	for i, s := range rewrite {
		ref, err := buildSegment(ctx, stg, segName("seg", next.Generation), []*src{s}, x.space, cents, m.Segments[i].Level)
		if err != nil {
			return fail(err)
		}
		written = append(written, ref.Name)
		next.Segments[i], next.dead[i] = ref, nil
	}
	live := 0
	for _, s := range mem {
		for l := range s.p.n {
			if s.alive(uint32(l)) {
				live++
			}
		}
	}
	if live > 0 {
		ref, err := buildSegment(ctx, stg, segName("seg", next.Generation), mem, x.space, cents, 0)
		if err != nil {
			return fail(err)
		}
		written = append(written, ref.Name)
		next.Segments = append(next.Segments, ref)
		next.dead = append(next.dead, nil)
	}
	if err := commit(stg, &next); err != nil {
		return fail(err)
	}
	return nil
}

// commit writes m (a new id, the time) and removes the files it no longer
// names. The caller holds the writers' lock.
func commit(stg storage, m *manifest) error {
	m.WrittenMs = time.Now().UnixMilli()
	if err := writeManifest(stg, m); err != nil {
		return err
	}
	gc(stg, m)
	return nil
}

// deadList lists a segment's deleted documents, ascending.
func deadList(p *part) []uint32 {
	var out []uint32
	for w, bits := range p.dead {
		for bits != 0 {
			b := uint32(0)
			for bits&(1<<b) == 0 {
				b++
			}
			out = append(out, uint32(w)*64+b)
			bits &^= 1 << b
		}
	}
	return out
}

// plan is a merge: segments [lo, hi) of the manifest become one; train
// lists the groups whose centroids are trained (again) first, which makes
// the merge take every segment.
type plan struct {
	lo, hi int
	train  [nGroups]bool
}

// planMerge picks the next merge of m, preferring the cheapest: a segment
// holding deadShare deleted documents is rewritten; mergeFactor adjacent
// segments of one level become one; a vector group that outgrew its
// centroids (or has none and reached IVFThreshold) is compacted whole
// under new ones. Merges of more than limit documents (0: no limit) are
// left out.
func planMerge(m *manifest, flushDocs, limit int, space memory.Space, ivfThreshold int) (plan, bool) {
	docs := func(i int) int { return m.Segments[i].Docs }
	within := func(p plan) bool {
		if limit <= 0 {
			return true
		}
		n := 0
		for i := p.lo; i < p.hi; i++ {
			n += docs(i)
		}
		return n <= limit
	}
	// Vector groups that need centroids.
	if space.Dim > 0 {
		var full plan
		full.hi = len(m.Segments)
		for g := range nGroups {
			rows := 0
			for _, s := range m.Segments {
				rows += s.Vectors[g]
			}
			var cur *centRef
			for i := range m.Centroids {
				if m.Centroids[i].Group == g {
					cur = &m.Centroids[i]
				}
			}
			if (cur == nil && rows >= ivfThreshold) || (cur != nil && rows >= retrainFactor*cur.Trained) {
				full.train[g] = true
			}
		}
		if full.train != [nGroups]bool{} && within(full) {
			return full, true
		}
	}
	best, found := plan{}, false
	cost := func(p plan) int {
		n := 0
		for i := p.lo; i < p.hi; i++ {
			n += docs(i)
		}
		return n
	}
	consider := func(p plan) {
		if within(p) && (!found || cost(p) < cost(best)) {
			best, found = p, true
		}
	}
	for i := range m.Segments {
		if d := len(m.dead[i]); d > 0 && float64(d) >= deadShare*float64(docs(i)) {
			consider(plan{lo: i, hi: i + 1})
		}
	}
	for i := 0; i+mergeFactor <= len(m.Segments); i++ {
		l := levelOf(docs(i)-len(m.dead[i]), flushDocs)
		same := true
		for j := i + 1; j < i+mergeFactor; j++ {
			if levelOf(docs(j)-len(m.dead[j]), flushDocs) != l {
				same = false
				break
			}
		}
		if same {
			consider(plan{lo: i, hi: i + mergeFactor})
		}
	}
	return best, found
}

// mergeOnce runs the next merge planned for the committed manifest. It
// reports whether it merged.
func (x *Index) mergeOnce(ctx context.Context, stg storage, limit int) (bool, error) {
	unlock, ok, err := stg.tryLock()
	if err != nil || !ok {
		return false, err
	}
	defer unlock()
	m, err := readManifest(stg)
	if err != nil || m == nil || m.Format != Format || m.Space != x.space {
		return false, err
	}
	pl, ok := planMerge(m, x.o.FlushDocs, limit, x.space, x.o.IVFThreshold)
	if !ok {
		return false, nil
	}
	if crashHook != nil {
		crashHook("merge")
	}
	var files []*segment.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	srcs, docs, err := x.mergeSources(stg, m, pl, &files)
	if err != nil {
		return false, err
	}
	next := *m
	next.Generation++
	cents, fresh, err := x.mergeCentroids(stg, m, &pl, srcs, &next, &files)
	if err != nil {
		return false, err
	}
	ref, err := buildSegment(ctx, stg, segName("seg", next.Generation), srcs, x.space, cents, levelOf(docs, x.o.FlushDocs))
	if err != nil {
		for _, n := range fresh {
			stg.remove(n)
		}
		return false, err
	}
	next.Segments = slices.Concat(m.Segments[:pl.lo], []segRef{ref}, m.Segments[pl.hi:])
	next.dead = slices.Concat(m.dead[:pl.lo], [][]uint32{nil}, m.dead[pl.hi:])
	if err := commit(stg, &next); err != nil {
		stg.remove(ref.Name)
		for _, n := range fresh {
			stg.remove(n)
		}
		return false, err
	}
	return true, nil
}

// mergeSources maps the segments a merge takes (adding them to files),
// verified whole, and counts their live documents.
func (x *Index) mergeSources(stg storage, m *manifest, pl plan, files *[]*segment.File) ([]*src, int, error) {
	var srcs []*src
	docs := 0
	for i := pl.lo; i < pl.hi; i++ {
		s := m.Segments[i]
		f, err := stg.open(s.Name, kindSegment)
		if err == nil && f == nil {
			err = fmt.Errorf("%w: %s is missing", segment.ErrCorrupt, s.Name)
		}
		if err != nil {
			return nil, 0, err
		}
		*files = append(*files, f)
		// A merge reads every byte of its segments: verify them all first.
		if err := f.Verify(); err != nil {
			panic(corruption{err})
		}
		p, err := openPart(f, s.Name, x.space, m.dead[i])
		if err != nil {
			return nil, 0, err
		}
		srcs = append(srcs, newSrc(p))
		docs += p.n - p.ndead
	}
	return srcs, docs, nil
}

// mergeCentroids maps the manifest's centroid sets (adding them to
// files) and trains the groups' the plan retrains, when enough of their
// rows are live; it puts the sets in next and returns them with the
// names of the files it wrote.
func (x *Index) mergeCentroids(stg storage, m *manifest, pl *plan, srcs []*src, next *manifest, files *[]*segment.File) ([nGroups]*centroids, []string, error) {
	var cents [nGroups]*centroids
	var fresh []string
	for _, c := range m.Centroids {
		f, err := stg.open(c.Name, kindCentroids)
		if err != nil || f == nil {
			return cents, nil, fmt.Errorf("%w: centroids %s", segment.ErrCorrupt, c.Name)
		}
		*files = append(*files, f)
		cs, err := centroidsOf(f, c, x.space)
		if err != nil {
			return cents, nil, err
		}
		cents[c.Group] = cs
	}
	next.Centroids = nil
	for g := range nGroups {
		if pl.train[g] && liveRows(srcs, g) < x.o.IVFThreshold {
			// The rows counted were mostly deleted: nothing to train on.
			pl.train[g] = false
		}
		if !pl.train[g] {
			for _, c := range m.Centroids {
				if c.Group == g {
					next.Centroids = append(next.Centroids, c)
				}
			}
			continue
		}
		c, ref, err := trainCentroids(stg, segName(fmt.Sprintf("cent%d", g), next.Generation), g, srcs, x.space)
		if err != nil {
			return cents, fresh, err
		}
		cents[g] = c
		fresh = append(fresh, ref.Name)
		next.Centroids = append(next.Centroids, ref)
	}
	return cents, fresh, nil
}

// liveRows counts the live vectors of a group across srcs.
func liveRows(srcs []*src, g int) int {
	n := 0
	for _, s := range srcs {
		vg := &s.p.groups[g]
		for r := range vg.rows {
			if s.alive(vg.ids[r]) {
				n++
			}
		}
	}
	return n
}

// gc removes the files m does not name: segments merged away, centroids
// replaced, temporary files of writers that died. On Unix a process that
// still maps a removed file keeps reading it; on Windows the removal fails
// while it does, and a later commit removes it. The caller holds the
// writers' lock.
func gc(stg storage, m *manifest) {
	keep := map[string]bool{manifestName: true, "LOCK": true}
	for _, s := range m.Segments {
		keep[s.Name] = true
	}
	for _, c := range m.Centroids {
		keep[c.Name] = true
	}
	names, err := stg.list()
	if err != nil {
		return
	}
	for _, n := range names {
		if !keep[n] {
			stg.remove(n)
		}
	}
}
