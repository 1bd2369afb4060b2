package maintain

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// ArchivedThought is one row of an archive: a thought with its
// provenance and metadata, and when it was marked and archived; never its
// vectors. Times are Unix milliseconds. Parquet columns and JSON keys have
// the same names.
type ArchivedThought struct {
	ID           string   `parquet:"id" json:"id"`
	Content      string   `parquet:"content" json:"content"`
	Origin       string   `parquet:"origin" json:"origin"`
	Tags         []string `parquet:"tags,list" json:"tags"`
	IsPrivate    bool     `parquet:"is_private" json:"is_private"`
	Status       string   `parquet:"status" json:"status"`
	Significance float64  `parquet:"significance" json:"significance"`
	IsSummary    bool     `parquet:"is_summary" json:"is_summary"`
	SummaryOf    []string `parquet:"summary_of,list" json:"summary_of"`
	Pipeline     string   `parquet:"pipeline" json:"pipeline"`
	CreatedAt    int64    `parquet:"created_at" json:"created_at"`
	SessionID    string   `parquet:"session_id" json:"session_id"`
	RepoID       string   `parquet:"repo_id" json:"repo_id"`
	AgentID      string   `parquet:"agent_id" json:"agent_id"`
	UserID       string   `parquet:"user_id" json:"user_id"`
	Redacted     bool     `parquet:"redacted" json:"redacted"`
	MarkedAt     int64    `parquet:"marked_at" json:"marked_at"`
	ArchivedAt   int64    `parquet:"archived_at" json:"archived_at"`
}

// Archived is r as an archive row, archived at time at.
func Archived(r memory.Removal, at int64) ArchivedThought {
	t := r.Thought
	tags, of := t.Tags, t.SummaryOf
	if tags == nil {
		tags = []string{}
	}
	if of == nil {
		of = []string{}
	}
	return ArchivedThought{ID: t.ID, Content: t.Content, Origin: string(t.Origin), Tags: tags, IsPrivate: t.IsPrivate,
		Status: t.Status, Significance: t.Significance, IsSummary: t.IsSummary, SummaryOf: of, Pipeline: t.Pipeline,
		CreatedAt: t.CreatedAt, SessionID: t.Scope.SessionID, RepoID: t.Scope.RepoID, AgentID: t.Scope.AgentID,
		UserID: t.Scope.UserID, Redacted: t.Redacted, MarkedAt: r.MarkedAt, ArchivedAt: at}
}

// ArchiveFile is a written archive.
type ArchiveFile struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Rows   int    `json:"rows"`
}

// archiveTimeLayout is the export time in an archive's name.
const archiveTimeLayout = "20060102T150405.000Z"

// tempPrefix names archives being written.
const tempPrefix = ".removals-"

// crashHook, when set (tests), is called at each step of writing and
// recording an export, so a test can kill the process there.
var crashHook func(step string)

func crashPoint(step string) {
	if crashHook != nil {
		crashHook(step)
	}
}

// encode renders rows in format.
func encode(format string, rows []ArchivedThought) ([]byte, error) {
	var buf bytes.Buffer
	switch format {
	case FormatParquet:
		w := parquet.NewGenericWriter[ArchivedThought](&buf, parquet.Compression(&snappy.Codec{}),
			parquet.KeyValueMetadata("writer", "cairn maintenance_ops export_removals"))
		if _, err := w.Write(rows); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case FormatJSONL:
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return nil, err
			}
		}
	default:
		return nil, memory.Errorf(memory.CodeInvalidParams, "format %q: want parquet or jsonl", format)
	}
	return buf.Bytes(), nil
}

// WriteArchive writes rows to a new file in dir (created 0700; the file
// is 0600) named thoughts-removal-TIME-SUM.EXT, where SUM starts the
// file's SHA-256: it writes a temporary file, syncs it, renames it and
// syncs the directory, so the file is complete whenever it exists.
func WriteArchive(dir, format string, at time.Time, rows []ArchivedThought) (ArchiveFile, error) {
	data, err := encode(format, rows)
	if err != nil {
		return ArchiveFile{}, memory.Wrap(memory.CodeInternal, err, "encoding the archive")
	}
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ArchiveFile{}, memory.Wrap(memory.CodeDBError, err, "creating the archive directory (SURR_ARCHIVE_DIR)")
	}
	ext := ".parquet"
	if format == FormatJSONL {
		ext = ".jsonl"
	}
	name := fmt.Sprintf("thoughts-removal-%s-%s%s", at.UTC().Format(archiveTimeLayout), hexSum[:12], ext)
	final := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, tempPrefix+"*.tmp")
	if err != nil {
		return ArchiveFile{}, memory.Wrap(memory.CodeDBError, err, "writing an archive in the archive directory")
	}
	defer os.Remove(tmp.Name()) // gone after the rename
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(data)
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return ArchiveFile{}, memory.Wrap(memory.CodeDBError, err, "writing the archive %s", name)
		}
	} else {
		tmp.Close()
		return ArchiveFile{}, memory.Wrap(memory.CodeDBError, err, "writing the archive %s", name)
	}
	crashPoint("archive-temp-written")
	if err := os.Rename(tmp.Name(), final); err != nil {
		return ArchiveFile{}, memory.Wrap(memory.CodeDBError, err, "writing the archive %s", name)
	}
	syncDir(dir)
	crashPoint("archive-renamed")
	return ArchiveFile{Path: final, Format: format, SHA256: hexSum, Bytes: int64(len(data)), Rows: len(rows)}, nil
}

// syncDir makes a rename in dir durable (best effort: some systems cannot
// sync a directory).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// removeStaleTemps deletes temporary archives older than an hour that a
// killed export left in dir.
func removeStaleTemps(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) || !strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > time.Hour {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// FileSHA256 is the SHA-256 of the file at path, in hex.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ReadArchive reads an archive's rows; the format is the file's extension
// (.parquet or .jsonl).
func ReadArchive(path string) ([]ArchivedThought, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".jsonl") {
		var rows []ArchivedThought
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 256<<20)
		for sc.Scan() {
			var r ArchivedThought
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				return nil, err
			}
			rows = append(rows, r)
		}
		return rows, sc.Err()
	}
	return parquet.Read[ArchivedThought](bytes.NewReader(data), int64(len(data)))
}
