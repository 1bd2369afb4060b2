package cairn

import (
	"context"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// BackupRequest asks for a copy of the database.
type BackupRequest struct {
	// Dest is the file to write. Its directory is created (0700) when
	// missing; the file gets mode 0600.
	Dest string `json:"dest"`
	// Overwrite replaces Dest when it exists; without it an existing Dest
	// is a conflict and is left untouched.
	Overwrite bool `json:"overwrite,omitempty"`
}

// BackupReport describes a backup.
type BackupReport struct {
	// Dest is the copy's path, as given.
	Dest string `json:"dest"`
	// Bytes is the copy's size.
	Bytes int64 `json:"bytes"`
	// Ms is how long the copy took.
	Ms int64 `json:"ms"`
}

// ErrBackupUnsupported is Backup's answer on a store that cannot copy
// itself (PostgreSQL, which keeps its own backups): feature_disabled,
// naming the ways that work.
var ErrBackupUnsupported = memory.Errorf(memory.CodeFeatureDisabled,
	"cairn backup copies a SQLite database; back up PostgreSQL with pg_dump -n cairn (or your platform's backups), or make a SQLite copy with cairn migrate --from URL --to FILE.db")

// backuper is a store that can copy itself while in use.
type backuper interface {
	Backup(ctx context.Context, dest string, overwrite bool) (int64, error)
}

// Backup writes a consistent copy of the database to req.Dest while other
// processes keep reading and writing it. The copy is a cairn database:
// open it with --db (or copy it back in place, with no cairn running, to
// restore). The retrieval index's files are not copied: they are derived,
// and a process opening the copy writes them again.
func (e *Engine) Backup(ctx context.Context, req BackupRequest) (BackupReport, error) {
	b, ok := e.store.(backuper)
	if !ok {
		return BackupReport{}, ErrBackupUnsupported
	}
	start := time.Now()
	n, err := b.Backup(ctx, req.Dest, req.Overwrite)
	if err != nil {
		return BackupReport{}, err
	}
	return BackupReport{Dest: req.Dest, Bytes: n, Ms: time.Since(start).Milliseconds()}, nil
}
