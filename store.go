package cairn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
	"github.com/cairnhq/cairn/sqlite"
)

// IsPostgres reports whether path names a PostgreSQL database
// (postgres://... or postgresql://...) rather than a SQLite file.
func IsPostgres(path string) bool { return postgres.IsURL(path) }

// displayPath is path as it may be shown: a connection string loses its
// password.
func displayPath(path string) string {
	if IsPostgres(path) {
		return postgres.Redact(path)
	}
	return path
}

// DisplayPath is path (a file or a connection string) as it may be shown
// to a person: without a password.
func DisplayPath(path string) string { return displayPath(path) }

// SpoolDir is where capture hooks keep the batches waiting for the
// database at path: beside a SQLite file; for PostgreSQL, in this
// machine's cache directory, under a name derived from the connection
// string without its password.
func SpoolDir(path string) string {
	if !IsPostgres(path) {
		return capture.SpoolDir(path)
	}
	sum := sha256.Sum256([]byte(displayPath(path)))
	return filepath.Join(cacheDir(), "cairn", "spool-"+hex.EncodeToString(sum[:8]))
}

// openStore opens the store at path and returns where its retrieval index
// lives by default: beside a SQLite file, or, for PostgreSQL, in this
// machine's cache directory under the database's id (the index is derived
// data each server keeps for itself and catches up from the database's
// change log).
func openStore(path string, o Options) (memory.Store, string, error) {
	if !IsPostgres(path) {
		db, err := sqlite.Open(path, &sqlite.Options{Logger: o.Logger, Now: o.Now})
		if err != nil {
			return nil, "", err
		}
		return db, path + "-index", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := postgres.Open(ctx, path, &postgres.Options{Logger: o.Logger, Now: o.Now})
	if err != nil {
		return nil, "", err
	}
	return db, filepath.Join(cacheDir(), "cairn", "index-"+db.Schema()+"-"+db.ID()), nil
}

// cacheDir is $XDG_CACHE_HOME, or the platform's user cache directory, or
// the temporary directory.
func cacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return d
	}
	return os.TempDir()
}

// pinger is a store that can check that its database answers.
type pinger interface {
	Ping(ctx context.Context) error
}

// Ping checks that the database answers: a round trip to PostgreSQL, a
// read of the SQLite file. /healthz reports it.
func (e *Engine) Ping(ctx context.Context) error {
	if p, ok := e.store.(pinger); ok {
		return p.Ping(ctx)
	}
	return e.store.Snapshot(ctx, func(r memory.Reader) error {
		_, err := r.LastChange(ctx)
		return err
	})
}
