package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// cairnRun runs the binary with env added and returns stdout; it fails the
// test on a non-zero exit.
func cairnRun(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(cairnBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cairn %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// TestArchiveReadByAnIndependentReader exports thoughts marked for removal
// with the real binary and reads the Parquet file back with hyparquet (npm,
// installed by .ci/run with `npm ci` in e2e/parquet-reader), a reader
// cairn did not write, as a user would; then finalizes them and checks the
// archive still holds everything the database no longer does.
func TestArchiveReadByAnIndependentReader(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat("parquet-reader/node_modules/hyparquet/package.json")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install node and hyparquet (cd e2e/parquet-reader && npm ci): %v", err)
		}
		t.Skipf("needs node and hyparquet: run (cd e2e/parquet-reader && npm ci): %v", err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "cairn.db")
	env := []string{"SURR_ARCHIVE_DIR=" + filepath.Join(dir, "archive"), "SURR_ENABLE_INNER_VOICE=1"}
	now := "--now=2026-03-04T10:00:00Z"
	var want []memory.Thought
	for _, args := range [][]string{
		{"think", "--origin", "human", "--tag", "auth", "--tag", "ops", "--scope", "repo=/src/auth,session=s1", "Clock drift breaks session token expiry."},
		{"think", "--private", "--significance", "0.9", "Ünïcödé, \"quotes\", a tab\tand a newline\nin one thought."},
		{"think", "--summary", "--summary-of", "th_a,th_b", "--pipeline", "inner_voice", "A summary of two thoughts."},
	} {
		var th memory.Thought
		if err := json.Unmarshal([]byte(cairnRun(t, env, append([]string{"--db", db, now, "--json"}, args...)...)), &th); err != nil {
			t.Fatal(err)
		}
		cairnRun(t, env, "--db", db, now, "thoughts", "mark", th.ID)
		th.Status = memory.StatusRemoval
		want = append(want, th)
	}
	var exp cairn.MaintenanceResult
	if err := json.Unmarshal([]byte(cairnRun(t, env, "--db", db, now, "--json", "maintenance", "export")), &exp); err != nil {
		t.Fatal(err)
	}
	if exp.Export == nil || exp.Export.Archive == nil || exp.Export.Exported != 3 {
		t.Fatalf("export %+v", exp)
	}
	out, err := exec.Command(node, "parquet-reader/read.mjs", exp.Export.Archive.Path).CombinedOutput()
	if err != nil {
		t.Fatalf("hyparquet could not read the archive: %v\n%s", err, out)
	}
	var got struct {
		Columns []string         `json:"columns"`
		Rows    []map[string]any `json:"rows"`
		NumRows int              `json:"num_rows"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("reader output %s: %v", out, err)
	}
	wantCols := []string{"id", "content", "origin", "tags", "is_private", "status", "significance", "is_summary", "summary_of", "pipeline",
		"created_at", "session_id", "repo_id", "agent_id", "user_id", "redacted", "marked_at", "archived_at"}
	if !slices.Equal(got.Columns, wantCols) || got.NumRows != 3 || len(got.Rows) != 3 {
		t.Fatalf("columns %v, %d rows", got.Columns, got.NumRows)
	}
	marked := float64(1772618400000) // 2026-03-04T10:00:00Z
	for _, w := range want {
		i := slices.IndexFunc(got.Rows, func(r map[string]any) bool { return r["id"] == w.ID })
		if i < 0 {
			t.Fatalf("thought %s is not in the archive", w.ID)
		}
		r := got.Rows[i]
		if r["content"] != w.Content || r["origin"] != string(w.Origin) || r["is_private"] != w.IsPrivate || r["status"] != "removal" ||
			r["significance"] != w.Significance || r["is_summary"] != w.IsSummary || r["pipeline"] != w.Pipeline ||
			r["created_at"] != float64(w.CreatedAt) || r["repo_id"] != w.Scope.RepoID || r["session_id"] != w.Scope.SessionID ||
			r["marked_at"] != marked || r["archived_at"] != marked || r["redacted"] != false {
			t.Fatalf("row %v\nwant %+v", r, w)
		}
		if strings.Join(anyStrings(r["tags"]), ",") != strings.Join(w.Tags, ",") || strings.Join(anyStrings(r["summary_of"]), ",") != strings.Join(w.SummaryOf, ",") {
			t.Fatalf("lists of %s: tags %v summary_of %v; want %v %v", w.ID, r["tags"], r["summary_of"], w.Tags, w.SummaryOf)
		}
	}
	// Finalize 31 days later: the thoughts leave the database, the archive
	// keeps them.
	fin := cairnRun(t, env, "--db", db, "--now=2026-04-04T10:00:00Z", "maintenance", "finalize")
	if !strings.Contains(fin, "deleted 3 thoughts") {
		t.Fatalf("finalize: %s", fin)
	}
	if list := cairnRun(t, env, "--db", db, "thoughts", "--private"); !strings.Contains(list, "no thoughts") {
		t.Fatalf("thoughts after finalize: %s", list)
	}
	out, err = exec.Command(node, "parquet-reader/read.mjs", exp.Export.Archive.Path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Clock drift breaks session token expiry.") {
		t.Fatalf("the archive after finalize: %v\n%s", err, out)
	}
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
