package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// Many more readers than read connections, each running queries the
// statement cache has not seen, must all finish: a reader holding a
// connection never waits for another connection to prepare a statement.
// (Before statements were prepared in the background, this deadlocked.)
func TestReadersOutnumberingThePoolFinish(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "cairn.db"), &sqlite.Options{ReadConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.PutCodeRepo(ctx, memory.CodeRepo{ID: "r", Root: "/src"}); err != nil {
		t.Fatal(err)
	}
	const readers = 32
	var wg sync.WaitGroup
	errs := make(chan error, readers*4)
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each reader mixes lookups with different SQL texts, so the
			// cache keeps meeting statements it has not prepared yet.
			if _, err := db.CodeRepo(ctx, "r"); err != nil {
				errs <- err
			}
			if _, err := db.Episode(ctx, fmt.Sprint("ep-", i)); !memory.IsCode(err, memory.CodeNotFound) {
				errs <- fmt.Errorf("episode: %v", err)
			}
			if _, err := db.SessionEpisodes(ctx, "s"); err != nil {
				errs <- err
			}
			if _, err := db.Stats(ctx); err != nil {
				errs <- err
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("readers still blocked after a minute: the read pool deadlocked")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
