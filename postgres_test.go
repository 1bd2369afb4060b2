package cairn_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/cairnhq/cairn/internal/pgtest"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var pgSchema atomic.Int64

// pgURL is a fresh, empty cairn schema on the package's PostgreSQL server
// (one database per test).
func pgURL(t testing.TB) string {
	t.Helper()
	srv := pgtest.Shared(t)
	return fmt.Sprintf("%s&cairn_schema=c%d", srv.NewDatabase(t), pgSchema.Add(1))
}

// The Kindling parity cases on PostgreSQL: the same answers as on SQLite,
// scores within 1e-9, the same departures.
func TestKindlingParityPostgres(t *testing.T) {
	url := pgURL(t)
	env := loadParityAt(t, url, t.TempDir(), func() (memory.Store, error) { return postgres.Open(context.Background(), url, nil) })
	runParity(t, env)
}
