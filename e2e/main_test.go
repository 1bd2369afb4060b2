// Package e2e holds end-to-end tests that run the real cairn binary: with
// the official TypeScript MCP client, and as several processes sharing one
// database.
package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/internal/pgtest"
)

// cairnBin is the binary built for these tests.
var cairnBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cairnBin = filepath.Join(dir, "cairn")
	build := exec.Command("go", "build", "-o", cairnBin, "../cmd/cairn")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cairn:", err)
		os.Exit(1)
	}
	code := pgtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

var listening = regexp.MustCompile(`listening on http://(\S+)`)

// stuck bounds a wait that only a broken cairn makes long (a process that
// never starts, a scenario of many calls that never ends): a safety net
// far above what a loaded machine needs, not a measurement.
const stuck = 5 * time.Minute

// waitForProcessesIn makes the end of the test wait until no process
// names dir (a temporary directory of the test's) in its command line,
// working directory or environment. The servers, hooks and hook writers
// an agent's CLI or a hook starts can outlive it by a moment, closing the
// database and writing the index's files, and would write into dir while
// the test removes it; how long that moment lasts is up to the scheduler.
// It must be called after dir is made, so that it runs before dir is
// removed. Outside Linux (no /proc) it waits for nothing.
func waitForProcessesIn(t *testing.T, dir string) {
	t.Cleanup(func() {
		for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			pids := processesIn(dir)
			if len(pids) == 0 {
				return
			}
			if time.Since(start) > stuck {
				t.Errorf("processes %v still use %s, %v after the test", pids, dir, stuck)
				return
			}
		}
	})
}

// processesIn lists the processes, other than this one, whose command
// line, working directory or environment names dir. A process that has
// ended (a zombie) shows none of them.
func processesIn(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		p := filepath.Join("/proc", e.Name())
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		environ, _ := os.ReadFile(filepath.Join(p, "environ"))
		if cwd == dir || strings.HasPrefix(cwd, dir+"/") || bytes.Contains(cmdline, []byte(dir)) || bytes.Contains(environ, []byte(dir)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitListening waits for the address a starting `cairn serve` prints,
// failing at once if the process ends first (gone is closed when its
// output ends, after any address was sent).
func waitListening(t *testing.T, addr <-chan string, gone <-chan struct{}) string {
	t.Helper()
	select {
	case a := <-addr:
		return "http://" + strings.TrimSuffix(a, ")")
	case <-gone:
		select {
		case a := <-addr:
			return "http://" + strings.TrimSuffix(a, ")")
		default:
		}
		t.Fatal("cairn serve ended before it listened")
	case <-time.After(stuck):
		t.Fatal("cairn serve did not start")
	}
	return ""
}

// serve starts `cairn serve` on a free port and returns its base URL; the
// server stops with the test.
func serve(t *testing.T, db string, env ...string) string {
	t.Helper()
	base, _ := serveLogged(t, db, env...)
	return base
}

// serveLogged is serve that also hands over the server's log lines (the
// first 100; later ones are dropped).
func serveLogged(t *testing.T, db string, env ...string) (string, <-chan string) {
	t.Helper()
	return serveArgs(t, []string{"--db", db, "serve", "--addr", "127.0.0.1:0"}, env...)
}

// serveArgs is serveLogged with the command's arguments.
func serveArgs(t *testing.T, args []string, env ...string) (string, <-chan string) {
	t.Helper()
	cmd := exec.Command(cairnBin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done // gone before the test's directories are removed
		}
	})
	addr := make(chan string, 1)
	lines := make(chan string, 100)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
			select {
			case lines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	return waitListening(t, addr, gone), lines
}
