package sqlite_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// A backup taken while another handle writes is a sound database (mode
// 0600) holding every write acknowledged before it started, and none
// half-written; forgotten text is not in it.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cairn.db")
	db := openAt(t, path)
	defer db.Close()
	const secret = "quokkafern-secret-9071"
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{obs("secret", "the token is "+secret, 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Redact(ctx, "secret"); err != nil {
		t.Fatal(err)
	}
	var batch []memory.NewObservation
	for i := range 300 {
		batch = append(batch, obs(fmt.Sprintf("before%03d", i), strings.Repeat("acknowledged before the backup ", 10), int64(i)))
	}
	if _, err := db.AppendObservations(ctx, batch); err != nil {
		t.Fatal(err)
	}

	// Another handle (as another process would) writes throughout.
	writer := openAt(t, path)
	defer writer.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var written int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := writer.AppendObservations(ctx, []memory.NewObservation{obs(fmt.Sprintf("during%05d", i), "written during the backup", int64(1000+i))}); err != nil {
				t.Errorf("write during the backup: %v", err)
				return
			}
			written = i + 1
		}
	}()
	dest := filepath.Join(dir, "backups", "copy.db")
	var sizes []int64
	for range 3 {
		n, err := db.Backup(ctx, dest, true)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
	}
	close(stop)
	wg.Wait()
	if written == 0 {
		t.Log("the writer wrote nothing while the backups ran")
	}

	info, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 || info.Size() != sizes[len(sizes)-1] {
		t.Fatalf("backup file %v, %d bytes; want mode 0600 and %d bytes", info.Mode(), info.Size(), sizes[len(sizes)-1])
	}
	raw, _ := os.ReadFile(dest)
	if bytes.Contains(raw, []byte(secret)) {
		t.Fatal("the backup holds forgotten text")
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "backups", ".*"))
	if len(leftovers) > 0 {
		t.Fatalf("temporary files left behind: %v", leftovers)
	}

	cp := openAt(t, dest)
	defer cp.Close()
	findings, err := cp.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if !f.OK {
			t.Errorf("doctor on the backup: %+v", f)
		}
	}
	for i := range 300 {
		o, err := cp.Observation(ctx, fmt.Sprintf("before%03d", i))
		if err != nil || o.Content != batch[i].Content {
			t.Fatalf("write acknowledged before the backup: %+v %v", o, err)
		}
	}
	st, _ := cp.Stats(ctx)
	if st.Observations < 301 || st.Observations > 301+written || st.IndexedObservations != st.Observations-1 {
		t.Fatalf("backup stats %+v; want 301 to %d observations, all but the forgotten one indexed", st, 301+written)
	}
}

// An existing file is never replaced without overwrite; the database's
// own files and directories are refused; nothing is left behind.
func TestBackupRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cairn.db")
	db := openAt(t, path)
	defer db.Close()
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{obs("o1", "kept", 1)}); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "existing.db")
	os.WriteFile(existing, []byte("precious"), 0o644)
	if _, err := db.Backup(ctx, existing, false); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("backup over an existing file: %v; want conflict", err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "precious" {
		t.Fatal("the existing file was changed")
	}
	for _, dest := range []string{path, path + "-wal", dir, ""} {
		if _, err := db.Backup(ctx, dest, true); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("backup to %q: %v; want invalid_params", dest, err)
		}
	}
	if _, err := db.Backup(ctx, existing, true); err != nil {
		t.Fatalf("backup with overwrite: %v", err)
	}
	cp, err := sqlite.Open(existing, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if o, err := cp.Observation(ctx, "o1"); err != nil || o.Content != "kept" {
		t.Fatalf("the overwritten backup: %+v %v", o, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// pageCounts reads a database file's page_count and freelist_count.
func pageCounts(t *testing.T, path string) (pages, free int) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow("PRAGMA freelist_count").Scan(&free); err != nil {
		t.Fatal(err)
	}
	return pages, free
}

// The backup is SQLite's online backup: a copy page for page, free pages
// included (a VACUUM would leave them out), and the free pages that held
// forgotten text hold zeros, so none of it is in the copy.
func TestBackupCopiesEveryPage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cairn.db")
	db := openAt(t, path)
	defer db.Close()
	const secret = "wombatlichen-secret-4417"
	var batch []memory.NewObservation
	for i := range 80 {
		// Long enough to spill into overflow pages, which forgetting frees.
		batch = append(batch, obs(fmt.Sprintf("long%03d", i), secret+" "+strings.Repeat(fmt.Sprintf("filler%03d ", i), 900), int64(i)))
	}
	batch = append(batch, obs("kept", "a record that stays", 1000))
	if _, err := db.AppendObservations(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for i := range 80 {
		if _, err := db.Redact(ctx, fmt.Sprintf("long%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	srcPages, srcFree := pageCounts(t, path)
	if srcFree == 0 {
		t.Fatalf("forgetting freed no page (%d pages): the test proves nothing", srcPages)
	}
	db = openAt(t, path)
	dest := filepath.Join(dir, "copy.db")
	if _, err := db.Backup(ctx, dest, false); err != nil {
		t.Fatal(err)
	}
	pages, free := pageCounts(t, dest)
	if pages != srcPages || free != srcFree {
		t.Fatalf("the copy has %d pages, %d free; the database %d, %d free: not a page-for-page copy", pages, free, srcPages, srcFree)
	}
	raw, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte("filler007")) {
		t.Fatal("the copy holds forgotten text")
	}
	if !bytes.Contains(raw, []byte("a record that stays")) {
		t.Fatal("the copy lacks a live record: the byte search proves nothing")
	}
}
