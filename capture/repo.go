package capture

import (
	"os"
	"path/filepath"
	"strings"
)

// FindRepo finds the git root above dir (dir itself when there is none)
// and its current branch, reading .git directly (no git process: a hook
// must be quick). A detached HEAD has no branch.
func FindRepo(dir string) Repo {
	if dir == "" {
		return Repo{}
	}
	dir = filepath.Clean(dir)
	for d := dir; ; {
		gitPath := filepath.Join(d, ".git")
		if fi, err := os.Stat(gitPath); err == nil {
			gitDir := gitPath
			if !fi.IsDir() {
				// A worktree or submodule: ".git" names the real directory.
				b, err := os.ReadFile(gitPath)
				if err != nil {
					return Repo{Root: d}
				}
				g := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "gitdir:"))
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				gitDir = g
			}
			return Repo{Root: d, Branch: branch(gitDir)}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return Repo{Root: dir}
		}
		d = parent
	}
}

func branch(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(head, "ref: "); ok {
		return strings.TrimPrefix(ref, "refs/heads/")
	}
	return ""
}
