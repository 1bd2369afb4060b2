package cairn

import (
	"os"
	"path/filepath"
)

// EnvDB names the environment variable that overrides the database path.
const EnvDB = "CAIRN_DB"

// DefaultPath is where cairn keeps its database when nothing says
// otherwise: $XDG_DATA_HOME/cairn/cairn.db, or ~/.local/share/cairn/cairn.db.
func DefaultPath() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = "."
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "cairn", "cairn.db")
}

// ResolvePath picks the database path: flag when set, else $CAIRN_DB, else
// DefaultPath.
func ResolvePath(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv(EnvDB); env != "" {
		return env
	}
	return DefaultPath()
}
