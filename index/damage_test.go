package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
)

// built returns a history's store and a directory holding its index,
// written and closed, and the answers of an index that never saw damage.
func built(t *testing.T, seed uint64, steps int) (*fakeStore, string, string, []probe) {
	t.Helper()
	store := newFakeStore()
	h := newHistory(seed, store, testEmbedder)
	for range steps {
		h.step()
	}
	dir := t.TempDir()
	x, err := Open(Options{Dir: dir, Embedder: testEmbedder, FlushDocs: 7})
	if err != nil {
		t.Fatal(err)
	}
	syncX(t, x, store)
	x.Close()
	ref := openMem(t)
	syncX(t, ref, store)
	ps := probes(seed+100, 8)
	return store, dir, describe(t, ref, ps), ps
}

// segmentFile is the directory's one segment.
func segmentFile(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "seg-*.cseg"))
	if len(m) != 1 {
		t.Fatalf("want one segment, found %v", m)
	}
	return m[0]
}

// sectionOffset finds where a section's bytes start in a segment file.
func sectionOffset(t *testing.T, path, name string) (int, int) {
	t.Helper()
	f, err := segment.Open(path, kindSegment)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, _ := os.ReadFile(path)
	s := f.Section(name)
	b := s.Bytes()
	// The section's bytes are unique enough to be found in the file.
	i := bytes.Index(data, b[:min(len(b), 256)])
	if i < 0 {
		t.Fatalf("section %s not found", name)
	}
	return i, s.Len()
}

func flip(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0x5a
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedFilesAreRebuilt damages the files in each way a disk or a
// person could, then opens them: the index notices (a checksum, a size, a
// missing file), rebuilds from the store and answers as before.
func TestDamagedFilesAreRebuilt(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"a byte of an eager section", func(t *testing.T, dir string) {
			p := segmentFile(t, dir)
			off, n := sectionOffset(t, p, "doc.capsule")
			flip(t, p, off+n/2)
		}},
		{"a byte of the table of contents", func(t *testing.T, dir string) {
			p := segmentFile(t, dir)
			st, _ := os.Stat(p)
			flip(t, p, int(st.Size())-40)
		}},
		{"a truncated segment", func(t *testing.T, dir string) {
			p := segmentFile(t, dir)
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()/2)
		}},
		{"a missing segment", func(t *testing.T, dir string) { os.Remove(segmentFile(t, dir)) }},
		{"a damaged manifest", func(t *testing.T, dir string) { flip(t, filepath.Join(dir, manifestName), 100) }},
		{"a manifest that is not one", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, manifestName), []byte("SQLite format 3\x00"), 0o600)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store, dir, want, ps := built(t, 31, 400)
			c.damage(t, dir)
			x := openDir(t, dir, 7)
			syncX(t, x, store)
			if x.builds.Load() != 1 {
				t.Fatalf("%d builds; the damage went unnoticed", x.builds.Load())
			}
			same(t, c.name, want, describe(t, x, ps))
		})
	}
}

// TestDamageFoundWhileReading: a damaged block of a lazy section passes
// the open; the read that meets it stops with a corruption error instead
// of answering, Verify finds it, and Repair rebuilds.
func TestDamageFoundWhileReading(t *testing.T) {
	store, dir, want, ps := built(t, 32, 400)
	p := segmentFile(t, dir)
	off, n := sectionOffset(t, p, sections[secVecRows(groupSearchable)].name)
	flip(t, p, off+n-10)
	x := openDir(t, dir, 7)
	syncX(t, x, store)
	if x.builds.Load() != 0 {
		t.Fatal("the open should not read the lazy section")
	}
	err := x.Read(func(v *View) error {
		v.Nearest(GroupSearchable, ps[0].q, 10, nil, nil) // an exact search reads every row
		t.Error("the read went on past the damage")
		return nil
	})
	if !IsCorrupt(err) || memory.CodeOf(err) != memory.CodeDBError {
		t.Fatalf("the read returned %v, want a db_error wrapping ErrCorrupt", err)
	}
	if strings.Contains(memory.Public(err).Message, dir) {
		t.Fatalf("the error shows a path: %q", memory.Public(err).Message)
	}
	if err := x.Verify(); !IsCorrupt(err) {
		t.Fatalf("Verify returned %v", err)
	}
	if err := x.Repair(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	same(t, "after the repair", want, describe(t, x, ps))
	if err := x.Verify(); err != nil {
		t.Fatalf("the rebuilt files fail verification: %v", err)
	}
}

// TestFormats: files of an older format are rebuilt; files of a newer
// one are left alone and this process keeps its index in memory, saying
// why; a manifest built from another history of the store is rebuilt.
func TestFormats(t *testing.T) {
	t.Run("older", func(t *testing.T) {
		store, dir, want, ps := built(t, 33, 300)
		rewriteManifest(t, dir, func(m *manifest) { m.Format = Format - 1 })
		x := openDir(t, dir, 7)
		syncX(t, x, store)
		if x.builds.Load() != 1 {
			t.Fatal("an older format was not rebuilt")
		}
		same(t, "older format", want, describe(t, x, ps))
		if m, _ := readManifest(x.store()); m.Format != Format {
			t.Fatalf("the rebuilt manifest has format %d", m.Format)
		}
	})
	t.Run("newer", func(t *testing.T) {
		store, dir, want, ps := built(t, 34, 300)
		rewriteManifest(t, dir, func(m *manifest) { m.Format = Format + 1 })
		before := snapshotDir(t, dir)
		x := openDir(t, dir, 7)
		syncX(t, x, store)
		st := x.Status()
		if !st.InMemory || !strings.Contains(st.Reason, "newer") {
			t.Fatalf("status %+v: want an index in memory, saying the files are newer", st)
		}
		same(t, "newer format", want, describe(t, x, ps))
		x.maintain(context.Background(), 0)
		x.Close()
		if after := snapshotDir(t, dir); after != before {
			t.Fatal("the files of a newer format were changed")
		}
	})
	t.Run("newer container", func(t *testing.T) {
		store, dir, want, ps := built(t, 35, 300)
		path := filepath.Join(dir, manifestName)
		b, _ := os.ReadFile(path)
		binary.LittleEndian.PutUint32(b[8:], segment.Format+1)
		binary.LittleEndian.PutUint32(b[len(b)-12:], crc32.Checksum(b[:64], crc32.MakeTable(crc32.Castagnoli)))
		os.WriteFile(path, b, 0o600)
		x := openDir(t, dir, 7)
		syncX(t, x, store)
		if st := x.Status(); !st.InMemory {
			t.Fatalf("a manifest of a newer container format was not left alone: %+v", st)
		}
		same(t, "newer container", want, describe(t, x, ps))
	})
	t.Run("another history", func(t *testing.T) {
		_, dir, _, _ := built(t, 36, 300)
		other := newFakeStore()
		h := newHistory(37, other, testEmbedder)
		for range 500 {
			h.step()
		}
		x := openDir(t, dir, 7)
		syncX(t, x, other)
		if x.builds.Load() != 1 {
			t.Fatal("an index of another history was not rebuilt")
		}
		ref := openMem(t)
		syncX(t, ref, other)
		ps := probes(38, 6)
		same(t, "another history", describe(t, ref, ps), describe(t, x, ps))
	})
}

func rewriteManifest(t *testing.T, dir string, change func(*manifest)) {
	t.Helper()
	s, err := newDirStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(s)
	if err != nil || m == nil {
		t.Fatal(err)
	}
	change(m)
	if err := writeManifest(s, m); err != nil {
		t.Fatal(err)
	}
}

// snapshotDir renders the names and contents of a directory's files.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	es, _ := os.ReadDir(dir)
	var b strings.Builder
	for _, e := range es {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name())
		b.Write(data)
	}
	return b.String()
}

// TestReadsDuringMaintenance: searches go on while another goroutine
// syncs, flushes and merges, or while maintenance runs in the background
// as syncs make it due (run with -race).
func TestReadsDuringMaintenance(t *testing.T) {
	for _, background := range []bool{false, true} {
		t.Run(map[bool]string{false: "explicit", true: "background"}[background], func(t *testing.T) {
			readsDuringMaintenance(t, background)
		})
	}
}

func readsDuringMaintenance(t *testing.T, background bool) {
	ctx := context.Background()
	store := newFakeStore()
	h := newHistory(41, store, testEmbedder)
	dir := t.TempDir()
	x, err := Open(Options{Dir: dir, Embedder: testEmbedder, FlushDocs: 7, Background: background})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	syncX(t, x, store)
	ps := probes(42, 4)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := ps[(i+w)%len(ps)]
				err := x.Read(func(v *View) error {
					f := v.Filter(p.scope)
					n := v.Docs()
					own, c, tf := make([]float32, n), make([]float32, n), make([]float64, n)
					_, docs := v.ContextScores([]string{"deploy", "cach"}, f, Shares{Before: 0.5, After: 0.5}, own, c, tf, nil, nil)
					for _, d := range docs {
						v.ID(d)
						v.Similarity(p.q, d)
					}
					v.Nearest(GroupSearchable, p.q, 5, f, nil)
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 800 {
		h.step()
		if i%25 == 24 {
			if err := x.Sync(ctx, store); err != nil {
				t.Fatal(err)
			}
			if !background {
				x.maintain(ctx, 0)
			}
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if background {
		// Whatever ran meanwhile: once no maintenance runs, new records
		// make the next sync start one, which commits them.
		x.wg.Wait()
		syncX(t, x, store)
		x.wg.Wait()
		syncX(t, x, store) // the state of the last commit
		before := x.Status().Generation
		for range 20 {
			h.step()
		}
		syncX(t, x, store)
		x.wg.Wait()
		syncX(t, x, store)
		if after := x.Status().Generation; after <= before {
			t.Fatalf("generation %d → %d: the sync that made maintenance due did not start it", before, after)
		}
	}
	x.Close()
	ref := openMem(t)
	syncX(t, ref, store)
	y := openDir(t, dir, 7)
	syncX(t, y, store)
	if st := y.Status(); !background && st.Generation < 20 {
		t.Fatalf("maintenance committed %d times, want at least 20", st.Generation)
	}
	same(t, "after maintenance", describe(t, ref, ps), describe(t, y, ps))
}

// TestFlushRewritesSegmentsOfGoneRecords: a commit never moves past a
// forgetting while a segment still holds the forgotten text, whoever
// commits (here, ordinary maintenance rather than Forget).
func TestFlushRewritesSegmentsOfGoneRecords(t *testing.T) {
	ctx := context.Background()
	store := newFakeStore()
	h := newHistory(51, store, testEmbedder)
	const secret = "wq9secretphrase17"
	store.put(memory.IndexRecord{Type: memory.TargetObservation, ID: "obs_s", Content: "deploy token " + secret, TS: 5,
		Scope: memory.Scope{RepoID: "/src/api"}, Position: -1})
	for range 200 {
		h.step()
	}
	dir := t.TempDir()
	x := openDir(t, dir, 7)
	syncX(t, x, store)
	if len(grepDir(t, dir, secret)) == 0 {
		t.Fatal("the word is in no file: the test would prove nothing")
	}
	store.put(memory.IndexRecord{Type: memory.TargetObservation, ID: "obs_s", Position: -1, Gone: true})
	syncX(t, x, store)
	x.maintain(ctx, 0)
	if got := grepDir(t, dir, secret); len(got) > 0 {
		t.Fatalf("maintenance committed past the forgetting; the word is still in %v", got)
	}
	y := openDir(t, dir, 7)
	syncX(t, y, store)
	ref := openMem(t)
	syncX(t, ref, store)
	ps := probes(52, 4)
	same(t, "after maintenance", describe(t, ref, ps), describe(t, y, ps))
}

// TestRepairBesideMaintenance: repairs (which build, holding the writers'
// lock) and maintenance (which holds it, then the index's lock) run
// together without waiting on each other forever.
func TestRepairBesideMaintenance(t *testing.T) {
	store := newFakeStore()
	h := newHistory(53, store, testEmbedder)
	dir := t.TempDir()
	x := openDir(t, dir, 7)
	syncX(t, x, store)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i := range 40 {
		for range 20 {
			h.step()
		}
		wg.Add(3)
		go func() { defer wg.Done(); x.maintain(ctx, 0) }()
		go func() {
			defer wg.Done()
			if i%4 == 0 {
				if err := x.Repair(ctx, store); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			if err := x.Sync(ctx, store); err != nil {
				errs <- err
			}
		}()
		wg.Wait()
		select {
		case err := <-errs:
			t.Fatalf("round %d: %v (a deadline here means the locks waited on each other)", i, err)
		default:
		}
	}
	ref := openMem(t)
	syncX(t, ref, store)
	syncX(t, x, store)
	ps := probes(54, 4)
	same(t, "after repairs", describe(t, ref, ps), describe(t, x, ps))
}

// TestDamageInADeletedDocument: the chunk of a document the manifest
// deletes is read at open; damage there is noticed and rebuilt, not a
// crash.
func TestDamageInADeletedDocument(t *testing.T) {
	store := newFakeStore()
	h := newHistory(55, store, testEmbedder)
	for range 300 {
		h.step()
	}
	dir := t.TempDir()
	x, err := Open(Options{Dir: dir, Embedder: testEmbedder, FlushDocs: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	syncX(t, x, store)
	// Replace a record that the single segment holds: the manifest then
	// deletes it there.
	store.mu.Lock()
	var rec memory.IndexRecord
	for _, k := range store.order {
		if r := store.recs[k]; !r.Gone && r.Type == memory.TargetObservation {
			rec = r
			break
		}
	}
	store.mu.Unlock()
	rec.Content += " again"
	store.put(rec)
	syncX(t, x, store)
	if err := x.Flush(context.Background(), store, 0, true); err != nil {
		t.Fatal(err)
	}
	x.Close()
	m, _ := readManifest(newMemStorageFrom(t, dir))
	if m.deadCount() == 0 {
		t.Fatal("the manifest deletes nothing: the test would prove nothing")
	}
	seg := filepath.Join(dir, m.Segments[0].Name)
	off, _ := sectionOffset(t, seg, "doc.ts")
	flip(t, seg, off+int(m.dead[0][0])*8)
	y := openDir(t, dir, 7)
	syncX(t, y, store)
	if y.builds.Load() != 1 {
		t.Fatalf("%d builds; the damage went unnoticed", y.builds.Load())
	}
	ref := openMem(t)
	syncX(t, ref, store)
	ps := probes(56, 4)
	same(t, "after the rebuild", describe(t, ref, ps), describe(t, y, ps))
}

// newMemStorageFrom reads a directory's manifest through dirStorage.
func newMemStorageFrom(t *testing.T, dir string) storage {
	t.Helper()
	s, err := newDirStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
