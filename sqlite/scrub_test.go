package sqlite_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// A forget made while another connection holds a read cannot empty the
// write-ahead log: the reader's snapshot needs its frames, which hold the
// forgotten text (and the forget's pages may not reach the main file).
// Once the reader ends, the text must leave every file at the next write,
// by this process or another, or at the next background scrub, without
// waiting for another forget.
func TestForgetWithReaderScrubsTheLogLater(t *testing.T) {
	const secret = "zanzibar-forgotten-7f3a9c"
	// fast: a forget waits for the reader no longer than this.
	fast := &sqlite.Options{BusyTimeout: 20 * time.Millisecond}
	tests := []struct {
		name string
		// closeForgetter closes the forgetting handle while the reader
		// still holds the log (a cairn forget that exits).
		closeForgetter bool
		// after the reader ends, scrub makes the scrub happen, on the
		// forgetting handle a or on the other handle b.
		scrub func(t *testing.T, a, b *sqlite.DB)
	}{
		// Every later write tries the scrub (without waiting for
		// readers, so a transient lock of the machine's making can make
		// one try come back busy): a few writes empty the log.
		{"the forgetting process writes", false, func(t *testing.T, a, _ *sqlite.DB) {
			laterWrites(t, a, dbFile(a))
		}},
		{"another process writes after the forgetting one exits", true, func(t *testing.T, _, b *sqlite.DB) {
			laterWrites(t, b, dbFile(b))
		}},
		{"another process's background scrub", true, func(t *testing.T, _, b *sqlite.DB) {
			if pending, err := b.ScrubWAL(ctx); err != nil || pending {
				t.Fatalf("ScrubWAL after the reader ended: pending %v, %v; want done", pending, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cairn.db")
			a, err := sqlite.Open(path, fast)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := sqlite.Open(path, fast)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			mustAppend(t, a, obs("keep", "a record that stays", 1), obs("secret", "the password is "+secret, 2))

			reader, tx := holdRead(t, path)
			if _, err := a.Redact(ctx, "secret"); err != nil {
				t.Fatal(err)
			}
			// While the reader holds the log, the text is still in it:
			// the case this test is about.
			if !filesHold(t, path, secret) {
				t.Fatal("the forget emptied the log despite the open read; the test no longer covers a held log")
			}
			if pending, err := b.ScrubWAL(ctx); err != nil || !pending {
				t.Fatalf("ScrubWAL while the reader holds the log: pending %v, %v; want pending", pending, err)
			}
			if tt.closeForgetter {
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
			}
			tx.Rollback()
			reader.Close()

			tt.scrub(t, a, b)
			if filesHold(t, path, secret) {
				t.Fatal("forgotten text still in the database's files after the reader ended and the scrub was due")
			}
			if pending, err := b.ScrubWAL(ctx); err != nil || pending {
				t.Fatalf("ScrubWAL after the scrub: pending %v, %v; want nothing pending", pending, err)
			}
			got, err := b.Observation(ctx, "keep")
			if err != nil || got.Content != "a record that stays" {
				t.Fatalf("the kept record after the scrub: %+v, %v", got, err)
			}
		})
	}
}

// laterWrites writes to db until the forgotten text is gone from the
// database at file, at most three times.
func laterWrites(t *testing.T, db *sqlite.DB, file string) {
	t.Helper()
	for i := range 3 {
		mustAppend(t, db, obs(fmt.Sprintf("later%d", i), "a later write", int64(3+i)))
		if !filesHold(t, file, "zanzibar-forgotten-7f3a9c") {
			return
		}
	}
}

// dbFile is the database file db was opened on.
func dbFile(db *sqlite.DB) string { return db.Path() }

func mustAppend(t *testing.T, db *sqlite.DB, batch ...memory.NewObservation) {
	t.Helper()
	if _, err := db.AppendObservations(ctx, batch); err != nil {
		t.Fatal(err)
	}
}

// holdRead opens a separate connection to the database and starts a read
// transaction on it that has read a page, so it holds a snapshot.
func holdRead(t *testing.T, path string) (*sql.DB, *sql.Tx) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	tx, err := raw.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM observations").Scan(&n); err != nil || n != 2 {
		t.Fatalf("reader: %d observations, %v", n, err)
	}
	return raw, tx
}

// filesHold reports whether the database file or its write-ahead log holds
// text, byte for byte.
func filesHold(t *testing.T, path, text string) bool {
	t.Helper()
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(text)) {
			return true
		}
	}
	return false
}
