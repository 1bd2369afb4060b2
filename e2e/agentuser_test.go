package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// agentUser runs an agent's CLI, and the cairn its hooks start, as a user
// other than root: Claude Code refuses --dangerously-skip-permissions as
// root. When the tests run as root, that is the user named by
// CAIRN_E2E_USER (default cairn-e2e, which .ci/run creates); otherwise the
// tests' own user.
type agentUser struct {
	name     string
	uid, gid uint32
	// switchTo says commands must switch to the user (the tests run as
	// root).
	switchTo bool
}

func newAgentUser(t *testing.T) agentUser {
	t.Helper()
	if os.Geteuid() != 0 {
		u, _ := user.Current()
		name := ""
		if u != nil {
			name = u.Username
		}
		return agentUser{name: name, uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}
	}
	name := os.Getenv("CAIRN_E2E_USER")
	if name == "" {
		name = "cairn-e2e"
	}
	u, err := user.Lookup(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the tests run as root and the agent CLIs need a user of their own (.ci/run creates it: useradd -m %s): %v", name, err)
		}
		t.Skipf("the tests run as root, and Claude Code refuses --dangerously-skip-permissions as root: create a user for it (useradd -m %s) or set CAIRN_E2E_USER: %v", name, err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return agentUser{name: name, uid: uint32(uid), gid: uint32(gid), switchTo: true}
}

// command is a command that runs as the user.
func (u agentUser) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	if u.switchTo {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: []uint32{}}}
	}
	return cmd
}

// own gives the user every file under dir.
func (u agentUser) own(t *testing.T, dir string) {
	t.Helper()
	if !u.switchTo {
		return
	}
	err := filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(u.uid), int(u.gid))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// agentWorld is a home, a repository and a database the user owns, with
// a copy of the cairn binary the user can run.
type agentWorld struct {
	user                       agentUser
	dir, home, repo, db, cairn string
}

func newAgentWorld(t *testing.T) agentWorld {
	t.Helper()
	u := newAgentUser(t)
	// Not t.TempDir: its parents are root's alone.
	dir, err := os.MkdirTemp("", "cairn-e2e-agent-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	waitForProcessesIn(t, dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w := agentWorld{user: u, dir: dir, home: filepath.Join(dir, "home"), repo: filepath.Join(dir, "shop"),
		db: filepath.Join(dir, "data", "cairn.db"), cairn: filepath.Join(dir, "bin", "cairn")}
	for _, d := range []string{w.home, filepath.Join(w.repo, ".git"), filepath.Dir(w.db), filepath.Dir(w.cairn), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(w.repo, ".git", "HEAD"), []byte("ref: refs/heads/fix/checkout\n"), 0o644)
	src, err := os.Open(cairnBin)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(w.cairn, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	u.own(t, dir)
	return w
}

// env is the environment the user's commands run with: a small PATH, the
// world's home and database.
func (w agentWorld) env(extra ...string) []string {
	return append([]string{"HOME=" + w.home, "USER=" + w.user.name, "LOGNAME=" + w.user.name, "SHELL=/bin/bash",
		"PATH=" + filepath.Dir(w.cairn) + ":/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TMPDIR=" + filepath.Join(w.dir, "tmp"),
		"CAIRN_DB=" + w.db}, extra...)
}

// run runs cairn as the user and returns its standard output; it must
// succeed.
func (w agentWorld) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	defer cancel()
	cmd := w.user.command(ctx, w.cairn, args...)
	cmd.Dir, cmd.Env = w.repo, w.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// hooks is the hook environment of the world's database, for waiting on
// its spool.
func (w agentWorld) hooks() hookEnv {
	return hookEnv{home: w.home, repo: w.repo, db: w.db, spool: w.db + "-spool"}
}

// filesHolding lists the files under dir whose bytes hold s.
func filesHolding(dir, s string) []string {
	var out []string
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(s)) {
				out = append(out, path)
			}
		}
		return nil
	})
	return out
}
