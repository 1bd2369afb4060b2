package capture_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/capture"
)

// write creates path (and its directories) holding text.
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// insideRepo reports whether dir or a directory above it has a .git: a
// temporary directory that does cannot show what happens outside one.
func insideRepo(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// FindRepo walks up to the directory holding .git (a directory, or a file
// naming the real one, as a worktree or submodule has) and reads the
// branch from its HEAD.
func TestFindRepo(t *testing.T) {
	base := t.TempDir()
	if insideRepo(base) {
		t.Skipf("the temporary directory %s lies inside a git repository, so a directory outside one cannot be made", base)
	}
	// A repository on branch main, with a subdirectory.
	shop := mkdir(t, filepath.Join(base, "shop"))
	write(t, filepath.Join(shop, ".git", "HEAD"), "ref: refs/heads/main\n")
	sub := mkdir(t, filepath.Join(shop, "checkout", "internal"))
	// Its linked worktree: ".git" is a file naming the worktree's own git
	// directory (absolute), whose HEAD is another branch.
	wtGit := filepath.Join(shop, ".git", "worktrees", "shop-fix")
	write(t, filepath.Join(wtGit, "HEAD"), "ref: refs/heads/fix/clock-skew\n")
	wt := mkdir(t, filepath.Join(base, "shop-fix"))
	write(t, filepath.Join(wt, ".git"), "gitdir: "+wtGit+"\n")
	mkdir(t, filepath.Join(wt, "auth"))
	// A submodule: ".git" names its git directory relative to itself.
	mod := mkdir(t, filepath.Join(shop, "vendor", "lib"))
	write(t, filepath.Join(shop, ".git", "modules", "lib", "HEAD"), "ref: refs/heads/v2\n")
	write(t, filepath.Join(mod, ".git"), "gitdir: ../../.git/modules/lib")
	// A detached HEAD, and a ".git" file naming nothing.
	detached := mkdir(t, filepath.Join(base, "detached"))
	write(t, filepath.Join(detached, ".git", "HEAD"), "3f1c0e2b9a7d4c5e6f8091a2b3c4d5e6f7081920\n")
	broken := mkdir(t, filepath.Join(base, "broken"))
	write(t, filepath.Join(broken, ".git"), "gitdir: /nowhere/at/all\n")
	outside := mkdir(t, filepath.Join(base, "scratch", "notes"))

	for _, c := range []struct {
		name, dir string
		want      capture.Repo
	}{
		{"the root", shop, capture.Repo{Root: shop, Branch: "main"}},
		{"a subdirectory", sub, capture.Repo{Root: shop, Branch: "main"}},
		{"an uncleaned path", sub + "/../internal/", capture.Repo{Root: shop, Branch: "main"}},
		{"a worktree", wt, capture.Repo{Root: wt, Branch: "fix/clock-skew"}},
		{"inside a worktree", filepath.Join(wt, "auth"), capture.Repo{Root: wt, Branch: "fix/clock-skew"}},
		{"a submodule", mod, capture.Repo{Root: mod, Branch: "v2"}},
		{"a detached head", detached, capture.Repo{Root: detached}},
		{"a .git file naming nothing", broken, capture.Repo{Root: broken}},
		{"no repository", outside, capture.Repo{Root: outside}},
		{"no directory", "", capture.Repo{}},
	} {
		if got := capture.FindRepo(c.dir); got != c.want {
			t.Errorf("%s: FindRepo(%q) = %+v; want %+v", c.name, c.dir, got, c.want)
		}
	}
}

// The same with repositories git itself made: a clone's subdirectory, a
// worktree added with `git worktree add` (its .git a file) on a new
// branch, and a detached checkout.
func TestFindRepoWithGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skipf("git is not installed (%v); TestFindRepo covers the same layouts made by hand", err)
	}
	// git reports the root with symbolic links resolved (macOS's /var).
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if insideRepo(base) {
		t.Skipf("the temporary directory %s lies inside a git repository", base)
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	repo := mkdir(t, filepath.Join(base, "shop"))
	git(repo, "init", "-q", "-b", "trunk")
	write(t, filepath.Join(repo, "checkout", "cart.go"), "package checkout\n")
	git(repo, "add", ".")
	git(repo, "commit", "-q", "-m", "first")
	wt := filepath.Join(base, "shop-wt")
	git(repo, "worktree", "add", "-q", "-b", "fix/skew", wt)
	if fi, err := os.Stat(filepath.Join(wt, ".git")); err != nil || fi.IsDir() {
		t.Fatalf("git made the worktree's .git a directory or nothing: %v", err)
	}
	det := filepath.Join(base, "shop-detached")
	git(repo, "worktree", "add", "-q", "--detach", det)

	for _, c := range []struct {
		dir  string
		want capture.Repo
	}{
		{filepath.Join(repo, "checkout"), capture.Repo{Root: repo, Branch: "trunk"}},
		{filepath.Join(wt, "checkout"), capture.Repo{Root: wt, Branch: "fix/skew"}},
		{det, capture.Repo{Root: det}},
	} {
		if got := capture.FindRepo(c.dir); got != c.want {
			t.Errorf("FindRepo(%q) = %+v; want %+v", c.dir, got, c.want)
		}
		// git agrees on the root.
		if top := git(c.dir, "rev-parse", "--show-toplevel"); top != c.want.Root {
			t.Errorf("git says the root of %s is %s; the test expects %s", c.dir, top, c.want.Root)
		}
	}
}
