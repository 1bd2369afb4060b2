package maintain

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Archive formats.
const (
	FormatParquet = "parquet"
	FormatJSONL   = "jsonl"
)

// Defaults of the removal lifecycle, as the specification sets them.
const (
	DefaultRetentionDays = 30
	DefaultArchiveDir    = "./archive/"
	DefaultFormat        = FormatParquet
	// MaxRetentionDays bounds SURR_RETENTION_DAYS (100 years).
	MaxRetentionDays = 36500
)

// Config is the removal lifecycle's configuration, read once at start-up.
type Config struct {
	// RetentionDays is how long a thought stays after it was marked for
	// removal before finalize may delete it (SURR_RETENTION_DAYS, 0 to
	// 36500; default 30).
	RetentionDays int `json:"retentionDays"`
	// ArchiveDir is where exports are written (SURR_ARCHIVE_DIR; default
	// ./archive/ of the working directory, made absolute at start-up,
	// created 0700).
	ArchiveDir string `json:"archiveDir"`
	// Format is the archive format: parquet (default) or jsonl
	// (SURR_ARCHIVE_FORMAT).
	Format string `json:"format"`
}

// Rel names an archive file for a caller who should not learn where the
// archive directory is: its path relative to ArchiveDir, with forward
// slashes, or its file name alone when it lies outside (written before
// SURR_ARCHIVE_DIR changed).
func (c Config) Rel(path string) string {
	if path == "" {
		return ""
	}
	rel, err := filepath.Rel(c.ArchiveDir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return filepath.Base(path)
	}
	return filepath.ToSlash(rel)
}

// DefaultConfig is the configuration with nothing set; its ArchiveDir is
// relative to the working directory.
func DefaultConfig() Config {
	return Config{RetentionDays: DefaultRetentionDays, ArchiveDir: DefaultArchiveDir, Format: DefaultFormat}
}

// ConfigFromEnv reads SURR_RETENTION_DAYS, SURR_ARCHIVE_DIR and
// SURR_ARCHIVE_FORMAT. A retention that is not a whole number of days in
// [0, 36500] falls back to 30 with a warning; an unknown format is an
// invalid_params error. The archive directory is made absolute.
func ConfigFromEnv(getenv func(string) string) (Config, []string, error) {
	c := DefaultConfig()
	var warns []string
	if v := strings.TrimSpace(getenv("SURR_RETENTION_DAYS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxRetentionDays {
			warns = append(warns, fmt.Sprintf("SURR_RETENTION_DAYS=%q is not a whole number of days from 0 to %d; using %d", v, MaxRetentionDays, DefaultRetentionDays))
		} else {
			c.RetentionDays = n
		}
	}
	if v := strings.TrimSpace(getenv("SURR_ARCHIVE_DIR")); v != "" {
		c.ArchiveDir = v
	}
	if abs, err := filepath.Abs(c.ArchiveDir); err == nil {
		c.ArchiveDir = abs
	}
	if v := strings.ToLower(strings.TrimSpace(getenv("SURR_ARCHIVE_FORMAT"))); v != "" {
		f, err := ParseFormat(v)
		if err != nil {
			return c, warns, memory.Errorf(memory.CodeInvalidParams, "SURR_ARCHIVE_FORMAT=%q: want parquet or jsonl", v)
		}
		c.Format = f
	}
	return c, warns, nil
}

// ParseFormat reads an archive format name (any case).
func ParseFormat(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case FormatParquet:
		return FormatParquet, nil
	case FormatJSONL, "json", "ndjson":
		return FormatJSONL, nil
	}
	return "", memory.Errorf(memory.CodeInvalidParams, "format %q: want parquet or jsonl", s)
}
