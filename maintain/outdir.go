package maintain

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// An export's output_dir is a folder inside the archive directory, given
// as a relative path of plain names (or as an absolute path inside the
// archive directory). Every name is from a safe set, so no caller makes a
// folder named "~", "..%2f" or ".hidden"; and no folder on the way may be
// a symbolic link, so no link inside the archive directory (planted there,
// or made by someone else) leads an export out of it. The archive
// directory itself is the user's setting and may be a link.

// folderNameRE is the set of names a folder of output_dir may have: a
// letter or digit first, then letters, digits, '.', '_' and '-'.
var folderNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// maxOutputDepth is how many folders deep output_dir may go.
const maxOutputDepth = 8

// outputDirHelp ends output_dir's errors.
const outputDirHelp = "output_dir must be a folder inside the archive directory (SURR_ARCHIVE_DIR): " +
	"names of letters, digits, '.', '_' and '-', starting with a letter or digit, separated by '/', at most 8 deep"

// outputParts checks output_dir and returns its folder names (none for
// the archive directory itself).
func (l *Lifecycle) outputParts(sub string) ([]string, error) {
	if sub == "" {
		return nil, nil
	}
	if err := memory.ValidateText("output_dir", sub, 256); err != nil {
		return nil, err
	}
	bad := func() error { return memory.Errorf(memory.CodeInvalidParams, "output_dir %q: %s", sub, outputDirHelp) }
	rel := sub
	if filepath.IsAbs(sub) {
		// An absolute folder is allowed when it is the archive directory
		// or inside it.
		r, err := filepath.Rel(l.Config.ArchiveDir, filepath.Clean(sub))
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return nil, bad()
		}
		if r == "." {
			return nil, nil
		}
		rel = filepath.ToSlash(r)
	}
	rel = strings.TrimSuffix(rel, "/")
	parts := strings.Split(rel, "/")
	if len(parts) > maxOutputDepth {
		return nil, bad()
	}
	for _, p := range parts {
		if !folderNameRE.MatchString(p) {
			return nil, bad()
		}
	}
	return parts, nil
}

// outputDir walks output_dir's folders from the archive directory without
// following links: a folder that is a symbolic link, or a file where a
// folder should be, is invalid_params. With create it makes the archive
// directory and the missing folders (0700) and returns the folder's path;
// without, it only checks the folders that exist.
func (l *Lifecycle) outputDir(sub string, parts []string, create bool) (string, error) {
	dir := l.Config.ArchiveDir
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", memory.Wrap(memory.CodeDBError, err, "creating the archive directory (SURR_ARCHIVE_DIR)")
		}
	}
	for i, p := range parts {
		dir = filepath.Join(dir, p)
		info, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			if !create {
				return dir, nil
			}
			if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", memory.Wrap(memory.CodeDBError, err, "creating output_dir %q in the archive directory", sub)
			}
			// Made here, or by someone else meanwhile: look again.
			info, err = os.Lstat(dir)
		}
		if err != nil {
			return "", memory.Wrap(memory.CodeDBError, err, "reading output_dir %q in the archive directory", sub)
		}
		at := strings.Join(parts[:i+1], "/")
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			return "", memory.Errorf(memory.CodeInvalidParams,
				"output_dir %q: %q is a symbolic link; exports go only into real folders inside the archive directory", sub, at)
		case !info.IsDir():
			return "", memory.Errorf(memory.CodeInvalidParams, "output_dir %q: %q is a file, not a folder", sub, at)
		}
	}
	return dir, nil
}
