package cairn_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// code_index past its caller's deadline is timeout, never db_error, on
// every path: in the call (the CLI and MCP over stdio), starting a job
// and waiting for one (the network faces).
func TestCodeIndexPastItsDeadlineIsTimeout(t *testing.T) {
	roots := t.TempDir()
	repo := filepath.Join(roots, "r")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "k.go"), []byte("package k\n\nfunc K() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(o cairn.Options) *cairn.Engine {
		o.Embedder = embed.Hash{Dim: 64}
		return openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &o)
	}
	held := func(ctx context.Context, _ string, p cairn.CodeIndexProgress) {
		if p.Phase == "reading" {
			<-ctx.Done() // held until cancelled
		}
	}
	local := open(cairn.Options{})
	network := open(cairn.Options{CodeRootsOnly: true, CodeRoots: []string{roots}, CodeIndexJobs: cairn.CodeIndexJobOptions{Step: held}})
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	args := []byte(`{"root":"` + repo + `","repo_id":"r"}`)
	wait := []byte(`{"root":"` + repo + `","repo_id":"r","wait":true}`)
	for _, c := range []struct {
		name string
		eng  *cairn.Engine
		ctx  context.Context
		args []byte
	}{
		{"in the call", local, past, args},
		{"starting a job", network, past, args},
	} {
		if _, err := c.eng.CallJSON(c.ctx, "code_index", c.args); memory.CodeOf(err) != memory.CodeTimeout {
			t.Errorf("%s: %v; want timeout", c.name, err)
		}
	}
	// A job held while it reads: waiting for it past a deadline is
	// timeout, and the job goes on until cancelled.
	soon, stop := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer stop()
	if _, err := network.CallJSON(soon, "code_index", wait); memory.CodeOf(err) != memory.CodeTimeout {
		t.Fatalf("waiting past the deadline: %v; want timeout", err)
	}
	list, err := network.CodeIndexJobs(context.Background(), cairn.CodeIndexJobsRequest{})
	if err != nil || len(list.Jobs) != 1 || list.Jobs[0].State != "running" {
		t.Fatalf("the job after the timeout: %+v %v", list, err)
	}
	j, err := network.CancelCodeIndex(context.Background(), cairn.CodeIndexJobRef{JobID: list.Jobs[0].ID})
	if err != nil || j.State != "cancelled" {
		t.Fatalf("cancel: %+v %v", j, err)
	}
}
