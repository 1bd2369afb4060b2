package cairn_test

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
)

// The archives an export writes are listed and opened by name through the
// engine, and stay after their thoughts are finalized.
func TestRemovalArchives(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "archive")
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	eng, ts := askEngine(t, &cairn.Options{Now: func() time.Time { return now },
		Maintenance: &maintain.Config{RetentionDays: 0, ArchiveDir: dir, Format: "jsonl"}})
	if list, err := eng.RemovalArchives(ctx); err != nil || len(list) != 0 {
		t.Fatalf("before any export: %+v %v", list, err)
	}
	if _, err := eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: ts[0].ID, Status: memory.StatusRemoval}); err != nil {
		t.Fatal(err)
	}
	exp, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: cairn.OpExportRemovals})
	if err != nil || exp.Export.Archive == nil {
		t.Fatalf("export %+v %v", exp, err)
	}
	if _, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: cairn.OpFinalizeRemoval}); err != nil {
		t.Fatal(err)
	}
	list, err := eng.RemovalArchives(ctx)
	if err != nil || len(list) != 1 || list[0].Path != exp.Export.Archive.Path || list[0].Format != "jsonl" {
		t.Fatalf("archives %+v %v", list, err)
	}
	f, entry, err := eng.OpenRemovalArchive(ctx, list[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	if int64(len(data)) != exp.Export.Archive.Bytes || entry.Bytes != int64(len(data)) {
		t.Fatalf("read %d bytes of %d", len(data), exp.Export.Archive.Bytes)
	}
	for _, name := range []string{exp.Export.Archive.Path, "../cairn.db", "thoughts-removal-nope.jsonl"} {
		if _, _, err := eng.OpenRemovalArchive(ctx, name); memory.CodeOf(err) != memory.CodeNotFound {
			t.Errorf("opening %q: %v; want not_found", name, err)
		}
	}
}
