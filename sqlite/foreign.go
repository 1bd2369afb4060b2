package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"net/url"
	"os"

	"github.com/cairnhq/cairn/memory"
)

// Header is how every SQLite database file begins.
const Header = "SQLite format 3\x00"

// IsDatabase reports whether head (a file's first bytes) begins like a
// SQLite database.
func IsDatabase(head []byte) bool { return bytes.HasPrefix(head, []byte(Header)) }

// Foreign is another program's SQLite database, opened only to be read
// (an import from another memory system): cairn never writes to it,
// never creates it, and leaves its journal as it finds it.
type Foreign struct {
	db *sql.DB
}

// OpenForeign opens the SQLite database at path to read it. A file that
// is missing or is not a readable SQLite database is invalid_params.
//
// A database in WAL mode whose -wal file exists is opened read-only
// through SQLite's locks, so what its writer committed to the log is
// read too; otherwise the file is all there is, and it is opened as
// immutable, which creates no -shm or -wal file beside it.
func OpenForeign(path string) (*Foreign, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "the database file cannot be opened")
	}
	head := make([]byte, len(Header))
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || !IsDatabase(head) {
		return nil, memory.Errorf(memory.CodeInvalidParams, "the file is not a SQLite database")
	}
	mode := "immutable=1"
	if _, err := os.Stat(path + "-wal"); err == nil {
		mode = "mode=ro"
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+mode+"&_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "the database file cannot be opened")
	}
	db.SetMaxOpenConns(1)
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		db.Close()
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "the file is not a readable SQLite database (damaged, or locked by its writer)")
	}
	return &Foreign{db: db}, nil
}

// Rows runs a query and returns its rows, each as column name → value
// (int64, float64, string, []byte or nil), at most limit of them (more
// is invalid_params). A query the file cannot answer (a table or column
// it lacks, a damaged page) is invalid_params naming what was being read,
// never SQLite's text.
func (f *Foreign) Rows(ctx context.Context, what, query string, limit int, args ...any) ([]map[string]any, error) {
	bad := func(err error) error {
		return memory.Wrap(memory.CodeInvalidParams, err, "the database file holds no readable %s", what)
	}
	rows, err := f.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, bad(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, bad(err)
	}
	var out []map[string]any
	for rows.Next() {
		if len(out) == limit {
			return nil, memory.Errorf(memory.CodeInvalidParams, "the database file holds more than %d %s", limit, what)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, bad(err)
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, bad(err)
	}
	return out, nil
}

// Close releases the file.
func (f *Foreign) Close() error { return f.db.Close() }
