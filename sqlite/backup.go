package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/cairnhq/cairn/memory"
	"modernc.org/sqlite"
)

// Backup copies the database to dest and returns the copy's size in bytes.
// It uses SQLite's online backup API (sqlite3_backup_init, one
// sqlite3_backup_step of every page, sqlite3_backup_finish): the step runs
// in one read transaction, so the copy is a consistent snapshot, page for
// page, of the database as of the last commit before it began, while
// writers in this and other processes go on (WAL). A step in several parts
// would restart whenever another connection writes, and might never end
// while agents write, so the pages are copied in one. Free pages are copied
// too; every connection runs with secure_delete, so they hold zeros, not
// the text of forgotten records.
//
// The copy is written to a new temporary file (mode 0600) in dest's
// directory, synced, then moved to dest: with overwrite a rename, without
// it a hard link that fails when dest exists, so an existing file is never
// replaced unless asked and a crash never leaves a half-written dest.
func (db *DB) Backup(ctx context.Context, dest string, overwrite bool) (int64, error) {
	if dest == "" {
		return 0, memory.Errorf(memory.CodeInvalidParams, "the backup's path is empty")
	}
	abs, err := filepath.Abs(dest)
	if err != nil {
		return 0, memory.Errorf(memory.CodeInvalidParams, "the backup's path %q cannot be resolved", dest)
	}
	if same, _ := samePath(abs, db.path); same {
		return 0, memory.Errorf(memory.CodeInvalidParams, "%s is the database itself: back it up to another file", dest)
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if same, _ := samePath(abs, db.path+suffix); same {
			return 0, memory.Errorf(memory.CodeInvalidParams, "%s is one of the database's own files: back it up to another file", dest)
		}
	}
	info, err := os.Stat(abs)
	switch {
	case err == nil && info.IsDir():
		return 0, memory.Errorf(memory.CodeInvalidParams, "%s is a directory: name the backup file", dest)
	case err == nil && !overwrite:
		return 0, memory.Errorf(memory.CodeConflict, "%s already exists: choose another name, or replace it with --force", dest)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return 0, memory.Wrap(memory.CodeInvalidParams, err, "%s cannot be examined", dest)
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, memory.Wrap(memory.CodeInvalidParams, err, "the backup's directory %s cannot be created", dir)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+filepath.Base(abs)+".tmp-"+hex.EncodeToString(rnd[:]))
	// The backup writes into an empty database file; creating it first
	// gives it mode 0600 whatever the umask.
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, memory.Wrap(memory.CodeInvalidParams, err, "cannot write in %s", dir)
	}
	f.Close()
	done := false
	defer func() {
		if !done {
			os.Remove(tmp)
			os.Remove(tmp + "-journal")
		}
	}()

	// A connection of its own, so the copy holds up neither this
	// process's writer nor its readers.
	if err := db.copyPages(ctx, tmp); err != nil {
		return 0, err
	}
	if err := syncFile(tmp); err != nil {
		return 0, memory.Wrap(memory.CodeDBError, err, "backing up: syncing the copy")
	}
	st, err := os.Stat(tmp)
	if err != nil {
		return 0, memory.Wrap(memory.CodeDBError, err, "backing up: the copy")
	}
	if overwrite {
		err = os.Rename(tmp, abs)
	} else {
		err = os.Link(tmp, abs)
		if errors.Is(err, fs.ErrExist) {
			return 0, memory.Errorf(memory.CodeConflict, "%s already exists: choose another name, or replace it with --force", dest)
		}
		if err == nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		return 0, memory.Wrap(memory.CodeDBError, err, "backing up: moving the copy to %s", dest)
	}
	done = true
	syncDir(dir)
	return st.Size(), nil
}

// pageCopier is the driver connection's online backup.
type pageCopier interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
}

// copyPages copies every page of the database into the empty database file
// dest with the online backup API.
func (db *DB) copyPages(ctx context.Context, dest string) error {
	pool, err := sql.Open("sqlite", db.dsn)
	if err != nil {
		return dbError(err, "backing up")
	}
	defer pool.Close()
	conn, err := pool.Conn(ctx)
	if err != nil {
		return dbError(err, "backing up")
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(pageCopier)
		if !ok {
			return memory.Errorf(memory.CodeInternal, "backing up: the SQLite driver has no online backup")
		}
		b, err := pc.NewBackup("file:" + (&url.URL{Path: dest}).EscapedPath())
		if err != nil {
			return dbError(err, "backing up: opening the copy")
		}
		_, stepErr := b.Step(-1)
		if err := b.Finish(); stepErr == nil {
			stepErr = err
		}
		if stepErr != nil {
			return dbError(stepErr, "backing up: copying the pages")
		}
		return nil
	})
	return dbError(err, "backing up")
}

// samePath reports whether a and b name the same file (by identity when
// both exist, else by cleaned absolute path).
func samePath(a, b string) (bool, error) {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(ia, ib), nil
	}
	absB, err := filepath.Abs(b)
	if err != nil {
		return false, err
	}
	return filepath.Clean(a) == filepath.Clean(absB), nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a rename durable (best effort: not every system can sync
// a directory).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
