package capture

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Spool keeps the batches a hook could not write yet, one file each, in
// a directory beside the database. A batch is put in the spool before the
// database is touched and removed once it is written, so a hook killed at
// any point leaves either nothing to do or a whole batch to apply again;
// applying a batch twice writes it once.
type Spool struct{ Dir string }

// SpoolDir is the spool of the database at dbPath.
func SpoolDir(dbPath string) string { return dbPath + "-spool" }

// Put writes b to the spool: a temporary file renamed into place, so the
// spool never holds half a batch. It returns the file's path.
func (s Spool) Put(b Batch) (string, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", memory.Wrap(memory.CodeInternal, err, "creating the spool %s: %v", s.Dir, err)
	}
	data, err := json.Marshal(b)
	if err != nil {
		return "", memory.Wrap(memory.CodeInternal, err, "encoding a hook batch")
	}
	path := filepath.Join(s.Dir, b.ID+".json")
	tmp := path + ".tmp"
	if err := writeSynced(tmp, data); err != nil {
		os.Remove(tmp)
		return "", memory.Wrap(memory.CodeInternal, err, "writing the spool: %v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", memory.Wrap(memory.CodeInternal, err, "writing the spool: %v", err)
	}
	// The rename itself reaches the disk with the directory (where the
	// platform allows syncing one).
	if d, err := os.Open(s.Dir); err == nil {
		d.Sync()
		d.Close()
	}
	return path, nil
}

// writeSynced writes a new file and flushes it to the disk: a batch in
// the spool survives a crash of the machine, not only of the process.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// List returns the spooled batches' files, oldest first (ids are
// time-ordered).
func (s Spool) List() ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "reading the spool %s: %v", s.Dir, err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(s.Dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Read loads one spooled batch.
func (s Spool) Read(path string) (Batch, error) {
	var b Batch
	data, err := os.ReadFile(path)
	if err != nil {
		return b, memory.Wrap(memory.CodeInternal, err, "reading %s: %v", path, err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return b, memory.Wrap(memory.CodeInvalidParams, err, "%s is not a hook batch", filepath.Base(path))
	}
	return b, nil
}

// RejectedDir is where batches the store refused are kept
// (SpoolDir/rejected): set aside, so that the batches behind them are
// written, and kept, so that nothing is deleted unseen.
func (s Spool) RejectedDir() string { return filepath.Join(s.Dir, "rejected") }

// Reject moves a batch the store refused (its content or its file is
// invalid, so writing it again would fail again) out of the spool into
// RejectedDir.
func (s Spool) Reject(path string) error {
	if err := os.MkdirAll(s.RejectedDir(), 0o700); err != nil {
		return memory.Wrap(memory.CodeInternal, err, "creating %s: %v", s.RejectedDir(), err)
	}
	if err := os.Rename(path, filepath.Join(s.RejectedDir(), filepath.Base(path))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return memory.Wrap(memory.CodeInternal, err, "setting %s aside: %v", path, err)
	}
	return nil
}

// Rejected lists the batches set aside by Reject.
func (s Spool) Rejected() ([]string, error) {
	return Spool{Dir: s.RejectedDir()}.List()
}

// Remove deletes a written batch's file.
func (s Spool) Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return memory.Wrap(memory.CodeInternal, err, "removing %s: %v", path, err)
	}
	return nil
}
