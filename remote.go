package cairn

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

type remoteKey struct{}

// ForRemoteCaller marks ctx as a request that came over the network (the
// HTTP API, MCP over HTTP, the web page): answers to it name the database,
// the retrieval index and the archive directory by their base names, never
// by where they are on this machine, and a PostgreSQL database by the
// word alone. A local caller (the CLI, MCP over stdio) sees the paths.
func ForRemoteCaller(ctx context.Context) context.Context {
	return context.WithValue(ctx, remoteKey{}, true)
}

// remoteCaller reports whether ctx is a network caller's.
func remoteCaller(ctx context.Context) bool {
	v, _ := ctx.Value(remoteKey{}).(bool)
	return v
}

// hidePaths returns s without the absolute directories of the database,
// the retrieval index and the archive: "/home/me/.local/share/cairn/cairn.db"
// becomes "cairn.db", and a PostgreSQL connection string "postgresql".
func (e *Engine) hidePaths(s string) string {
	if s == "" {
		return s
	}
	var pairs []string
	if IsPostgres(e.path) {
		pairs = append(pairs, displayPath(e.path), "postgresql")
	}
	var dirs []string
	for _, p := range []string{e.path, e.settings.IndexDir, e.settings.Maintenance.ArchiveDir} {
		if p == "" || p == IndexInMemory || IsPostgres(p) {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		dirs = append(dirs, filepath.Dir(filepath.Clean(p)))
	}
	// The longest directories first, so that a nested one is not cut
	// halfway by its parent.
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, d := range dirs {
		if d != string(os.PathSeparator) {
			pairs = append(pairs, d+string(os.PathSeparator), "")
		}
	}
	if len(pairs) == 0 {
		return s
	}
	return strings.NewReplacer(pairs...).Replace(s)
}
