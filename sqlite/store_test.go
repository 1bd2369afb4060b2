package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
	"github.com/cairnhq/cairn/storetest"
)

func openTemp(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Store { return openTemp(t) })
}

func TestLedgerConformance(t *testing.T) {
	storetest.RunLedger(t, func(t *testing.T, now func() time.Time) memory.Store {
		db, err := sqlite.Open(filepath.Join(t.TempDir(), "cairn.db"), &sqlite.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

// BenchmarkStore runs the shared store benchmarks (ingest, import, the
// reads of a retrieval) on a database file in a temporary directory.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) memory.Store {
		db, err := sqlite.Open(filepath.Join(b.TempDir(), "cairn.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		return db
	})
}
