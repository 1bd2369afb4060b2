package bench

import (
	"errors"
	"io/fs"
	"os"

	"github.com/cairnhq/cairn/memory"
)

// workDir makes a new directory for a run's databases inside parent (the
// system's temporary directory when parent is ""), creating parent first
// if it is missing, as a user naming --dir for a run would expect.
func workDir(parent, pattern string) (string, error) {
	refused := func(err error) error {
		reason := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = pe.Err.Error() // "not a directory", "permission denied"
		}
		return memory.Wrap(memory.CodeInvalidParams, err, "--dir %s: cannot make a working directory there: %s", parent, reason)
	}
	if parent != "" {
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return "", refused(err)
		}
	}
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		if parent != "" {
			return "", refused(err)
		}
		return "", memory.Wrap(memory.CodeInternal, err, "cannot make a working directory in the system's temporary directory")
	}
	return dir, nil
}
