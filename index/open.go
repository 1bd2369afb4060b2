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
	var opened []*segment.File // files this call mapped, closed on failure
	fail := func(err error) (*state, any, error) {
		for _, f := range opened {
			f.Close()
		}
		return nil, nil, err
	}
	file := func(name, kind string, size int64, toc uint32) (*segment.File, error) {
		if f := x.files[name]; f != nil {
			return f, nil
		}
		f, err := stg.open(name, kind)
		if err != nil {
			return nil, err
		}
		if f == nil {
			// Removed after the manifest was read: a newer one replaced it.
			if s, _ := stg.stamp(); !sameStamp(s, stamp) {
				return nil, errRetry
			}
			return nil, fmt.Errorf("%w: %s is missing", segment.ErrCorrupt, name)
		}
		opened = append(opened, f)
		if f.Size() != size || f.TOC() != toc {
			return nil, fmt.Errorf("%w: %s is not the file the manifest names", segment.ErrCorrupt, name)
		}
		return f, nil
	}
	asRebuild := func(err error) error {
		if errors.Is(err, errRetry) || (!errors.Is(err, segment.ErrCorrupt) && !errors.Is(err, segment.ErrFormat)) {
			return err
		}
		return rebuildError{why: err, id: m.ID}
	}
	var cents [nGroups]*centroids
	for _, c := range m.Centroids {
		f, err := file(c.Name, kindCentroids, c.Size, c.TOC)
		if err != nil {
			return fail(asRebuild(err))
		}
		cs, err := centroidsOf(f, c, x.space)
		if err != nil || c.Group < 0 || c.Group >= nGroups {
			return fail(asRebuild(fmt.Errorf("%w: centroids %s", segment.ErrCorrupt, c.Name)))
		}
		cents[c.Group] = cs
	}
	var parts []*part
	for i, s := range m.Segments {
		f, err := file(s.Name, kindSegment, s.Size, s.TOC)
		if err != nil {
			return fail(asRebuild(err))
		}
		p, err := openPart(f, s.Name, x.space, m.dead[i])
		if err != nil {
			return fail(asRebuild(err))
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
	var gen uint64 = 1
	if merr == nil && m != nil {
		gen = m.Generation + 1
	}
	progress := func(stage string, done, total int) {
		if x.o.Progress != nil {
			x.o.Progress(stage, done, total)
		}
	}
	var refs []segRef
	tmp := newState(x.space, nil, nil, [nGroups]*centroids{})
	writeChunk := func() error {
		if tmp.delta.n == 0 {
			return nil
		}
		ref, err := buildSegment(ctx, stg, segName("seg", gen), []*src{newSrc(tmp.delta)}, x.space, [nGroups]*centroids{}, 0)
		if err != nil {
			return err
		}
		refs = append(refs, ref)
		tmp = newState(x.space, nil, nil, [nGroups]*centroids{})
		return nil
	}
	var man *manifest
	cleanup := func() {
		// Files the manifest on disk names stay (a commit whose final
		// directory sync failed still committed).
		named := map[string]bool{}
		if m, err := readManifest(stg); err == nil && m != nil {
			for _, s := range m.Segments {
				named[s.Name] = true
			}
			for _, c := range m.Centroids {
				named[c.Name] = true
			}
		}
		for _, s := range refs {
			if !named[s.Name] {
				stg.remove(s.Name)
			}
		}
		if man != nil {
			for _, c := range man.Centroids {
				if !named[c.Name] {
					stg.remove(c.Name)
				}
			}
		}
	}
	batch := make([]memory.IndexRecord, 0, 4096)
	done := 0
	last, err := r.LoadIndex(ctx, x.space, func(rec memory.IndexRecord) error {
		if batch = append(batch, rec); len(batch) < cap(batch) {
			return nil
		}
		tmp.putAll(batch, x.wv)
		done += len(batch)
		batch = batch[:0]
		progress("indexing", done, -1)
		if tmp.delta.n >= buildChunk {
			return writeChunk()
		}
		return ctx.Err()
	})
	if err == nil {
		tmp.putAll(batch, x.wv)
		done += len(batch)
		progress("indexing", done, -1)
		err = writeChunk()
	}
	if err != nil {
		cleanup()
		return err
	}
	seqRef, err := r.ChangeRef(ctx, last)
	if err != nil {
		cleanup()
		return err
	}
	man = &manifest{Format: Format, Generation: gen, Seq: last, SeqRef: seqRef, Space: x.space, Analyzer: analyzer(x.space)}
	if err := x.compact(ctx, stg, man, refs, progress); err != nil {
		cleanup()
		return err
	}
	refs = man.Segments
	if err := commit(stg, man); err != nil {
		cleanup()
		return err
	}
	return nil
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
