package maintain_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

var ctx = context.Background()

const day = 24 * time.Hour

type fixture struct {
	db    *sqlite.DB
	l     *maintain.Lifecycle
	now   time.Time
	dir   string
	start time.Time
}

func newFixture(t *testing.T, format string) *fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(filepath.Join(dir, "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &fixture{db: db, dir: filepath.Join(dir, "archive"), start: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}
	f.now = f.start
	f.l = &maintain.Lifecycle{Store: db, Config: maintain.Config{RetentionDays: 30, ArchiveDir: f.dir, Format: format},
		Now: func() time.Time { return f.now }}
	return f
}

// seed writes thoughts th_0..th_{n-1}, with tags, a scope and summary links,
// and marks the first marked ones for removal at f.now.
func (f *fixture) seed(t *testing.T, n, marked int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := "th_" + string(rune('a'+i))
		th := memory.Thought{ID: id, Content: "thought " + id + " — ünïcode and \"quotes\"", Origin: memory.OriginTool,
			Tags: []string{"t" + id, "shared"}, Status: memory.StatusActive, Significance: 0.25, IsSummary: i == 0,
			SummaryOf: []string{"th_x", "th_y"}, Pipeline: "inner_voice", CreatedAt: int64(1000 + i),
			Scope: memory.Scope{SessionID: "s", RepoID: "r", AgentID: "a", UserID: "u"}}
		if _, err := f.db.AddThought(ctx, th); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := f.db.MarkRemoval(ctx, ids[:marked], f.now.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestExportWritesAReadableArchiveOfTheMarkedThoughts(t *testing.T) {
	for _, format := range []string{maintain.FormatParquet, maintain.FormatJSONL} {
		t.Run(format, func(t *testing.T) {
			f := newFixture(t, format)
			ids := f.seed(t, 4, 3)
			res, err := f.l.Export(ctx, maintain.ExportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Archive == nil || res.Exported != 3 || !slices.Equal(res.ThoughtIDs, ids[:3]) {
				t.Fatalf("export %+v", res)
			}
			a := res.Archive
			if filepath.Dir(a.Path) != f.dir || !strings.HasSuffix(a.Path, "."+format) || a.Rows != 3 || a.Format != format {
				t.Fatalf("archive %+v", a)
			}
			for path, want := range map[string]os.FileMode{f.dir: 0o700, a.Path: 0o600} {
				st, err := os.Stat(path)
				if err != nil || st.Mode().Perm() != want {
					t.Fatalf("%s: mode %v (%v); want %v", path, st.Mode().Perm(), err, want)
				}
			}
			if sum, _ := maintain.FileSHA256(a.Path); sum != a.SHA256 {
				t.Fatalf("recorded checksum %s; file's %s", a.SHA256, sum)
			}
			rows, err := maintain.ReadArchive(a.Path)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 3 {
				t.Fatalf("%d rows", len(rows))
			}
			r := rows[0]
			want := maintain.ArchivedThought{ID: "th_a", Content: "thought th_a — ünïcode and \"quotes\"", Origin: "tool",
				Tags: []string{"tth_a", "shared"}, Status: "removal", Significance: 0.25, IsSummary: true, SummaryOf: []string{"th_x", "th_y"},
				Pipeline: "inner_voice", CreatedAt: 1000, SessionID: "s", RepoID: "r", AgentID: "a", UserID: "u",
				MarkedAt: f.start.UnixMilli(), ArchivedAt: f.start.UnixMilli()}
			if !equalRows(r, want) {
				t.Fatalf("row read back:\n got  %+v\n want %+v", r, want)
			}
			// The store records the export.
			list, err := f.l.List(ctx, maintain.Page{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range list.Candidates {
				if c.Archive != a.Path || c.ExportedAt == "" || c.Finalizable {
					t.Fatalf("candidate after export %+v", c)
				}
			}
			// A second export finds nothing new; All exports them again.
			if again, err := f.l.Export(ctx, maintain.ExportOptions{}); err != nil || again.Archive != nil || len(again.ThoughtIDs) != 0 {
				t.Fatalf("second export %+v %v", again, err)
			}
			f.now = f.now.Add(time.Second)
			if again, err := f.l.Export(ctx, maintain.ExportOptions{All: true, Page: maintain.Page{Limit: 2}}); err != nil || again.Exported != 2 {
				t.Fatalf("export of all, limit 2: %+v %v", again, err)
			}
		})
	}
}

func equalRows(a, b maintain.ArchivedThought) bool {
	return a.ID == b.ID && a.Content == b.Content && a.Origin == b.Origin && slices.Equal(a.Tags, b.Tags) && a.IsPrivate == b.IsPrivate &&
		a.Status == b.Status && a.Significance == b.Significance && a.IsSummary == b.IsSummary && slices.Equal(a.SummaryOf, b.SummaryOf) &&
		a.Pipeline == b.Pipeline && a.CreatedAt == b.CreatedAt && a.SessionID == b.SessionID && a.RepoID == b.RepoID &&
		a.AgentID == b.AgentID && a.UserID == b.UserID && a.Redacted == b.Redacted && a.MarkedAt == b.MarkedAt && a.ArchivedAt == b.ArchivedAt
}

func reasons(rs []maintain.Refusal) map[string]string {
	m := map[string]string{}
	for _, r := range rs {
		m[r.ThoughtID] = r.Reason
	}
	return m
}

func TestFinalizeDeletesOnlyExportedThoughtsPastRetention(t *testing.T) {
	f := newFixture(t, maintain.FormatParquet)
	ids := f.seed(t, 5, 2) // th_a, th_b marked now
	if _, err := f.l.Export(ctx, maintain.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(10 * day)
	if _, err := f.db.MarkRemoval(ctx, ids[2:4], f.now.UnixMilli()); err != nil { // th_c, th_d: marked 10 days later
		t.Fatal(err)
	}
	if _, err := f.l.Export(ctx, maintain.ExportOptions{Page: maintain.Page{Limit: 1}}); err != nil { // exports th_c only
		t.Fatal(err)
	}

	// Within retention nothing goes, and each refusal says why.
	res, err := f.l.Finalize(ctx, maintain.FinalizeOptions{})
	if err != nil || len(res.Finalized) != 0 {
		t.Fatalf("finalize within retention: %+v %v", res, err)
	}
	why := reasons(res.Refused)
	if !strings.Contains(why["th_a"], "retention period of 30 days") || !strings.Contains(why["th_d"], "not exported") {
		t.Fatalf("reasons %v", why)
	}
	// th_a, th_b: 30 days after their marking; th_c is 20 days in.
	f.now = f.start.Add(30 * day)
	dry, err := f.l.Finalize(ctx, maintain.FinalizeOptions{DryRun: true})
	if err != nil || !slices.Equal(dry.Finalized, []string{"th_a", "th_b"}) || !dry.DryRun {
		t.Fatalf("dry run %+v %v", dry, err)
	}
	if _, err := f.db.Thought(ctx, "th_a"); err != nil {
		t.Fatal("a dry run deleted a thought")
	}
	// Naming a thought that is not finalizable refuses the whole call.
	_, err = f.l.Finalize(ctx, maintain.FinalizeOptions{ThoughtIDs: []string{"th_a", "th_c"}})
	if memory.CodeOf(err) != memory.CodeConflict || !strings.Contains(err.Error(), "th_c") {
		t.Fatalf("finalizing a thought within retention: %v", err)
	}
	_, err = f.l.Finalize(ctx, maintain.FinalizeOptions{ThoughtIDs: []string{"th_e"}})
	if memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("finalizing an unmarked thought: %v", err)
	}
	if _, err := f.db.Thought(ctx, "th_a"); err != nil {
		t.Fatal("a refused finalize deleted a thought")
	}
	// The archive of th_b is damaged: it is refused until exported again.
	list, _ := f.l.List(ctx, maintain.Page{})
	archive := list.Candidates[0].Archive
	if err := os.WriteFile(archive, []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err = f.l.Finalize(ctx, maintain.FinalizeOptions{})
	if err != nil || len(res.Finalized) != 0 || !strings.Contains(reasons(res.Refused)["th_a"], "missing or changed") {
		t.Fatalf("finalize with a damaged archive: %+v %v", res, err)
	}
	exp, err := f.l.Export(ctx, maintain.ExportOptions{})
	if err != nil || !slices.Contains(exp.ThoughtIDs, "th_a") || !slices.Contains(exp.ThoughtIDs, "th_b") {
		t.Fatalf("re-export after damage: %+v %v", exp, err)
	}
	res, err = f.l.Finalize(ctx, maintain.FinalizeOptions{})
	if err != nil || !slices.Equal(res.Finalized, []string{"th_a", "th_b"}) {
		t.Fatalf("finalize: %+v %v", res, err)
	}
	for _, id := range []string{"th_a", "th_b"} {
		if _, err := f.db.Thought(ctx, id); memory.CodeOf(err) != memory.CodeNotFound {
			t.Fatalf("%s survives finalize: %v", id, err)
		}
	}
	for _, id := range []string{"th_c", "th_d", "th_e"} {
		if _, err := f.db.Thought(ctx, id); err != nil {
			t.Fatalf("%s was deleted: %v", id, err)
		}
	}
	// The deleted thoughts live on in the archive.
	rows, err := maintain.ReadArchive(exp.Archive.Path)
	if err != nil || len(rows) != len(exp.ThoughtIDs) || rows[0].ID != exp.ThoughtIDs[0] {
		t.Fatalf("archive after finalize: %+v %v", rows, err)
	}
}

func TestRetentionZeroFinalizesRightAfterExport(t *testing.T) {
	f := newFixture(t, maintain.FormatJSONL)
	f.l.Config.RetentionDays = 0
	f.seed(t, 2, 2)
	res, _ := f.l.Finalize(ctx, maintain.FinalizeOptions{})
	if len(res.Finalized) != 0 || len(res.Refused) != 2 {
		t.Fatalf("finalize before export: %+v", res)
	}
	if _, err := f.l.Export(ctx, maintain.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if res, err := f.l.Finalize(ctx, maintain.FinalizeOptions{}); err != nil || len(res.Finalized) != 2 {
		t.Fatalf("finalize: %+v %v", res, err)
	}
}

func TestExportBadInputWritesNothing(t *testing.T) {
	f := newFixture(t, maintain.FormatParquet)
	f.seed(t, 2, 2)
	for _, o := range []maintain.ExportOptions{
		{Format: "csv"},
		{Subdir: "../escape"},
		{Subdir: "/etc"},
		{Subdir: "a/../../b"},
		{Page: maintain.Page{Limit: -1}},
		{Page: maintain.Page{Limit: maintain.MaxLimit + 1}},
		{Subdir: "bad\x00name"},
	} {
		if _, err := f.l.Export(ctx, o); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("export %+v: %v; want invalid_params", o, err)
		}
	}
	if _, err := os.Stat(f.dir); !os.IsNotExist(err) {
		t.Fatalf("bad exports created the archive directory: %v", err)
	}
	dry, err := f.l.Export(ctx, maintain.ExportOptions{DryRun: true})
	if err != nil || len(dry.ThoughtIDs) != 2 || dry.Archive != nil {
		t.Fatalf("dry run %+v %v", dry, err)
	}
	if _, err := os.Stat(f.dir); !os.IsNotExist(err) {
		t.Fatal("a dry run created the archive directory")
	}
	// A folder inside the archive directory is fine, as is its own path.
	res, err := f.l.Export(ctx, maintain.ExportOptions{Subdir: "2026/march"})
	if err != nil || filepath.Dir(res.Archive.Path) != filepath.Join(f.dir, "2026", "march") {
		t.Fatalf("export to a subfolder: %+v %v", res, err)
	}
	res, err = f.l.Export(ctx, maintain.ExportOptions{Subdir: f.dir, All: true})
	if err != nil || filepath.Dir(res.Archive.Path) != f.dir {
		t.Fatalf("export to the archive directory by its path: %+v %v", res, err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, warns, err := maintain.ConfigFromEnv(env())
	wd, _ := os.Getwd()
	if err != nil || len(warns) != 0 || c.RetentionDays != 30 || c.Format != "parquet" || c.ArchiveDir != filepath.Join(wd, "archive") {
		t.Fatalf("defaults %+v %v %v", c, warns, err)
	}
	c, warns, err = maintain.ConfigFromEnv(env("SURR_RETENTION_DAYS", "7", "SURR_ARCHIVE_DIR", "/var/cairn/arch", "SURR_ARCHIVE_FORMAT", "JSONL"))
	if err != nil || len(warns) != 0 || c.RetentionDays != 7 || c.Format != "jsonl" || c.ArchiveDir != "/var/cairn/arch" {
		t.Fatalf("set %+v %v %v", c, warns, err)
	}
	for _, bad := range []string{"-1", "x", "1.5", "36501"} {
		c, warns, err = maintain.ConfigFromEnv(env("SURR_RETENTION_DAYS", bad))
		if err != nil || len(warns) != 1 || c.RetentionDays != 30 {
			t.Errorf("SURR_RETENTION_DAYS=%s: %+v %v %v", bad, c, warns, err)
		}
	}
	if _, _, err := maintain.ConfigFromEnv(env("SURR_ARCHIVE_FORMAT", "csv")); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("unknown format: %v", err)
	}
}

// An export's output_dir stays inside the archive directory: no folder on
// its way may be a symbolic link (one planted there could lead anywhere),
// and its names come from a safe set, so no caller makes folders named
// "~" or "..%2f". A refused export writes nothing, anywhere.
func TestExportOutputDirStaysInside(t *testing.T) {
	f := newFixture(t, maintain.FormatJSONL)
	f.seed(t, 2, 2)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(f.dir, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.dir, "real"), filepath.Join(f.dir, "real", "inner")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "afile"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	listing := func() []string {
		var out []string
		for _, root := range []string{f.dir, outside} {
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, p)
				return nil
			})
		}
		return out
	}
	before := listing()
	for _, sub := range []string{
		"link", "link/deeper", "link/a/b", filepath.Join(f.dir, "link", "deeper"), // a link out of the archive directory
		"real/inner", "real/inner/x", // a link that stays inside is refused too
		"afile", "afile/x", // a file where a folder should be
		"~", "..%2f", "..%2fetc", "~root", ".hidden", "-rf", "a b", "a\\b", "é", "a:b", "$HOME", "a*",
		"..", "../x", "a/../b", "./a", "a/./b", "a//b", "/", filepath.Dir(f.dir),
		strings.Repeat("a", 65), "a/b/c/d/e/f/g/h/i",
	} {
		for _, dry := range []bool{false, true} {
			if _, err := f.l.Export(ctx, maintain.ExportOptions{Subdir: sub, DryRun: dry}); memory.CodeOf(err) != memory.CodeInvalidParams {
				t.Errorf("export to %q (dry run %v): %v; want invalid_params", sub, dry, err)
			} else if strings.Contains(err.Error(), f.dir) && !strings.HasPrefix(sub, f.dir) {
				t.Errorf("export to %q: the error %q names the archive directory's path", sub, err)
			}
		}
	}
	if after := listing(); !slices.Equal(before, after) {
		t.Fatalf("refused exports changed the files:\nbefore %v\nafter  %v", before, after)
	}
	for _, sub := range []string{"real", "2026/march", "v1.2_x-y/Q3", "exports/", strings.Repeat("a", 64), "a/b/c/d/e/f/g/h"} {
		res, err := f.l.Export(ctx, maintain.ExportOptions{Subdir: sub, All: true})
		if err != nil || res.Archive == nil || filepath.Dir(res.Archive.Path) != filepath.Join(f.dir, filepath.FromSlash(strings.TrimSuffix(sub, "/"))) {
			t.Fatalf("export to %q: %+v %v", sub, res, err)
		}
	}
	if des, err := os.ReadDir(outside); err != nil || len(des) != 0 {
		t.Fatalf("the folder the link points to holds %v (%v)", des, err)
	}
}
