package code_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/code"
)

// Hydrations of one episode at the same moment (an agent's parallel tool
// calls) all land, in some order, and the episode's seal stays whole: no
// conflict reaches the caller and tracking never reads as lost.
func TestConcurrentHydrationsOfOneEpisode(t *testing.T) {
	files := map[string]string{}
	for i := range 8 {
		files[fmt.Sprintf("pkg%d/f.go", i)] = goFile(fmt.Sprintf("pkg%d", i), fmt.Sprintf("Alpha%d", i), fmt.Sprintf("Beta%d", i))
	}
	f := newFixture(t, files)
	f.index(code.ApprovalImplicit)
	const callers = 8
	var wg sync.WaitGroup
	results := make([]code.HydrateResult, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = f.mem.Hydrate(f.ctx, code.HydrateRequest{
				Query: fmt.Sprintf("pkg%d/f.go Alpha%d", i, i), EpisodeID: "ep-shared", SessionID: "s1"})
		}()
	}
	// Proposals into the same episode race with the hydrations.
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("pkg%d/f.go::Beta%d", i, i)
			if _, err := f.mem.Propose(f.ctx, code.ProposeRequest{Key: key, Content: fmt.Sprintf("func Beta%d() int { return %d }", i, i),
				EpisodeID: "ep-shared", SessionID: "s1", RepoID: "repo"}); err != nil {
				t.Errorf("propose %s: %v", key, err)
			}
		}()
	}
	wg.Wait()
	rows := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("hydration %d: %v", i, err)
		}
		rows += len(results[i].Blocks)
	}
	view, err := f.mem.InspectHydration(f.ctx, "ep-shared")
	if err != nil {
		t.Fatal(err)
	}
	if !view.Tracking.OK || len(view.HydrationBlocks) != rows || view.Tracking.Rows != rows {
		t.Fatalf("after %d concurrent hydrations holding %d blocks: tracking %+v, %d rows recorded", callers, rows, view.Tracking, len(view.HydrationBlocks))
	}
	// Every caller's own file made it into the episode.
	seen := map[string]bool{}
	for _, b := range view.HydrationBlocks {
		seen[b.EntityKey] = true
	}
	for i := range callers {
		if k := fmt.Sprintf("pkg%d/f.go::Alpha%d", i, i); !seen[k] {
			t.Errorf("%s is missing from the episode", k)
		}
	}
}
