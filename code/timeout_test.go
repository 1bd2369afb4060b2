package code_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// A call whose time limit passes (the HTTP request timeout) reports
// timeout, not db_error, at whichever step the deadline meets: before
// the first write, or between two files of a large index.
func TestIndexPastItsDeadlineIsTimeout(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("f%02d.go", i)] = fmt.Sprintf("package p\n\nfunc F%d() {}\n", i)
	}
	f := newFixture(t, files)
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := f.mem.Index(past, code.IndexRequest{Root: f.root, RepoID: "r"})
	if memory.CodeOf(err) != memory.CodeTimeout {
		t.Fatalf("expired deadline: %v (%s); want timeout", err, memory.CodeOf(err))
	}
	ctx, stop := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer stop()
	mid, expire := context.WithCancelCause(ctx)
	_, err = f.mem.Index(mid, code.IndexRequest{Root: f.root, RepoID: "r2", Progress: func(done, total int) {
		if done == total/2 {
			expire(context.DeadlineExceeded)
		}
	}})
	if memory.CodeOf(err) != memory.CodeTimeout {
		t.Fatalf("deadline mid-index: %v (%s); want timeout", err, memory.CodeOf(err))
	}
	_, err = f.mem.Hydrate(past, code.HydrateRequest{Query: "F1", EpisodeID: "e1", SessionID: "s1", RepoID: "r"})
	if c := memory.CodeOf(err); c != memory.CodeTimeout && c != memory.CodeNotFound {
		t.Fatalf("hydrate past its deadline: %v (%s); want timeout", err, c)
	}
}
