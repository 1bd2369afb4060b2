package cairn

import (
	"context"
	"os"

	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
)

// The archives of the removal lifecycle, for the web page: the files
// export_removals wrote to the archive directory (SURR_ARCHIVE_DIR),
// listed and opened by name so a person can download them.

func (e *Engine) needLifecycle() error {
	if e.life == nil {
		return memory.Errorf(memory.CodeFeatureDisabled, "this store does not keep the removal lifecycle of thoughts")
	}
	return nil
}

// RemovalArchives lists the archives in the archive directory (not its
// sub-folders), the newest first. They stay after their thoughts are
// finalized: they are then the only copy.
func (e *Engine) RemovalArchives(ctx context.Context) ([]maintain.ArchiveEntry, error) {
	if err := e.needLifecycle(); err != nil {
		return nil, err
	}
	return maintain.ListArchives(e.life.Config.ArchiveDir)
}

// OpenRemovalArchive opens the archive named name (a file name that
// RemovalArchives lists) for reading; the caller closes it. Any other
// name is not_found.
func (e *Engine) OpenRemovalArchive(ctx context.Context, name string) (*os.File, maintain.ArchiveEntry, error) {
	if err := e.needLifecycle(); err != nil {
		return nil, maintain.ArchiveEntry{}, err
	}
	return maintain.OpenArchive(e.life.Config.ArchiveDir, name)
}
