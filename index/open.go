package index

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
)

// open reads the committed manifest and maps its files into a new state.
// It says what stands in the way: rebuildError (nothing committed, or
// files that cannot serve: corrupt, of an older format or another space,
// built from another store), errNewer, or errRetry.
func (x *Index) open(ctx context.Context, r memory.Reader) (*state, any, error) {
	stg := x.store()
	m, stamp, err := x.committed(ctx, r, stg)
	if err != nil {
		return nil, nil, err
	}
	fm := &fileMapper{x: x, stg: stg, stamp: stamp, id: m.ID}
	cents, err := fm.centroids(m)
	if err != nil {
		return nil, nil, fm.fail(err)
	}
	var parts []*part
	for i, s := range m.Segments {
		f, err := fm.file(s.Name, kindSegment, s.Size, s.TOC)
		if err != nil {
			return nil, nil, fm.fail(err)
		}
		p, err := openPart(f, s.Name, x.space, m.dead[i])
		if err != nil {
			return nil, nil, fm.fail(err)
		}
		parts = append(parts, p)
	}
	st := newState(x.space, m, parts, cents)
	for _, p := range parts {
		x.files[p.name] = p.file
	}
	for _, c := range cents {
		if c != nil {
			x.files[c.name] = c.file
		}
	}
	return st, stamp, nil
}

// committed reads the committed manifest and checks that it serves this
// index: its format, space and analysis, and the store's history. It
// returns the manifest and the stamp it was read under.
func (x *Index) committed(ctx context.Context, r memory.Reader, stg storage) (*manifest, any, error) {
	stamp, err := stg.stamp()
	if err != nil {
		return nil, nil, err
	}
	m, err := readManifest(stg)
	if err != nil {
		if newer(err) {
			return nil, nil, fmt.Errorf("%w (%v)", errNewer, err)
		}
		if errors.Is(err, segment.ErrCorrupt) || errors.Is(err, segment.ErrFormat) {
			return nil, nil, rebuildError{why: err}
		}
		return nil, nil, err
	}
	if m == nil {
		return nil, nil, rebuildError{}
	}
	switch {
	case m.Format > Format:
		return nil, nil, fmt.Errorf("%w: its format is %d, this cairn reads %d", errNewer, m.Format, Format)
	case m.Format < Format:
		return nil, nil, rebuildError{why: fmt.Errorf("the index has format %d, this cairn writes %d", m.Format, Format), id: m.ID}
	case m.Space != x.space || m.Analyzer != analyzer(x.space):
		return nil, nil, rebuildError{why: fmt.Errorf("the index holds vectors of %s (%s), the embedder is %s", m.Space, m.Analyzer, x.space), id: m.ID}
	case len(m.dead) != len(m.Segments):
		return nil, nil, rebuildError{why: errors.New("the manifest is malformed"), id: m.ID}
	}
	ref, err := r.ChangeRef(ctx, m.Seq)
	if err != nil {
		return nil, nil, err
	}
	if ref != m.SeqRef {
		return nil, nil, rebuildError{why: errors.New("the index was built from another history of this database (a restored or replaced file)"), id: m.ID}
	}
	return m, stamp, nil
}

// fileMapper maps the files a manifest names for open: those the index
// already maps are shared; those it maps anew are closed if the open
// fails.
type fileMapper struct {
	x      *Index
	stg    storage
	stamp  any    // the stamp the manifest was read under
	id     string // the manifest's id
	opened []*segment.File
}

// file maps file name, checking it is the one the manifest names.
func (fm *fileMapper) file(name, kind string, size int64, toc uint32) (*segment.File, error) {
	if f := fm.x.files[name]; f != nil {
		return f, nil
	}
	f, err := fm.stg.open(name, kind)
	if err != nil {
		return nil, err
	}
	if f == nil {
		// Removed after the manifest was read: a newer one replaced it.
		if s, _ := fm.stg.stamp(); !sameStamp(s, fm.stamp) {
			return nil, errRetry
		}
		return nil, fmt.Errorf("%w: %s is missing", segment.ErrCorrupt, name)
	}
	fm.opened = append(fm.opened, f)
	if f.Size() != size || f.TOC() != toc {
		return nil, fmt.Errorf("%w: %s is not the file the manifest names", segment.ErrCorrupt, name)
	}
	return f, nil
}

// centroids maps the manifest's centroid sets.
func (fm *fileMapper) centroids(m *manifest) ([nGroups]*centroids, error) {
	var cents [nGroups]*centroids
	for _, c := range m.Centroids {
		f, err := fm.file(c.Name, kindCentroids, c.Size, c.TOC)
		if err != nil {
			return cents, err
		}
		cs, err := centroidsOf(f, c, fm.x.space)
		if err != nil || c.Group < 0 || c.Group >= nGroups {
			return cents, fmt.Errorf("%w: centroids %s", segment.ErrCorrupt, c.Name)
		}
		cents[c.Group] = cs
	}
	return cents, nil
}

// fail closes the files this open mapped and says whether the failure
// calls for a rebuild (damaged files, or files of another format).
func (fm *fileMapper) fail(err error) error {
	for _, f := range fm.opened {
		f.Close()
	}
	if errors.Is(err, errRetry) || (!errors.Is(err, segment.ErrCorrupt) && !errors.Is(err, segment.ErrFormat)) {
		return err
	}
	return rebuildError{why: err, id: fm.id}
}

// newer reports whether err says a file is of a newer container format.
func newer(err error) bool {
	var fe *segment.FormatError
	return errors.As(err, &fe) && fe.Found > fe.Want
}

// segName names a new segment file of generation gen.
func segName(prefix string, gen uint64) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%06d-%s.cseg", prefix, gen, hex.EncodeToString(b[:]))
}

// build writes the index from scratch from r's snapshot, under the
// writers' lock: the records in chunks of buildChunk documents, then one
// segment of them all, its vectors filed under centroids when a group is
// large. Unless force, it does nothing when, by the time it holds the
// lock, the committed manifest is no longer the one that failed (failed;
// "" when none could be read) or now serves: another process built or
// replaced it meanwhile, and the caller opens that.
func (x *Index) build(ctx context.Context, r memory.Reader, failed string, force bool) (err error) {
	stg := x.store()
	unlock, err := stg.lock(ctx)
	if err != nil {
		return memory.Wrap(memory.CodeDBError, err, "waiting for the retrieval index's lock")
	}
	defer unlock()
	defer func() {
		if c, ok := recoverCorruption(recover()); ok {
			err = memory.Wrap(memory.CodeDBError, c, "building the retrieval index")
		}
	}()
	m, merr := readManifest(stg)
	if !force && merr == nil && m != nil && ((failed != "" && m.ID != failed) || (failed == "" && x.usable(ctx, r, m))) {
		return nil
	}
	x.builds.Add(1)
	b := &builder{x: x, stg: stg, gen: 1}
	if merr == nil && m != nil {
		b.gen = m.Generation + 1
	}
	if err := b.run(ctx, r); err != nil {
		b.cleanup()
		return err
	}
	return nil
}

// builder is one build: the segments it wrote so far, the records it
// holds in memory, the manifest it commits.
type builder struct {
	x    *Index
	stg  storage
	gen  uint64
	refs []segRef
	tmp  *state
	man  *manifest
}

// run loads every record in chunks, compacts them and commits.
func (b *builder) run(ctx context.Context, r memory.Reader) error {
	last, err := b.load(ctx, r)
	if err != nil {
		return err
	}
	seqRef, err := r.ChangeRef(ctx, last)
	if err != nil {
		return err
	}
	x := b.x
	b.man = &manifest{Format: Format, Generation: b.gen, Seq: last, SeqRef: seqRef, Space: x.space, Analyzer: analyzer(x.space)}
	if err := x.compact(ctx, b.stg, b.man, b.refs, b.progress); err != nil {
		return err
	}
	b.refs = b.man.Segments
	return commit(b.stg, b.man)
}

// load indexes r's records, writing a segment of each buildChunk
// documents; it returns the change sequence number they reflect.
func (b *builder) load(ctx context.Context, r memory.Reader) (int64, error) {
	x := b.x
	b.tmp = newState(x.space, nil, nil, [nGroups]*centroids{})
	batch := make([]memory.IndexRecord, 0, 4096)
	done := 0
	last, err := r.LoadIndex(ctx, x.space, func(rec memory.IndexRecord) error {
		if batch = append(batch, rec); len(batch) < cap(batch) {
			return nil
		}
		b.tmp.putAll(batch, x.wv)
		done += len(batch)
		batch = batch[:0]
		b.progress("indexing", done, -1)
		if b.tmp.delta.n >= buildChunk {
			return b.spill(ctx)
		}
		return ctx.Err()
	})
	if err == nil {
		b.tmp.putAll(batch, x.wv)
		done += len(batch)
		b.progress("indexing", done, -1)
		err = b.spill(ctx)
	}
	return last, err
}

func (b *builder) progress(stage string, done, total int) {
	if b.x.o.Progress != nil {
		b.x.o.Progress(stage, done, total)
	}
}

// spill writes the records held in memory as a segment.
func (b *builder) spill(ctx context.Context) error {
	if b.tmp.delta.n == 0 {
		return nil
	}
	x := b.x
	ref, err := buildSegment(ctx, b.stg, segName("seg", b.gen), []*src{newSrc(b.tmp.delta)}, x.space, [nGroups]*centroids{}, 0)
	if err != nil {
		return err
	}
	b.refs = append(b.refs, ref)
	b.tmp = newState(x.space, nil, nil, [nGroups]*centroids{})
	return nil
}

// cleanup removes the files a failed build wrote. Files the manifest on
// disk names stay (a commit whose final directory sync failed still
// committed).
func (b *builder) cleanup() {
	named := map[string]bool{}
	if m, err := readManifest(b.stg); err == nil && m != nil {
		for _, s := range m.Segments {
			named[s.Name] = true
		}
		for _, c := range m.Centroids {
			named[c.Name] = true
		}
	}
	for _, s := range b.refs {
		if !named[s.Name] {
			b.stg.remove(s.Name)
		}
	}
	if b.man != nil {
		for _, c := range b.man.Centroids {
			if !named[c.Name] {
				b.stg.remove(c.Name)
			}
		}
	}
}

// usable reports whether a manifest serves this index and store: this
// format, space and analysis, and the store's history.
func (x *Index) usable(ctx context.Context, r memory.Reader, m *manifest) bool {
	if m.Format != Format || m.Space != x.space || m.Analyzer != analyzer(x.space) || len(m.dead) != len(m.Segments) {
		return false
	}
	ref, err := r.ChangeRef(ctx, m.Seq)
	return err == nil && ref == m.SeqRef
}

// compact makes refs one segment (trained centroids filing its vectors
// when a group is large) and puts it in man.
func (x *Index) compact(ctx context.Context, stg storage, man *manifest, refs []segRef, progress func(string, int, int)) error {
	man.Segments, man.dead, man.Centroids = refs, make([][]uint32, len(refs)), nil
	var srcs []*src
	var files []*segment.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	rows := [nGroups]int{}
	for _, s := range refs {
		f, err := stg.open(s.Name, kindSegment)
		if err != nil || f == nil {
			return fmt.Errorf("reopening %s: %w", s.Name, errors.Join(err, segment.ErrCorrupt))
		}
		files = append(files, f)
		if err := f.Verify(); err != nil {
			return err
		}
		p, err := openPart(f, s.Name, x.space, nil)
		if err != nil {
			return err
		}
		for g := range nGroups {
			rows[g] += p.groups[g].rows
		}
		srcs = append(srcs, newSrc(p))
	}
	var cents [nGroups]*centroids
	for g := range nGroups {
		if rows[g] < x.o.IVFThreshold || x.space.Dim == 0 {
			continue
		}
		progress("training", 0, -1)
		c, ref, err := trainCentroids(stg, segName(fmt.Sprintf("cent%d", g), man.Generation), g, srcs, x.space)
		if err != nil {
			return err
		}
		cents[g] = c
		man.Centroids = append(man.Centroids, ref)
	}
	if len(refs) <= 1 && man.Centroids == nil {
		return nil
	}
	progress("merging", 0, -1)
	total := 0
	for _, s := range refs {
		total += s.Docs
	}
	ref, err := buildSegment(ctx, stg, segName("seg", man.Generation), srcs, x.space, cents, levelOf(total, x.o.FlushDocs))
	if err != nil {
		for _, c := range man.Centroids {
			stg.remove(c.Name)
		}
		return err
	}
	for _, s := range refs {
		stg.remove(s.Name)
	}
	man.Segments, man.dead = []segRef{ref}, [][]uint32{nil}
	return nil
}
