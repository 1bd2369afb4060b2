package cairn_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// A long-running engine (cairn serve, cairn mcp) scrubs the write-ahead
// log that a forget could not empty because another process was reading,
// soon after the reader ends, with nothing written meanwhile: the
// background scrubber's next pass does it.
func TestBackgroundScrubEmptiesTheLogAReaderHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	ticks := make(chan time.Time)
	passes := make(chan bool)
	o := &cairn.Options{IndexBackground: true}
	cairn.SetScrubHooks(o, func(time.Duration) <-chan time.Time { return ticks }, func(pending bool, err error) {
		if err != nil {
			t.Errorf("scrub pass: %v", err)
		}
		passes <- pending
	})
	eng := openAt(t, path, o)
	const secret = "quetzal-forgotten-41d8"
	obs, err := eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: "the vault code is " + secret, ScopeIDs: memory.Scope{RepoID: repo}})
	if err != nil {
		t.Fatal(err)
	}
	// Another process's read, open during the forget.
	reader, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	reader.SetMaxOpenConns(1)
	tx, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM observations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Forget(ctx, obs.ID); err != nil {
		t.Fatal(err)
	}
	dbFiles := []string{filepath.Base(path), filepath.Base(path) + "-wal"}
	holding := func() []string {
		var out []string
		for _, f := range filesHolding(t, filepath.Dir(path), secret) {
			for _, d := range dbFiles {
				if f == d {
					out = append(out, f)
				}
			}
		}
		return out
	}
	if len(holding()) == 0 {
		t.Fatal("the forget emptied the log despite the open read: the test would prove nothing")
	}
	tick := func() bool {
		select {
		case ticks <- time.Time{}:
		case <-time.After(stuck):
			t.Fatal("the scrubber is not waiting")
		}
		select {
		case p := <-passes:
			return p
		case <-time.After(stuck):
			t.Fatal("the scrubber reported no pass")
		}
		return false
	}
	if !tick() {
		t.Fatal("a scrub pass while the reader holds the log says nothing is pending")
	}
	tx.Rollback()
	reader.Close()
	// The engine's own background work (the index catching up with the
	// forget) may be reading at the moment of a pass, which then finds
	// the log still held: the scrubber tries again at its next pass.
	for deadline := time.Now().Add(stuck); tick(); {
		if time.Now().After(deadline) {
			t.Fatal("scrub passes after the reader ended leave the scrub pending")
		}
	}
	if got := holding(); len(got) > 0 {
		t.Fatalf("after the reader ended and a scrub pass ran, the forgotten text is still in %v", got)
	}
}
