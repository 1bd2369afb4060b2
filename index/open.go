package index

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
)

// open reads the committed manifest and maps its files into a new state.
// It says what stands in the way: rebuildError (nothing committed, or
// files that cannot serve: corrupt, of an older format or another space,
// built from another store), errNewer, or errRetry.
func (x *Index) open(ctx context.Context, r memory.Reader) (*state, any, error) {
	stamp, err := x.stg.stamp()
	if err != nil {
		return nil, nil, err
	}
	m, err := readManifest(x.stg)
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
		return nil, nil, rebuildError{why: fmt.Errorf("the index has format %d, this cairn writes %d", m.Format, Format), manifest: m}
	case m.Space != x.space || m.Analyzer != analyzer(x.space):
		return nil, nil, rebuildError{why: fmt.Errorf("the index holds vectors of %s (%s), the embedder is %s", m.Space, m.Analyzer, x.space), manifest: m}
	case len(m.dead) != len(m.Segments):
		return nil, nil, rebuildError{why: errors.New("the manifest is malformed"), manifest: m}
	}
	ref, err := r.ChangeRef(ctx, m.Seq)
	if err != nil {
		return nil, nil, err
	}
	if ref != m.SeqRef {
		return nil, nil, rebuildError{why: errors.New("the index was built from another history of this database (a restored or replaced file)"), manifest: m}
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
		f, err := x.stg.open(name, kind)
		if err != nil {
			return nil, err
		}
		if f == nil {
			// Removed after the manifest was read: a newer one replaced it.
			if s, _ := x.stg.stamp(); !sameStamp(s, stamp) {
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
		return rebuildError{why: err, manifest: m}
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
// large. Another process that built meanwhile makes it a no-op.
func (x *Index) build(ctx context.Context, r memory.Reader, old *manifest) error {
	unlock, err := x.stg.lock(ctx)
	if err != nil {
		return memory.Wrap(memory.CodeDBError, err, "waiting for the retrieval index's lock")
	}
	defer unlock()
	if !x.forceBuild {
		if st, _, err := x.open(ctx, r); err == nil {
			_ = st // another process built it meanwhile; the caller opens it
			return nil
		}
	}
	x.builds.Add(1)
	var gen uint64 = 1
	if m, err := readManifest(x.stg); err == nil && m != nil {
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
		ref, err := buildSegment(ctx, x.stg, segName("seg", gen), []*src{newSrc(tmp.delta)}, x.space, [nGroups]*centroids{}, 0)
		if err != nil {
			return err
		}
		refs = append(refs, ref)
		tmp = newState(x.space, nil, nil, [nGroups]*centroids{})
		return nil
	}
	cleanup := func() {
		for _, s := range refs {
			x.stg.remove(s.Name)
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
	man := &manifest{Format: Format, Generation: gen, Seq: last, SeqRef: seqRef, Space: x.space, Analyzer: analyzer(x.space)}
	if err := x.compact(ctx, man, refs, progress); err != nil {
		cleanup()
		return err
	}
	man.WrittenMs = time.Now().UnixMilli()
	if err := writeManifest(x.stg, man); err != nil {
		cleanup()
		return err
	}
	x.gc(man)
	return nil
}

// compact makes refs one segment (trained centroids filing its vectors
// when a group is large) and puts it in man.
func (x *Index) compact(ctx context.Context, man *manifest, refs []segRef, progress func(string, int, int)) error {
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
		f, err := x.stg.open(s.Name, kindSegment)
		if err != nil || f == nil {
			return fmt.Errorf("reopening %s: %w", s.Name, errors.Join(err, segment.ErrCorrupt))
		}
		files = append(files, f)
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
		c, ref, err := trainCentroids(x.stg, segName(fmt.Sprintf("cent%d", g), man.Generation), g, srcs, x.space)
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
	ref, err := buildSegment(ctx, x.stg, segName("seg", man.Generation), srcs, x.space, cents, levelOf(total, x.o.FlushDocs))
	if err != nil {
		for _, c := range man.Centroids {
			x.stg.remove(c.Name)
		}
		return err
	}
	for _, s := range refs {
		x.stg.remove(s.Name)
	}
	man.Segments, man.dead = []segRef{ref}, [][]uint32{nil}
	return nil
}
