package cairn_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// answers is what a set of retrievals returns, as JSON.
func answers(t *testing.T, eng *cairn.Engine) []string {
	t.Helper()
	var out []string
	for _, q := range []cairn.RetrieveRequest{
		{Query: "webhook retried duplicate", ScopeIDs: memory.Scope{RepoID: repo}, TokenBudget: ptr(500)},
		{Query: "why did the deploy fail", MaxCandidates: ptr(10)},
		{Query: "webhook retried duplicate", Provider: retrieve.LocalFTSName},
		{Query: "the note written after the backup"},
	} {
		res, err := eng.Retrieve(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		out = append(out, string(b))
	}
	return out
}

func doctorOK(t *testing.T, eng *cairn.Engine, what string) {
	t.Helper()
	rep, err := eng.Doctor(ctx, cairn.DoctorRequest{})
	if err != nil || !rep.OK {
		t.Fatalf("doctor on %s: %+v %v", what, rep, err)
	}
}

// A backup answers every retrieval as the database did when it was taken;
// restored over the original (whose retrieval index has moved on since),
// it answers the same again: the index of the other history is not used.
func TestBackupAnswersTheSameAndRestores(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "cairn.db")
	eng := openSampleAt(t, orig, nil)
	want := answers(t, eng)
	wantExport := export(t, eng)
	dest := filepath.Join(dir, "backup.db")
	rep, err := eng.Backup(ctx, cairn.BackupRequest{Dest: dest})
	if err != nil || rep.Bytes == 0 {
		t.Fatalf("backup: %+v %v", rep, err)
	}
	if _, err := eng.Backup(ctx, cairn.BackupRequest{Dest: dest}); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("a second backup to the same file: %v; want conflict", err)
	}

	cp := openAt(t, dest, nil)
	doctorOK(t, cp, "the backup")
	got := answers(t, cp)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("retrieval %d on the backup differs:\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
	if export(t, cp) != wantExport {
		t.Fatal("the backup's export differs from the database's")
	}
	cp.Close()

	// The original moves on: a write, found, and written into its index's
	// files.
	if _, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: "the note written after the backup"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.OptimizeIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
	if moved := answers(t, eng); moved[3] == want[3] {
		t.Fatal("the write after the backup is not found in the original")
	}
	eng.Close()

	// Restore: the copy moved into place, with the original's index
	// directory left as it was.
	if err := copyFile(dest, orig); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{orig + "-wal", orig + "-shm"} {
		os.Remove(f)
	}
	restored := openAt(t, orig, nil)
	doctorOK(t, restored, "the restored database")
	got = answers(t, restored)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("retrieval %d on the restored database differs:\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// On PostgreSQL, Backup is feature_disabled and names pg_dump and migrate.
func TestBackupOnPostgresIsFeatureDisabled(t *testing.T) {
	o := &cairn.Options{IndexDir: filepath.Join(t.TempDir(), "index")}
	eng, err := cairn.Open(pgURL(t), o)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	dest := filepath.Join(t.TempDir(), "copy.db")
	_, err = eng.Backup(context.Background(), cairn.BackupRequest{Dest: dest})
	if memory.CodeOf(err) != memory.CodeFeatureDisabled || !strings.Contains(err.Error(), "pg_dump") {
		t.Fatalf("Backup on postgres: %v", err)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("Backup on postgres wrote %s (stat: %v)", dest, err)
	}
}
