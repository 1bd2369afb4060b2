package index

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/cairnhq/cairn/segment"
)

// storage is where an index's files live: a directory (shared by every
// process that opens the database), or memory (an index private to one
// process, when no directory can be written).
type storage interface {
	// write creates file name of kind, filled by fill, atomically: name
	// holds the old content or all of the new.
	write(name, kind string, fill func(w *segment.Writer) error) (segment.Info, error)
	// open opens file name; (nil, nil) when there is none.
	open(name, kind string) (*segment.File, error)
	// read reads file name into memory (a small file that is replaced,
	// such as the manifest: no mapping holds it); (nil, nil) when there is
	// none.
	read(name, kind string) (*segment.File, error)
	remove(name string) error
	// list names the files (temporary ones included).
	list() ([]string, error)
	// lock takes the writers' lock, waiting for it; tryLock takes it only
	// if it is free. Only the holder writes files.
	lock(ctx context.Context) (func(), error)
	tryLock() (func(), bool, error)
	// stamp identifies the committed manifest cheaply: it changes when the
	// manifest is replaced.
	stamp() (any, error)
	// path is where the files are ("" in memory).
	path() string
	// bytes is the files' total size.
	bytes() int64
}

// dirStorage keeps the files in a directory.
type dirStorage struct {
	dir string
	mu  sync.Mutex // the writers of this process, before the file lock
}

func newDirStorage(dir string) (*dirStorage, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &dirStorage{dir: dir}, nil
}

func (d *dirStorage) path() string { return d.dir }

func (d *dirStorage) write(name, kind string, fill func(w *segment.Writer) error) (segment.Info, error) {
	w, err := segment.Create(filepath.Join(d.dir, name), kind)
	if err != nil {
		return segment.Info{}, err
	}
	w.SetHook(crashHook)
	if err := fill(w); err != nil {
		w.Abort()
		return segment.Info{}, err
	}
	return w.Finish()
}

func (d *dirStorage) open(name, kind string) (*segment.File, error) {
	f, err := segment.Open(filepath.Join(d.dir, name), kind)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

func (d *dirStorage) read(name, kind string) (*segment.File, error) {
	b, err := os.ReadFile(filepath.Join(d.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return segment.OpenBytes(b, kind)
}

func (d *dirStorage) remove(name string) error {
	err := os.Remove(filepath.Join(d.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func (d *dirStorage) list() ([]string, error) {
	es, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func (d *dirStorage) bytes() int64 {
	es, _ := os.ReadDir(d.dir)
	var n int64
	for _, e := range es {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// lockPoll is how often lock retries a lock another process holds.
const lockPoll = 20 * time.Millisecond

func (d *dirStorage) lock(ctx context.Context) (func(), error) {
	for {
		unlock, ok, err := d.tryLock()
		if err != nil || ok {
			return unlock, err
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func (d *dirStorage) tryLock() (func(), bool, error) {
	if !d.mu.TryLock() {
		return nil, false, nil
	}
	f, err := os.OpenFile(filepath.Join(d.dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		d.mu.Unlock()
		return nil, false, err
	}
	ok, err := lockFile(f)
	if err != nil || !ok {
		f.Close()
		d.mu.Unlock()
		return nil, false, err
	}
	return func() {
		unlockFile(f)
		f.Close()
		d.mu.Unlock()
	}, true, nil
}

// fileStamp identifies a manifest file.
type fileStamp struct {
	info os.FileInfo
}

func (d *dirStorage) stamp() (any, error) {
	fi, err := os.Stat(filepath.Join(d.dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return fileStamp{fi}, nil
}

// sameStamp reports whether two stamps name the same manifest.
func sameStamp(a, b any) bool {
	fa, oka := a.(fileStamp)
	fb, okb := b.(fileStamp)
	if oka && okb {
		return os.SameFile(fa.info, fb.info) && fa.info.ModTime().Equal(fb.info.ModTime()) && fa.info.Size() == fb.info.Size()
	}
	return a == b
}

// memStorage keeps the files in memory: an index for one process.
type memStorage struct {
	mu    sync.Mutex
	lk    sync.Mutex
	files map[string][]byte
	gen   int
}

func newMemStorage() *memStorage { return &memStorage{files: map[string][]byte{}} }

func (m *memStorage) path() string { return "" }

func (m *memStorage) write(name, kind string, fill func(w *segment.Writer) error) (segment.Info, error) {
	var buf bytes.Buffer
	w := segment.NewWriter(&buf, kind)
	if err := fill(w); err != nil {
		return segment.Info{}, err
	}
	info, err := w.Finish()
	if err != nil {
		return info, err
	}
	m.mu.Lock()
	m.files[name] = buf.Bytes()
	if name == manifestName {
		m.gen++
	}
	m.mu.Unlock()
	return info, nil
}

func (m *memStorage) open(name, kind string) (*segment.File, error) {
	m.mu.Lock()
	b, ok := m.files[name]
	m.mu.Unlock()
	if !ok {
		return nil, nil
	}
	return segment.OpenBytes(b, kind)
}

func (m *memStorage) read(name, kind string) (*segment.File, error) { return m.open(name, kind) }

func (m *memStorage) remove(name string) error {
	m.mu.Lock()
	delete(m.files, name)
	m.mu.Unlock()
	return nil
}

func (m *memStorage) list() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for n := range m.files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (m *memStorage) bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, b := range m.files {
		n += int64(len(b))
	}
	return n
}

func (m *memStorage) lock(ctx context.Context) (func(), error) {
	m.lk.Lock()
	return m.lk.Unlock, nil
}

func (m *memStorage) tryLock() (func(), bool, error) {
	if !m.lk.TryLock() {
		return nil, false, nil
	}
	return m.lk.Unlock, true, nil
}

func (m *memStorage) stamp() (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[manifestName]; !ok {
		return nil, nil
	}
	return m.gen, nil
}

// crashHook, set by tests, is called at each step of writing a file.
var crashHook func(step string)
