package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// TestCodeMigrationIsIdempotent reruns migration 5 over its own tables (as
// a process racing another would) and finds the code memory kept.
func TestCodeMigrationIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutCodeRepo(ctx, memory.CodeRepo{ID: "r", Root: "/src", IndexedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplyEpisode(ctx, memory.EpisodeChange{Episode: memory.Episode{ID: "e", SessionID: "s"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	rawExec(t, path, "PRAGMA user_version=4")
	db, err = sqlite.Open(path, nil)
	if err != nil {
		t.Fatalf("reapplying migration 5: %v", err)
	}
	defer db.Close()
	if r, err := db.CodeRepo(ctx, "r"); err != nil || r.Root != "/src" {
		t.Fatalf("repository after the rerun: %+v, %v", r, err)
	}
	st, err := db.Stats(ctx)
	if err != nil || st.SchemaVersion != sqlite.SchemaVersion() || st.CodeEpisodes != 1 {
		t.Fatalf("stats after the rerun: %+v, %v", st, err)
	}
}
