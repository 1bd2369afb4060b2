package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn/internal/pgtest"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
	"github.com/cairnhq/cairn/storetest"
)

var ctx = context.Background()

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var (
	dbOnce sync.Once
	dbURL  string
	dbErr  error
	schema atomic.Int64
)

// database is one database of the package's server that the tests share;
// each store lives in a schema of its own.
func database(t testing.TB) string {
	t.Helper()
	srv := pgtest.Shared(t)
	dbOnce.Do(func() {
		name := fmt.Sprintf("pkg%d", os.Getpid())
		if dbErr = srv.CreateDatabase(name); dbErr == nil {
			dbURL = srv.URL(name)
		}
	})
	if dbErr != nil {
		t.Fatal(dbErr)
	}
	return dbURL
}

// storeURL is the URL of a fresh, empty store with the given vector mode.
func storeURL(t testing.TB, vectors string) string {
	t.Helper()
	if vectors == "pgvector" && !pgtest.Shared(t).HasExtension("vector") {
		pgtest.Unavailable(t, fmt.Errorf("%s", pgtest.PGVectorInstall))
	}
	return fmt.Sprintf("%s&cairn_schema=s%d&cairn_vectors=%s", database(t), schema.Add(1), vectors)
}

func open(t testing.TB, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestConformance(t *testing.T) {
	for _, vectors := range []string{"pgvector", "array"} {
		t.Run(vectors, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) memory.Store {
				db := open(t, storeURL(t, vectors))
				if db.Vectors() != vectors {
					t.Fatalf("store keeps vectors as %s; want %s", db.Vectors(), vectors)
				}
				return db
			})
		})
	}
}

func TestLedgerConformance(t *testing.T) {
	storetest.RunLedger(t, func(t *testing.T, now func() time.Time) memory.Store {
		db, err := postgres.Open(ctx, storeURL(t, "array"), &postgres.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

// BenchmarkStore runs the shared store benchmarks (ingest, import, the
// reads of a retrieval) on a fresh schema of the package's server, with
// vectors in real[] arrays.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) memory.Store { return open(b, storeURL(b, "array")) })
}
