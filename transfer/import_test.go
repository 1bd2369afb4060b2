package transfer_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
	"github.com/cairnhq/cairn/transfer"
)

// watchedStore is a store that notes, each time it is handed records to
// import, how many and how much of the heap is then live.
type watchedStore struct {
	memory.Store
	largestPart, parts int
	peakLive           uint64
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func (w *watchedStore) handed(d memory.Dump) {
	w.parts++
	w.largestPart = max(w.largestPart, d.Len())
	w.peakLive = max(w.peakLive, liveHeap())
}

func (w *watchedStore) Import(ctx context.Context, d memory.Dump, progress func(int)) error {
	w.handed(d)
	return w.Store.Import(ctx, d, progress)
}

func (w *watchedStore) Load(ctx context.Context, next func() (memory.Dump, error), progress func(int), check func(memory.Loaded) error) error {
	watched := func() (memory.Dump, error) {
		d, err := next()
		if d.Len() > 0 {
			w.handed(d)
		}
		return d, err
	}
	return w.Store.(memory.Loader).Load(ctx, watched, progress, check)
}

// observationLines is JSON Lines of n observations as Export writes
// them, each with about size bytes of text, made as they are read.
func observationLines(n, size int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		filler := strings.Repeat("import streamed ", size/16)
		for i := range n {
			fmt.Fprintf(pw, `{"observation":{"id":"obs_%07d","kind":"message","content":"record %d %s","provenance":{},"ts":%d,"scopeIds":{"repoId":"r"},"redacted":false}}`+"\n",
				i, i, filler, 1_700_000_000_000+i)
		}
		pw.Close()
	}()
	return pr
}

func newMover(t *testing.T, store memory.Store) *transfer.Mover {
	t.Helper()
	return &transfer.Mover{Store: store, MaxBytes: 1 << 20, Redact: func(s string) string { return s },
		Now: func() int64 { return 1_700_000_000_000 }, Logger: slog.New(slog.DiscardHandler),
		Logged: func([]byte, int64) (memory.NewObservation, error) {
			return memory.NewObservation{}, memory.Errorf(memory.CodeInvalidParams, "only records here")
		}}
}

// A JSON Lines import hands the store a part of at most PartRecords
// records at a time, so what it holds does not grow with the file: a
// 32 MiB import never has more than a quarter of its size live on the
// heap (the file parsed whole had all of it, and more, at once).
func TestImportHoldsOnePartAtATime(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store := &watchedStore{Store: db}
	const n, size = 16384, 2048 // 32 MiB of text
	base := liveHeap()
	rep, err := newMover(t, store).Import(context.Background(), observationLines(n, size), transfer.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Observations != n {
		t.Fatalf("imported %d observations; want %d", rep.Observations, n)
	}
	st, err := db.Stats(context.Background())
	if err != nil || st.Observations != n || st.IndexedObservations != n {
		t.Fatalf("the database holds %d observations, %d indexed (%v); want %d", st.Observations, st.IndexedObservations, err, n)
	}
	grown := int64(store.peakLive) - int64(base)
	if limit := int64(n * size / 4); grown > limit {
		t.Fatalf("the live heap grew by %d MiB during the import of %d MiB; want at most %d MiB", grown>>20, n*size>>20, limit>>20)
	}
	if store.largestPart > transfer.PartRecords || store.parts < n/transfer.PartRecords {
		t.Fatalf("the store was handed %d parts, the largest of %d records; want at least %d of at most %d",
			store.parts, store.largestPart, n/transfer.PartRecords, transfer.PartRecords)
	}
	t.Logf("%d parts; the live heap grew by at most %.1f MiB", store.parts, float64(grown)/(1<<20))
}
