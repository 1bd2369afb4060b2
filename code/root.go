package code

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cairnhq/cairn/memory"
)

// Confine resolves rel, a slash-separated path relative to root, to an
// absolute path inside root. It refuses absolute paths, paths that climb
// out with "..", and paths whose symlinks lead outside root, with an
// invalid_params error; a file that does not exist is not_found. root must
// already be absolute and free of symlinks (see CleanRoot).
func Confine(root, rel string) (string, error) {
	if rel == "" || strings.ContainsRune(rel, 0) {
		return "", memory.Errorf(memory.CodeInvalidParams, "empty or malformed path")
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.Contains(rel, `\`) {
		return "", memory.Errorf(memory.CodeInvalidParams, "path %q is absolute; give it relative to the repository root", rel)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", memory.Errorf(memory.CodeInvalidParams, "path %q escapes the repository root", rel)
	}
	abs := filepath.Join(root, clean)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", memory.Wrap(memory.CodeNotFound, err, "%s does not exist", rel)
		}
		return "", memory.Wrap(memory.CodeInvalidParams, err, "resolving %s: %s", rel, pathProblem(err))
	}
	if !within(root, real) {
		return "", memory.Errorf(memory.CodeInvalidParams, "path %q leads outside the repository root through a symlink", rel)
	}
	return real, nil
}

// CleanRoot makes a repository root absolute and resolves its symlinks; it
// must be an existing directory.
func CleanRoot(root string) (string, error) {
	if root == "" {
		return "", memory.Errorf(memory.CodeInvalidParams, "a repository root is required")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", memory.Wrap(memory.CodeInvalidParams, err, "repository root %q: %s", root, pathProblem(err))
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", memory.Wrap(memory.CodeNotFound, err, "repository root %s does not exist", root)
		}
		return "", memory.Wrap(memory.CodeInvalidParams, err, "repository root %s: %s", root, pathProblem(err))
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", memory.Wrap(memory.CodeInvalidParams, err, "repository root %s: %s", root, pathProblem(err))
	}
	if !st.IsDir() {
		return "", memory.Errorf(memory.CodeInvalidParams, "repository root %s is not a directory", root)
	}
	return real, nil
}

func within(root, p string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// pathProblem names a file-system error without the internals.
func pathProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many levels of symbolic links") || strings.Contains(err.Error(), "too many links"):
		return "symlink loop"
	case errors.Is(err, syscall.ENOTDIR):
		return "a part of the path is not a directory"
	case errors.Is(err, syscall.ENAMETOOLONG):
		return "the name is too long"
	}
	return "unreadable"
}

// AllowedRoot resolves a repository root for a caller that may index only
// under the allowed directories (the network faces, CAIRN_CODE_ROOTS).
// Whatever stops it (a path outside them, a missing path, a file, a
// symlink leading out, an unreadable directory), the answer is the same
// invalid_params error, so a caller learns nothing of the disk outside
// the allowed directories. With none allowed it is feature_disabled.
func AllowedRoot(root string, allowed []string) (string, error) {
	if len(allowed) == 0 {
		return "", memory.Errorf(memory.CodeFeatureDisabled, "indexing code is off here: the operator lists the directories it may index in CAIRN_CODE_ROOTS")
	}
	if root == "" {
		return "", memory.Errorf(memory.CodeInvalidParams, "a repository root is required")
	}
	refused := memory.Errorf(memory.CodeInvalidParams, "repository root %q is not a directory under those this server may index (CAIRN_CODE_ROOTS)", root)
	if !filepath.IsAbs(root) || strings.ContainsRune(root, 0) {
		return "", refused
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(root))
	if err != nil {
		return "", refused
	}
	for _, a := range allowed {
		ra, err := filepath.EvalSymlinks(a)
		if err != nil || !within(ra, real) {
			continue
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			return "", refused
		}
		return real, nil
	}
	return "", refused
}
