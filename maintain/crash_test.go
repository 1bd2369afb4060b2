package maintain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// The crash tests run this test binary again as a child process that
// exports (and finalizes) thoughts marked for removal and kills itself
// with SIGKILL at one step: after writing the temporary archive, after
// renaming it, after recording the export, or just before deleting. The
// parent then opens what the child left and checks that nothing was lost:
// every thought is still in the database, or was deleted only after an
// intact archive holding it was recorded; a normal export and finalize
// then archive and delete all of them.

var crashStart = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

const (
	crashThoughts = 20
	crashMarked   = 12
)

// TestCrashChild is the child process; run alone it has nothing to do.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("CAIRN_MAINTAIN_CRASH_DIR")
	if dir == "" {
		t.Skip("the child process of the crash tests; they run it with CAIRN_MAINTAIN_CRASH_DIR set")
	}
	stage := os.Getenv("CAIRN_MAINTAIN_CRASH_STAGE")
	crashHook = func(step string) {
		if step == stage {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	db, err := sqlite.Open(filepath.Join(dir, "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := crashLifecycle(db, dir, crashStart.Add(31*24*time.Hour))
	if _, err := l.Export(context.Background(), ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finalize(context.Background(), FinalizeOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("the child reached the end without being killed at %s", stage)
}

func crashLifecycle(db *sqlite.DB, dir string, now time.Time) *Lifecycle {
	return &Lifecycle{Store: db, Config: Config{RetentionDays: 30, ArchiveDir: filepath.Join(dir, "archive"), Format: FormatParquet},
		Now: func() time.Time { return now }}
}

func crashSeed(t *testing.T, dir string) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(dir, "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	for i := range crashThoughts {
		id := fmt.Sprintf("th_%02d", i)
		if _, err := db.AddThought(context.Background(), memory.Thought{ID: id, Content: "content of " + id, Origin: memory.OriginModel,
			Status: memory.StatusActive, Significance: 0.5, CreatedAt: int64(i)}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := db.MarkRemoval(context.Background(), ids[:crashMarked], crashStart.UnixMilli()); err != nil {
		t.Fatal(err)
	}
}

// archived reads every archive in dir: thought id → content.
func archived(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(dir, "archive", "thoughts-removal-*"))
	for _, f := range files {
		rows, err := ReadArchive(f)
		if err != nil {
			t.Fatalf("archive %s left by a killed export does not read: %v", f, err)
		}
		for _, r := range rows {
			out[r.ID] = r.Content
		}
	}
	return out
}

func TestKilledBetweenExportAndFinalizeLosesNothing(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("the crash tests kill a child process with SIGKILL, which this system lacks")
	}
	for _, stage := range []string{"archive-temp-written", "archive-renamed", "export-recorded", "finalize-before-delete"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			crashSeed(t, dir)
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "CAIRN_MAINTAIN_CRASH_DIR="+dir, "CAIRN_MAINTAIN_CRASH_STAGE="+stage)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child did not die by SIGKILL at %s: %v\n%s", stage, err, out)
			}

			db, err := sqlite.Open(filepath.Join(dir, "cairn.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// Nothing is lost: every thought is in the database, or was
			// deleted after an archive holding it was recorded.
			ctx := context.Background()
			inArchive := archived(t, dir)
			for i := range crashThoughts {
				id := fmt.Sprintf("th_%02d", i)
				th, err := db.Thought(ctx, id)
				switch {
				case err == nil && th.Content == "content of "+id:
				case memory.CodeOf(err) == memory.CodeNotFound && inArchive[id] == "content of "+id:
				default:
					t.Fatalf("after a kill at %s, thought %s is lost: %+v %v (archived %q)", stage, id, th, err, inArchive[id])
				}
			}
			rs, err := db.Removals(ctx, 0, 100)
			if err != nil || len(rs) != crashMarked {
				t.Fatalf("after a kill at %s, %d thoughts are marked (%v); want %d", stage, len(rs), err, crashMarked)
			}
			exported := slices.ContainsFunc(rs, func(r memory.Removal) bool { return r.ExportedAt != 0 })
			if wantExported := stage == "export-recorded" || stage == "finalize-before-delete"; exported != wantExported {
				t.Fatalf("after a kill at %s the export is recorded: %v; want %v", stage, exported, wantExported)
			}

			// The next export and finalize complete the work.
			l := crashLifecycle(db, dir, crashStart.Add(31*24*time.Hour))
			if _, err := l.Export(ctx, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			res, err := l.Finalize(ctx, FinalizeOptions{})
			if err != nil || len(res.Finalized) != crashMarked || len(res.Refused) != 0 {
				t.Fatalf("finalize after the kill: %+v %v", res, err)
			}
			inArchive = archived(t, dir)
			for i := range crashThoughts {
				id := fmt.Sprintf("th_%02d", i)
				_, err := db.Thought(ctx, id)
				if i < crashMarked {
					if memory.CodeOf(err) != memory.CodeNotFound || inArchive[id] != "content of "+id {
						t.Fatalf("marked thought %s: %v, archived %q", id, err, inArchive[id])
					}
				} else if err != nil {
					t.Fatalf("unmarked thought %s: %v", id, err)
				}
			}
			// A half-written archive never carries a final name.
			files, _ := os.ReadDir(filepath.Join(dir, "archive"))
			for _, f := range files {
				if !strings.HasPrefix(f.Name(), "thoughts-removal-") && !strings.HasPrefix(f.Name(), tempPrefix) {
					t.Fatalf("unexpected file %s in the archive directory", f.Name())
				}
			}
		})
	}
}
