package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
)

// Options configure an Index.
type Options struct {
	// Dir is the directory the index's files live in, shared by every
	// process that opens the database (created with mode 0700). Empty
	// keeps the index in this process's memory only.
	Dir string
	// Embedder embeds queries; the index holds the records' vectors in
	// its space (and only that space). Nil: no vectors.
	Embedder embed.Embedder
	// Logger receives warnings (a corrupt or unreadable index). Default:
	// discard.
	Logger *slog.Logger
	// FlushDocs is how many documents the delta holds before they are
	// written out as a segment. Default DefaultFlushDocs.
	FlushDocs int
	// Background runs maintenance (flushes, merges) in a goroutine as soon
	// as it is due, for processes that live long (a server). Otherwise it
	// runs at Close, bounded by ShortMergeDocs.
	Background bool
	// ShortMergeDocs bounds the merges a process without Background runs
	// at Close (in documents merged). Default DefaultShortMergeDocs.
	ShortMergeDocs int
	// Progress, when set, is told how far a build is (total -1 when it is
	// not known).
	Progress func(stage string, done, total int)
	// IVFThreshold is the live vectors a group holds from which it is
	// searched approximately (see SuggestedIVFThreshold). Default 0: never,
	// every search is exact.
	IVFThreshold int
}

// Defaults.
const (
	// DefaultFlushDocs: a new process replays at most about this many
	// records from the store before its first answer (about 30 µs each).
	DefaultFlushDocs = 1000
	// DefaultShortMergeDocs keeps a command's exit quick: larger merges
	// are left to a long-running process or `cairn index optimize` (which
	// a command that leaves one due starts in the background).
	DefaultShortMergeDocs = 5_000
	// mergeFactor segments of one size merge into one.
	mergeFactor = 10
	// buildChunk is the documents a build holds in memory before writing
	// them out.
	buildChunk = 100_000
)

// Index is the retrieval index of one store. It is safe for concurrent
// use: searches share a read lock, a sync takes the write lock.
type Index struct {
	o        Options
	stgp     atomic.Pointer[storageRef]
	space    memory.Space
	embedder embed.Embedder
	wv       embed.WordVectors
	log      *slog.Logger

	mu    sync.RWMutex
	st    *state
	stamp any
	// files are the mapped segment and centroid files the state uses.
	files map[string]*segment.File
	// memOnly says the directory could not be used (see Status).
	memOnly error
	// damaged is the id of a manifest whose files maintenance found
	// damaged.
	damaged atomic.Pointer[string]

	maintaining atomic.Bool
	// builds counts the builds from scratch this process made.
	builds  atomic.Int64
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
	lastErr atomic.Pointer[error]
}

// Open returns the index of a store. It reads nothing yet: the first Sync
// opens the files (or builds them).
func Open(o Options) (*Index, error) {
	if o.FlushDocs <= 0 {
		o.FlushDocs = DefaultFlushDocs
	}
	if o.ShortMergeDocs <= 0 {
		o.ShortMergeDocs = DefaultShortMergeDocs
	}
	if o.IVFThreshold <= 0 {
		o.IVFThreshold = math.MaxInt
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	x := &Index{o: o, embedder: o.Embedder, log: o.Logger, files: map[string]*segment.File{}}
	if o.Embedder != nil {
		x.space = o.Embedder.Space()
		x.wv, _ = o.Embedder.(embed.WordVectors)
	}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	if o.Dir == "" {
		x.setStore(newMemStorage())
		return x, nil
	}
	d, err := newDirStorage(o.Dir)
	if err != nil {
		x.useMemory(fmt.Errorf("the index directory %s cannot be created: %v", o.Dir, err))
		return x, nil
	}
	x.setStore(d)
	return x, nil
}

// useMemory falls back to an index in this process's memory. The caller
// holds mu (or is Open).
func (x *Index) useMemory(why error) {
	x.log.Warn("cairn keeps its retrieval index in memory for this process", "reason", why.Error())
	x.memOnly = why
	x.setStore(newMemStorage())
}

// store is where the files are now (the directory, or memory after a
// fallback). Work that spans calls takes it once and keeps it.
func (x *Index) store() storage { return x.stgp.Load().s }

func (x *Index) setStore(s storage) { x.stgp.Store(&storageRef{s}) }

type storageRef struct{ s storage }

// markDamaged records that maintenance met damage in the files of
// manifest id: the next Sync rebuilds them.
func (x *Index) markDamaged(id string, err error) {
	x.log.Error("a segment of the retrieval index is damaged; it will be rebuilt", "err", err.Error())
	x.damaged.Store(&id)
}

// Embedder is the index's embedder (nil without one).
func (x *Index) Embedder() embed.Embedder { return x.embedder }

// WordVectors is the embedder's word vectors, or nil when it has none.
func (x *Index) WordVectors() embed.WordVectors { return x.wv }

// Space is the index's vector space.
func (x *Index) Space() memory.Space { return x.space }

// Sync brings the index up to the state r sees: it opens the committed
// files (building them when there are none, or when they cannot be used),
// moves to a newer manifest another process committed, and replays the
// store's changes since. Writes acknowledged by any process before r's
// snapshot are then searchable.
//
// Lock order, everywhere: the writers' file lock, then mu. Sync builds
// without holding mu, so a build never waits for the file lock while a
// writer that holds it waits for mu.
func (x *Index) Sync(ctx context.Context, r memory.Reader) error {
	for attempt := 0; ; attempt++ {
		err := x.catchUp(ctx, r)
		var rb rebuildError
		if !errors.As(err, &rb) {
			return err
		}
		if attempt == 3 {
			return memory.Wrap(memory.CodeDBError, err, "opening the retrieval index")
		}
		if rb.why != nil {
			x.log.Warn("rebuilding the retrieval index", "reason", rb.why.Error())
		}
		if err := x.build(ctx, r, rb.id, false); err != nil {
			return err
		}
	}
}

// catchUp is Sync without the building. A long replay (a large import
// just committed) stops whenever the delta holds catchUpFlushes times
// FlushDocs documents, to write them out as a segment before it goes
// on, so the delta stays small however far behind the index was.
func (x *Index) catchUp(ctx context.Context, r memory.Reader) error {
	limit := catchUpFlushes * x.o.FlushDocs
	for {
		x.mu.Lock()
		done, err := x.syncSome(ctx, r, limit)
		if err == nil && done && x.o.Background && x.due() {
			x.startMaintenance()
		}
		x.mu.Unlock()
		if err != nil || done {
			return err
		}
		stg := x.store()
		if err := x.guard(stg, func() error { return x.flush(ctx, stg, false) }); err != nil {
			// The replay goes on in memory; maintenance retries later.
			x.log.Warn("retrieval index maintenance failed", "step", "flush during a replay", "err", err.Error())
			x.lastErr.Store(&err)
			limit = 0
		}
	}
}

// catchUpFlushes is how many flushes' worth of documents a replay adds to
// the delta before it writes them out.
const catchUpFlushes = 8

// syncLocked is Sync without the building: it returns a rebuildError when
// the files must be built. The caller holds mu.
func (x *Index) syncLocked(ctx context.Context, r memory.Reader) error {
	_, err := x.syncSome(ctx, r, 0)
	return err
}

// syncSome is syncLocked that stops, once a page has been replayed,
// when the delta holds limit documents or more (0: no limit); done says
// it replayed every change. The caller holds mu.
func (x *Index) syncSome(ctx context.Context, r memory.Reader, limit int) (done bool, err error) {
	if x.st != nil && x.st.man != nil {
		if d := x.damaged.Load(); d != nil && *d == x.st.man.ID {
			return false, rebuildError{why: errors.New("maintenance met a damaged segment"), id: *d}
		}
	}
	stamp, err := x.store().stamp()
	if err != nil {
		return false, x.storageError(err)
	}
	if x.st == nil || !sameStamp(stamp, x.stamp) {
		if err := x.load(ctx, r); err != nil {
			return false, err
		}
	}
	st := x.st
	// Replaying reads the segments (a record's old document is found by
	// its key): damage met there means rebuilding, like damage at open.
	defer func() {
		if c, ok := recoverCorruption(recover()); ok {
			x.stamp = nil
			err = rebuildError{why: c, id: st.man.ID}
		}
	}()
	// The changes are replayed a page at a time, so a long history (a
	// large import) costs the memory of one page, not of every record it
	// changed.
	for {
		recs, last, err := r.ChangesSince(ctx, x.space, st.seq, catchUpPage)
		if err != nil {
			return false, err
		}
		if last == st.seq {
			return true, nil
		}
		ref, err := r.ChangeRef(ctx, last)
		if err != nil {
			return false, err
		}
		st.putAll(recs, x.wv)
		st.seq, st.seqRef = last, ref
		if limit > 0 && st.memDocs() >= limit {
			return false, nil
		}
	}
}

// catchUpPage is how many changes Sync reads and applies at a time.
const catchUpPage = 1024

// recoverCorruption turns a recovered corruption panic into its error;
// any other panic goes on.
func recoverCorruption(r any) (error, bool) {
	if r == nil {
		return nil, false
	}
	c, ok := r.(corruption)
	if !ok {
		panic(r)
	}
	return c.err, true
}

// storageError is what a caller sees of a failing index directory.
func (x *Index) storageError(err error) error {
	return memory.Wrap(memory.CodeDBError, err, "reading the retrieval index")
}

// load replaces the state by the committed manifest's. It returns a
// rebuildError when the files must be built first. The caller holds mu.
func (x *Index) load(ctx context.Context, r memory.Reader) error {
	for attempt := 0; ; attempt++ {
		st, stamp, err := x.open(ctx, r)
		if err == nil {
			x.setState(st, stamp)
			return nil
		}
		switch {
		case errors.Is(err, errNewer) && x.memOnly == nil:
			x.useMemory(err)
		case errors.Is(err, errRetry) && attempt < 8:
			// Another process replaced the manifest while this one read it.
		default:
			var rb rebuildError
			if errors.As(err, &rb) {
				return err
			}
			return memory.Wrap(memory.CodeDBError, err, "opening the retrieval index")
		}
	}
}

// setState makes st current and unmaps the files no longer used.
func (x *Index) setState(st *state, stamp any) {
	keep := map[string]bool{}
	for _, p := range st.parts {
		if p.file != nil {
			keep[p.name] = true
		}
	}
	for _, c := range st.cents {
		if c != nil && c.file != nil {
			keep[c.name] = true
		}
	}
	for name, f := range x.files {
		if !keep[name] {
			f.Close()
			delete(x.files, name)
		}
	}
	x.st, x.stamp = st, stamp
}

// Close waits for background maintenance, runs the maintenance that is
// due (a flush, short merges) and unmaps the files.
func (x *Index) Close() error {
	x.mu.Lock()
	due := x.st != nil && x.due()
	x.mu.Unlock()
	if due && !x.o.Background {
		x.maintain(x.ctx, x.o.ShortMergeDocs)
	}
	x.cancel()
	x.wg.Wait()
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, f := range x.files {
		f.Close()
	}
	x.files = map[string]*segment.File{}
	x.st = nil
	return nil
}

// rebuildError says the committed files cannot serve and must be built
// again: why says what was wrong (nil when there were none), id names the
// manifest that failed ("" when none could be read).
type rebuildError struct {
	why error
	id  string
}

func (e rebuildError) Error() string {
	if e.why == nil {
		return "no index yet"
	}
	return e.why.Error()
}

var (
	errNewer = errors.New("the index was written by a newer cairn")
	errRetry = errors.New("the manifest changed while it was read")
)
