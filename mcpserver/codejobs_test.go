package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn"
)

// codeRepo writes a repository of n one-function Go files under dir/r.
func codeRepo(t *testing.T, dir string, n int) string {
	t.Helper()
	repo := filepath.Join(dir, "r")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%d.go", i)), fmt.Appendf(nil, "package r\n\nfunc F%d() {}\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

type jobAnswer struct {
	State      string               `json:"state"`
	Files      int                  `json:"files"`
	Promoted   int                  `json:"promoted"`
	Job        *cairn.CodeIndexJob  `json:"job"`
	Repository *cairn.CodeRepoState `json:"repository"`
}

func decodeTool(t *testing.T, line string, r toolResult, v any) {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %s", line)
	}
	if err := json.Unmarshal(r.StructuredContent, v); err != nil {
		t.Fatalf("decoding %s: %v", r.StructuredContent, err)
	}
}

// On the network faces' engine, the MCP tool code_index answers at once
// with a job; code_index_status and code_index_jobs follow it and
// code_index_cancel stops it, leaving the repository unindexed.
func TestCodeIndexJobOverMCP(t *testing.T) {
	roots := t.TempDir()
	repo := codeRepo(t, roots, 6)
	reached := make(chan struct{}, 1)
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{CodeRootsOnly: true, CodeRoots: []string{roots},
		CodeIndexJobs: cairn.CodeIndexJobOptions{Step: func(ctx context.Context, _ string, p cairn.CodeIndexProgress) {
			if p.Phase == "reading" && p.FilesDone == 3 {
				reached <- struct{}{}
				<-ctx.Done() // held until cancelled
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	c := startMCP(t, eng, nil)
	var a jobAnswer
	line, r := c.tool("code_index", map[string]any{"root": repo, "repo_id": "r"})
	decodeTool(t, line, r, &a)
	if a.Job == nil || a.Repository == nil || a.Repository.Indexed || (a.State != "running" && a.State != "queued") {
		t.Fatalf("code_index: %s", line)
	}
	<-reached
	var st cairn.CodeIndexJob
	line, r = c.tool("code_index_status", map[string]any{"job_id": a.Job.ID})
	decodeTool(t, line, r, &st)
	if st.State != "running" || st.Progress.FilesDone != 3 || st.Progress.FilesTotal != 6 {
		t.Fatalf("code_index_status: %s", line)
	}
	var list cairn.CodeIndexJobList
	line, r = c.tool("code_index_jobs", map[string]any{"repo_id": "r"})
	decodeTool(t, line, r, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != a.Job.ID {
		t.Fatalf("code_index_jobs: %s", line)
	}
	line, r = c.tool("code_index_cancel", map[string]any{"job_id": a.Job.ID})
	decodeTool(t, line, r, &st)
	if st.State != "cancelled" || st.CancelledBy != "caller" {
		t.Fatalf("code_index_cancel: %s", line)
	}
	if _, r := c.tool("code_entities", map[string]any{"repo_id": "r"}); r.errorCode() != "not_found" {
		t.Fatalf("a cancelled job left entities: %+v", r)
	}
	if _, r := c.tool("code_index_status", map[string]any{"job_id": "job_nope"}); r.errorCode() != "not_found" {
		t.Fatalf("unknown job: %+v", r)
	}
}

// Over stdio (the user's own engine) code_index runs to its end in the
// call, as before, and there are no jobs to follow.
func TestCodeIndexInTheCallOverStdio(t *testing.T) {
	repo := codeRepo(t, t.TempDir(), 3)
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	c := startMCP(t, eng, nil)
	var a jobAnswer
	line, r := c.tool("code_index", map[string]any{"root": repo, "repo_id": "r", "wait": false})
	decodeTool(t, line, r, &a)
	if a.State != "done" || a.Job != nil || a.Files != 3 || a.Promoted != 3 {
		t.Fatalf("code_index over stdio: %s", line)
	}
	for _, tool := range []string{"code_index_status", "code_index_cancel"} {
		if _, r := c.tool(tool, map[string]any{"job_id": "job_x"}); r.errorCode() != "feature_disabled" {
			t.Fatalf("%s over stdio: %+v", tool, r)
		}
	}
}
