package maintain_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
)

// The archives an export writes are listed newest first and open by
// name; nothing else in or around the archive directory does.
func TestListAndOpenArchives(t *testing.T) {
	f := newFixture(t, maintain.FormatJSONL)
	if got, err := maintain.ListArchives(f.dir); err != nil || len(got) != 0 {
		t.Fatalf("before any export (no directory): %v %v", got, err)
	}
	f.seed(t, 3, 3)
	first, err := f.l.Export(ctx, maintain.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Minute)
	second, err := f.l.Export(ctx, maintain.ExportOptions{All: true, Format: maintain.FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	// Files that are not archives are left out.
	for name, text := range map[string]string{"notes.txt": "x", ".removals-123.tmp": "partial", "thoughts-removal-x.jsonl": "{}"} {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(f.dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	list, err := maintain.ListArchives(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Path != second.Archive.Path || list[1].Path != first.Archive.Path {
		t.Fatalf("archives %+v", list)
	}
	if list[0].Format != maintain.FormatParquet || list[1].Format != maintain.FormatJSONL || list[1].Bytes != first.Archive.Bytes ||
		list[1].WrittenAt != f.start.UnixMilli() || list[0].WrittenAt != f.now.UnixMilli() {
		t.Fatalf("archive entries %+v", list)
	}
	fh, entry, err := maintain.OpenArchive(f.dir, list[1].Name)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(fh)
	fh.Close()
	if int64(len(data)) != first.Archive.Bytes || entry.Name != list[1].Name {
		t.Fatalf("opened %d bytes, entry %+v", len(data), entry)
	}
	// A link named like an archive, paths and other files do not open.
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o600)
	link := "thoughts-removal-20260101T000000.000Z-0123456789ab.jsonl"
	if err := os.Symlink(outside, filepath.Join(f.dir, link)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{link, "notes.txt", "../cairn.db", "sub/" + list[0].Name, filepath.Join(f.dir, list[0].Name), "", ".."} {
		if fh, _, err := maintain.OpenArchive(f.dir, name); memory.CodeOf(err) != memory.CodeNotFound {
			if fh != nil {
				fh.Close()
			}
			t.Errorf("OpenArchive(%q): %v; want not_found", name, err)
		}
	}
	if list, _ := maintain.ListArchives(f.dir); len(list) != 2 {
		t.Errorf("the link is listed: %+v", list)
	}
}
