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

// maintain expunges gone records, flushes the delta and merges segments
// while merges are due (those of at most mergeLimit documents; 0: any).
// Failures are logged and kept for Status; the index stays usable.
func (x *Index) maintain(ctx context.Context, mergeLimit int) {
	note := func(what string, err error) bool {
		if err == nil || ctx.Err() != nil {
			return err == nil
		}
		x.log.Warn("retrieval index maintenance failed", "step", what, "err", err.Error())
		x.lastErr.Store(&err)
		return false
	}
	if !note("expunge", x.expungeGone(ctx)) {
		return
	}
	if !note("flush", x.flush(ctx, false)) {
		return
	}
	for ctx.Err() == nil {
		merged, err := x.mergeOnce(ctx, mergeLimit)
		if !note("merge", err) || !merged {
			return
		}
	}
}

// commitBase reads the committed manifest and checks it is the one the
// state was loaded from: work based on an older state must not commit.
// The caller holds the writers' lock and mu.
func (x *Index) committedIsCurrent() (*manifest, bool, error) {
	m, err := readManifest(x.stg)
	if err != nil {
		return nil, false, err
	}
	st := x.st
	if st == nil || m == nil || st.man == nil || m.Generation != st.man.Generation {
		return m, false, nil
	}
	return m, true, nil
}

// flush writes the documents held in memory out as a segment and commits
// a manifest that reflects the state's change sequence number, with the
// segments' documents deleted since. Without force it does so only when
// due. It does nothing when another process holds the writers' lock or
// committed since the state was loaded (the next sync moves to that).
func (x *Index) flush(ctx context.Context, force bool) error {
	unlock, ok, err := x.stg.tryLock()
	if err != nil || !ok {
		return err
	}
	defer unlock()
	return x.flushLocked(ctx, force)
}

// flushWait flushes whatever this process holds, waiting for the
// writers' lock.
func (x *Index) flushWait(ctx context.Context) error {
	unlock, err := x.stg.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return x.flushLocked(ctx, true)
}

// flushLocked is flush under the writers' lock.
func (x *Index) flushLocked(ctx context.Context, force bool) error {
	x.mu.Lock()
	m, current, err := x.committedIsCurrent()
	st := x.st
	idle := st != nil && st.seq == st.man.Seq && st.memDocs() == 0 && st.killedSince == 0
	if err != nil || !current || idle || (!force && st.memDocs() < x.o.FlushDocs && st.killedSince < x.o.FlushDocs) {
		x.mu.Unlock()
		return err
	}
	var mem []*src
	deads := make([][]uint32, len(m.Segments))
	for i, p := range st.parts {
		if p.delta != nil {
			mem = append(mem, newSrc(p))
		} else if i < len(deads) {
			deads[i] = deadList(p)
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
	live := 0
	for _, s := range mem {
		for l := range s.p.n {
			if s.alive(uint32(l)) {
				live++
			}
		}
	}
	if live > 0 {
		ref, err := buildSegment(ctx, x.stg, segName("seg", next.Generation), mem, x.space, cents, 0)
		if err != nil {
			return err
		}
		next.Segments = append(next.Segments, ref)
		next.dead = append(next.dead, nil)
	}
	return x.commit(&next)
}

// commit writes m and removes the files it no longer names.
func (x *Index) commit(m *manifest) error {
	m.WrittenMs = time.Now().UnixMilli()
	if err := writeManifest(x.stg, m); err != nil {
		return err
	}
	x.gc(m)
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
func (x *Index) mergeOnce(ctx context.Context, limit int) (bool, error) {
	unlock, ok, err := x.stg.tryLock()
	if err != nil || !ok {
		return false, err
	}
	defer unlock()
	m, err := readManifest(x.stg)
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
	var srcs []*src
	var files []*segment.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	docs := 0
	for i := pl.lo; i < pl.hi; i++ {
		s := m.Segments[i]
		f, err := x.stg.open(s.Name, kindSegment)
		if err == nil && f == nil {
			err = fmt.Errorf("%w: %s is missing", segment.ErrCorrupt, s.Name)
		}
		if err != nil {
			return false, err
		}
		files = append(files, f)
		p, err := openPart(f, s.Name, x.space, m.dead[i])
		if err != nil {
			return false, err
		}
		// A merge reads every byte of its segments: verify them all.
		if err := f.Verify(); err != nil {
			return false, err
		}
		srcs = append(srcs, newSrc(p))
		docs += p.n - p.ndead
	}
	next := *m
	next.Generation++
	var cents [nGroups]*centroids
	var fresh []string
	for _, c := range m.Centroids {
		f, err := x.stg.open(c.Name, kindCentroids)
		if err != nil || f == nil {
			return false, fmt.Errorf("%w: centroids %s", segment.ErrCorrupt, c.Name)
		}
		files = append(files, f)
		cs, err := centroidsOf(f, c, x.space)
		if err != nil {
			return false, err
		}
		cents[c.Group] = cs
	}
	next.Centroids = nil
	for g := range nGroups {
		if pl.train[g] {
			c, ref, err := trainCentroids(x.stg, segName(fmt.Sprintf("cent%d", g), next.Generation), g, srcs, x.space)
			if err != nil {
				return false, err
			}
			cents[g] = c
			fresh = append(fresh, ref.Name)
			next.Centroids = append(next.Centroids, ref)
		} else {
			for _, c := range m.Centroids {
				if c.Group == g {
					next.Centroids = append(next.Centroids, c)
				}
			}
		}
	}
	ref, err := buildSegment(ctx, x.stg, segName("seg", next.Generation), srcs, x.space, cents, levelOf(docs, x.o.FlushDocs))
	if err != nil {
		for _, n := range fresh {
			x.stg.remove(n)
		}
		return false, err
	}
	next.Segments = slices.Concat(m.Segments[:pl.lo], []segRef{ref}, m.Segments[pl.hi:])
	next.dead = slices.Concat(m.dead[:pl.lo], [][]uint32{nil}, m.dead[pl.hi:])
	return true, x.commit(&next)
}

// expungeGone rewrites the segments that hold records gone from the store
// (forgotten, deleted), so their text leaves the files.
func (x *Index) expungeGone(ctx context.Context) error {
	x.mu.RLock()
	need := x.st != nil && len(x.st.expunge) > 0
	x.mu.RUnlock()
	if !need {
		return nil
	}
	unlock, err := x.stg.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	x.mu.Lock()
	m, current, err := x.committedIsCurrent()
	if err != nil || !current {
		x.mu.Unlock()
		return err
	}
	st := x.st
	type job struct {
		i   int
		src *src
	}
	var jobs []job
	for i, p := range st.parts {
		if p.delta == nil && st.expunge[p.name] {
			jobs = append(jobs, job{i, newSrc(p)})
		}
	}
	cents := st.cents
	st.expunge = map[string]bool{}
	x.mu.Unlock()

	next := *m
	next.Generation++
	next.Segments = slices.Clone(m.Segments)
	next.dead = slices.Clone(m.dead)
	for _, j := range jobs {
		ref, err := buildSegment(ctx, x.stg, segName("seg", next.Generation), []*src{j.src}, x.space, cents, m.Segments[j.i].Level)
		if err != nil {
			return err
		}
		next.Segments[j.i], next.dead[j.i] = ref, nil
	}
	return x.commit(&next)
}

// gc removes the files m does not name: segments merged away, centroids
// replaced, temporary files of writers that died. On Unix a process that
// still maps a removed file keeps reading it; on Windows the removal fails
// while it does, and a later commit removes it. The caller holds the
// writers' lock.
func (x *Index) gc(m *manifest) {
	keep := map[string]bool{manifestName: true, "LOCK": true}
	for _, s := range m.Segments {
		keep[s.Name] = true
	}
	for _, c := range m.Centroids {
		keep[c.Name] = true
	}
	names, err := x.stg.list()
	if err != nil {
		return
	}
	for _, n := range names {
		if !keep[n] {
			x.stg.remove(n)
		}
	}
}
