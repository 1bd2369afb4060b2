package index

import (
	"context"
	"errors"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// Status describes the index as this process sees it.
type Status struct {
	// Dir is where the files are; InMemory says this process keeps the
	// index in memory only, and Reason why.
	Dir      string `json:"dir,omitempty"`
	InMemory bool   `json:"inMemory"`
	Reason   string `json:"reason,omitempty"`
	// Format is the on-disk format; Generation counts commits.
	Format     int    `json:"format"`
	Generation uint64 `json:"generation"`
	// Segments, Docs and Deleted describe the committed files; Bytes is
	// their size on disk.
	Segments int   `json:"segments"`
	Docs     int   `json:"docs"`
	Deleted  int   `json:"deleted"`
	Bytes    int64 `json:"bytes"`
	// Seq is the store's change the files reflect; Synced the one this
	// process has replayed up to; Delta the documents it holds in memory
	// (replayed since Seq, waiting for a flush).
	Seq    int64 `json:"seq"`
	Synced int64 `json:"synced"`
	Delta  int   `json:"delta"`
	// PendingMerges says a merge is due; Approximate lists the vector
	// groups searched through centroids.
	PendingMerges bool     `json:"pendingMerges"`
	Approximate   []string `json:"approximate,omitempty"`
	// Written is when the manifest was committed.
	Written time.Time `json:"written,omitzero"`
	// LastError is the last maintenance failure of this process.
	LastError string `json:"lastError,omitempty"`
}

// Status reports the index's state. Call it after a Sync.
func (x *Index) Status() Status {
	x.mu.RLock()
	defer x.mu.RUnlock()
	stg := x.store()
	s := Status{Dir: stg.path(), Format: Format, Bytes: stg.bytes()}
	if x.memOnly != nil {
		s.InMemory, s.Reason, s.Dir = true, x.memOnly.Error(), x.o.Dir
	} else if x.o.Dir == "" {
		s.InMemory, s.Reason = true, "no index directory is configured"
	}
	if p := x.lastErr.Load(); p != nil {
		s.LastError = memory.Public(*p).Message
	}
	st := x.st
	if st == nil || st.man == nil {
		return s
	}
	m := st.man
	s.Generation, s.Segments, s.Docs, s.Deleted, s.Seq = m.Generation, len(m.Segments), m.docs(), m.deadCount(), m.Seq
	s.Synced, s.Delta = st.seq, st.memDocs()
	_, s.PendingMerges = planMerge(m, x.o.FlushDocs, 0, x.space, x.o.IVFThreshold)
	v := &View{st: st, ivfFrom: x.o.IVFThreshold}
	for g, c := range st.cents {
		if c != nil && v.liveVectors(g) >= v.ivfFrom {
			s.Approximate = append(s.Approximate, []string{"observations and summaries", "thoughts and the knowledge graph"}[g])
		}
	}
	if m.WrittenMs > 0 {
		s.Written = time.UnixMilli(m.WrittenMs).UTC()
	}
	return s
}

// Behind reports how many of the store's changes the committed files do
// not hold, reading only the manifest (not the index): a process that
// writes can tell whether the index needs writing out. ok is false when
// there are no files of this format and space.
func (x *Index) Behind(ctx context.Context, r memory.Reader) (int64, bool, error) {
	m, err := readManifest(x.store())
	if err != nil || m == nil || m.Format != Format || m.Space != x.space {
		return 0, false, nil
	}
	last, err := r.LastChange(ctx)
	if err != nil {
		return 0, false, err
	}
	return last - m.Seq, true, nil
}

// FlushDocs is the delta's size from which it is written out.
func (x *Index) FlushDocs() int { return x.o.FlushDocs }

// Verify reads every file of the current state and checks every block's
// checksum (a merge does the same of what it reads). Call it after a Sync.
func (x *Index) Verify() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.st == nil {
		return nil
	}
	for _, p := range x.st.parts {
		if p.file != nil {
			if err := p.file.Verify(); err != nil {
				return memory.Wrap(memory.CodeDBError, err, "segment %s of the retrieval index is damaged", p.name)
			}
		}
	}
	for _, c := range x.st.cents {
		if c != nil {
			if err := c.file.Verify(); err != nil {
				return memory.Wrap(memory.CodeDBError, err, "centroids %s of the retrieval index are damaged", c.name)
			}
		}
	}
	return nil
}

// Rebuild writes the index anew from r's snapshot, whatever the committed
// files hold, and moves to it.
func (x *Index) Rebuild(ctx context.Context, r memory.Reader) error {
	if err := x.build(ctx, r, "", true); err != nil {
		return err
	}
	return x.reload(ctx, r)
}

// reload makes the next sync open the committed files afresh, and syncs.
func (x *Index) reload(ctx context.Context, r memory.Reader) error {
	x.mu.Lock()
	x.stamp = nil
	x.mu.Unlock()
	return x.Sync(ctx, r)
}

// Repair answers a read that met a damaged segment: it rebuilds the files
// the read was answered from, unless another process replaced them
// meanwhile, and moves to the result.
func (x *Index) Repair(ctx context.Context, r memory.Reader) error {
	x.mu.RLock()
	id := ""
	if x.st != nil && x.st.man != nil {
		id = x.st.man.ID
	}
	x.mu.RUnlock()
	if err := x.build(ctx, r, id, false); err != nil {
		return err
	}
	return x.reload(ctx, r)
}

// Forget makes records gone from the store (forgotten, deleted) leave the
// index's files: under the writers' lock (waiting for any other writer,
// whose work may hold the record, to commit first) it syncs and commits
// every segment that holds one rewritten without it, then moves to the
// result.
func (x *Index) Forget(ctx context.Context, r memory.Reader) error {
	for attempt := 0; ; attempt++ {
		if err := x.Sync(ctx, r); err != nil {
			return err
		}
		stg := x.store()
		unlock, err := stg.lock(ctx)
		if err != nil {
			return memory.Wrap(memory.CodeDBError, err, "waiting for the retrieval index's lock")
		}
		x.mu.Lock()
		err = x.syncLocked(ctx, r)
		need := err == nil && x.st != nil && len(x.st.expunge) > 0
		x.mu.Unlock()
		var rb rebuildError
		if errors.As(err, &rb) && attempt < 3 {
			unlock() // Sync rebuilds (taking the lock itself), then try again
			continue
		}
		if err == nil && need {
			err = x.guard(stg, func() error { return x.flushLocked(ctx, stg, true) })
		}
		unlock()
		if err != nil {
			return memory.Wrap(memory.CodeDBError, err, "erasing forgotten text from the retrieval index")
		}
		return x.Sync(ctx, r)
	}
}

// Flush writes what this process holds in memory out as a segment now,
// and runs the merges that are due (of at most limit documents; 0: any).
// With wait it waits for another writer to finish; without, it does
// nothing while one runs.
func (x *Index) Flush(ctx context.Context, r memory.Reader, limit int, wait bool) error {
	if err := x.Sync(ctx, r); err != nil {
		return err
	}
	stg := x.store()
	err := x.guard(stg, func() error {
		if !wait {
			return x.flush(ctx, stg, true)
		}
		unlock, err := stg.lock(ctx)
		if err != nil {
			return err
		}
		defer unlock()
		return x.flushLocked(ctx, stg, true)
	})
	if err != nil {
		return memory.Wrap(memory.CodeDBError, err, "flushing the retrieval index")
	}
	for {
		var merged bool
		err := x.guard(stg, func() (err error) {
			merged, err = x.mergeOnce(ctx, stg, limit)
			return err
		})
		if err != nil {
			return memory.Wrap(memory.CodeDBError, err, "merging the retrieval index")
		}
		if !merged {
			break
		}
	}
	return x.Sync(ctx, r)
}
