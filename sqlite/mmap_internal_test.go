package sqlite

import (
	"path/filepath"
	"testing"
)

// The readers map the file (up to 256 MiB each); the write connection
// maps none of it, so the pages a large write reads are not counted in
// the process's resident memory once more beside the readers' maps.
func TestOnlyReadersMapTheFile(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var w, r int64
	if err := db.w.QueryRow("PRAGMA mmap_size").Scan(&w); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRow("PRAGMA mmap_size").Scan(&r); err != nil {
		t.Fatal(err)
	}
	if w != 0 || r != 256<<20 {
		t.Fatalf("mmap_size: writer %d, readers %d; want 0 and %d", w, r, 256<<20)
	}
}
