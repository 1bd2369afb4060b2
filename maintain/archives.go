package maintain

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// archiveNameRE matches the names WriteArchive gives its files.
var archiveNameRE = regexp.MustCompile(`^thoughts-removal-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z-[0-9a-f]{12}\.(parquet|jsonl)$`)

// IsArchiveName reports whether name is the file name of an archive
// written by WriteArchive (a base name, no folder).
func IsArchiveName(name string) bool { return archiveNameRE.MatchString(name) }

// ArchiveEntry is an archive file found in the archive directory.
type ArchiveEntry struct {
	// Name is the file's name inside the archive directory; Path its
	// full path.
	Name string `json:"name"`
	Path string `json:"path"`
	// Format is parquet or jsonl (from the name).
	Format string `json:"format"`
	Bytes  int64  `json:"bytes"`
	// WrittenAt is when the export wrote it, by the engine's clock, as
	// its name says (Unix milliseconds).
	WrittenAt int64 `json:"written_at"`
}

func entryOf(dir string, info os.FileInfo) ArchiveEntry {
	format := FormatParquet
	if strings.HasSuffix(info.Name(), ".jsonl") {
		format = FormatJSONL
	}
	e := ArchiveEntry{Name: info.Name(), Path: filepath.Join(dir, info.Name()), Format: format, Bytes: info.Size()}
	// thoughts-removal-TIME-SUM.EXT
	if t, err := time.Parse(archiveTimeLayout, strings.TrimPrefix(info.Name(), "thoughts-removal-")[:len(archiveTimeLayout)]); err == nil {
		e.WrittenAt = t.UnixMilli()
	}
	return e
}

// ListArchives lists the archives in dir (not in its sub-folders), the
// newest first; a directory that does not exist yet holds none.
func ListArchives(dir string) ([]ArchiveEntry, error) {
	des, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return []ArchiveEntry{}, nil
	}
	if err != nil {
		return nil, memory.Wrap(memory.CodeDBError, err, "reading the archive directory (SURR_ARCHIVE_DIR)")
	}
	out := []ArchiveEntry{}
	for _, de := range des {
		if !de.Type().IsRegular() || !IsArchiveName(de.Name()) {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, entryOf(dir, info))
	}
	// The names start with the export time: newest first is by name,
	// descending.
	slices.SortFunc(out, func(a, b ArchiveEntry) int { return strings.Compare(b.Name, a.Name) })
	return out, nil
}

// OpenArchive opens the archive named name in dir for reading. Only a
// regular file with an archive's name, directly in dir, opens: any other
// name (a path, "..", a symbolic link, another file) is not_found.
func OpenArchive(dir, name string) (*os.File, ArchiveEntry, error) {
	notFound := memory.Errorf(memory.CodeNotFound, "there is no archive %q in the archive directory", name)
	if !IsArchiveName(name) {
		return nil, ArchiveEntry{}, notFound
	}
	p := filepath.Join(dir, name)
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		return nil, ArchiveEntry{}, notFound
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, ArchiveEntry{}, notFound
	}
	// The file opened is the one checked: a swap between the two calls
	// is refused.
	if got, err := f.Stat(); err != nil || !os.SameFile(info, got) {
		f.Close()
		return nil, ArchiveEntry{}, notFound
	}
	return f, entryOf(dir, info), nil
}
