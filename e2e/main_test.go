// Package e2e holds end-to-end tests that run the real cairn binary: with
// the official TypeScript MCP client, and as several processes sharing one
// database.
package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
		}
	})
	addr := make(chan string, 1)
	lines := make(chan string, 100)
	go func() {
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
	select {
	case a := <-addr:
		return "http://" + strings.TrimSuffix(a, ")"), lines
	case <-time.After(15 * time.Second):
		t.Fatal("cairn serve did not start")
	}
	return "", nil
}
