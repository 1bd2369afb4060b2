package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// writeForeign makes another program's database at path: a table of notes
// in WAL mode, and returns its connection, still open.
func writeForeign(t *testing.T, path string, notes ...string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE notes (id TEXT PRIMARY KEY, n INTEGER, w REAL, body BLOB, gone TEXT)"); err != nil {
		t.Fatal(err)
	}
	for i, s := range notes {
		if _, err := db.Exec("INSERT INTO notes VALUES (?, ?, 0.5, x'00ff', NULL)", s, i); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func ids(t *testing.T, f *sqlite.Foreign, limit int) ([]string, error) {
	t.Helper()
	rows, err := f.Rows(context.Background(), "notes", "SELECT id, n, w, body, gone FROM notes ORDER BY n", limit)
	var out []string
	for _, r := range rows {
		if _, ok := r["n"].(int64); !ok || r["w"] != 0.5 || string(r["body"].([]byte)) != "\x00\xff" || r["gone"] != nil {
			t.Fatalf("row %v: columns of the wrong Go types", r)
		}
		out = append(out, r["id"].(string))
	}
	return out, err
}

// A closed database is read as immutable: the file is read, not changed,
// and nothing is created beside it.
func TestForeignReadsAClosedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "other.db")
	w := writeForeign(t, path, "a", "b", "c")
	if err := w.Close(); err != nil { // the last connection checkpoints and removes the log
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	f, err := sqlite.OpenForeign(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ids(t, f, 10)
	if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("rows %v, %v", got, err)
	}
	if _, err := ids(t, f, 2); memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), "more than 2 notes") {
		t.Fatalf("over the limit: %v", err)
	}
	_, err = f.Rows(context.Background(), "pins", "SELECT id FROM pins", 10)
	if memory.CodeOf(err) != memory.CodeInvalidParams || memory.Public(err).Message != "the database file holds no readable pins" {
		t.Fatalf("a missing table: %v", err)
	}
	if _, err := f.Rows(context.Background(), "notes", "DELETE FROM notes", 10); err == nil {
		t.Fatal("a write went through")
	}
	f.Close()
	after, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if string(after) != string(before) || len(entries) != 1 {
		t.Fatalf("reading changed the file or left files beside it: %v", entries)
	}
}

// A database its writer still has open in WAL mode is read with what the
// writer committed to the log, not yet to the file.
func TestForeignReadsTheWriteAheadLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	w := writeForeign(t, path, "a", "b")
	defer w.Close()
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("the writer keeps no log: %v", err)
	}
	f, err := sqlite.OpenForeign(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ids(t, f, 10)
	if err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("rows %v, %v; want the two rows in the log", got, err)
	}
}

func TestForeignRefusesWhatIsNotADatabase(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.json")
	os.WriteFile(text, []byte(`{"version":"1.0"}`), 0o644)
	headerOnly := filepath.Join(dir, "header.db")
	os.WriteFile(headerOnly, []byte(sqlite.Header+strings.Repeat("\x01", 200)), 0o644)
	for _, path := range []string{text, headerOnly, filepath.Join(dir, "missing.db")} {
		f, err := sqlite.OpenForeign(path)
		if err == nil {
			f.Close()
		}
		if memory.CodeOf(err) != memory.CodeInvalidParams || strings.Contains(memory.Public(err).Message, dir) {
			t.Errorf("%s: %v; want invalid_params without the path", filepath.Base(path), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !os.IsNotExist(err) {
		t.Fatal("opening a missing file created it")
	}
}
