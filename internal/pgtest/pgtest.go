// Package pgtest runs private PostgreSQL servers for tests and benchmarks:
// initdb into a temporary directory, the server on a free loopback port
// (and a Unix socket in that directory), one fresh database per test, and
// everything removed afterwards. Nothing is mocked: the server is Debian's
// postgresql-15 (or whatever PostgreSQL the machine has).
//
// The binaries are looked for in $CAIRN_PG_BIN, then in the newest
// /usr/lib/postgresql/*/bin, then on $PATH. When they are missing the tests
// that need a server skip with a message saying how to install them;
// when CI is set they fail instead, so CI never passes by skipping.
//
// PostgreSQL refuses to run as root. When the tests run as root, the
// server runs as another user: $CAIRN_PGTEST_USER, else the "postgres"
// system user the Debian package creates, else "nobody". The temporary
// directory is handed to that user; the test process itself stays root.
//
// A test package shares one server: call Main from TestMain so it stops
// when the package's tests end (the server also stops if the test process
// dies: it gets SIGQUIT when its parent exits).
package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Install says how to get the server binaries.
const Install = "install PostgreSQL's server binaries (Debian: apt-get install postgresql-15) or set CAIRN_PG_BIN to their directory"

// Options tune a server started by Start.
type Options struct {
	// Fsync keeps PostgreSQL's durability settings (fsync, synchronous
	// commit, full page writes) on. Tests leave it off for speed;
	// benchmarks turn it on.
	Fsync bool
	// Settings are extra server settings (name → value), e.g.
	// shared_buffers.
	Settings map[string]string
	// TLSCert and TLSKey, when set, are PEM files the server uses for
	// TLS (ssl=on); the files are copied into the server's directory.
	TLSCert, TLSKey string
	// HBA, when set, replaces pg_hba.conf (default: trust on loopback and
	// the socket).
	HBA string
}

// Server is a running private PostgreSQL server.
type Server struct {
	// Dir holds the data directory, the socket and the log.
	Dir string
	// Bin is the directory of the server binaries.
	Bin string
	// Port is the TCP port on 127.0.0.1.
	Port int
	// Superuser is the role the tests connect as (no password).
	Superuser string

	cmd     *exec.Cmd
	cred    *credential
	done    chan struct{}
	stopped atomic.Bool
	dbSeq   atomic.Int64
}

var (
	sharedMu  sync.Mutex
	shared    *Server
	sharedErr error
)

// Main runs a test package's tests and then stops the package's shared
// server. Call it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	sharedMu.Lock()
	s := shared
	sharedMu.Unlock()
	if s != nil {
		s.Stop()
	}
	return code
}

// Shared returns the package's server, starting it on first use. Without
// the binaries the test is skipped (failed when CI is set).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start(Options{})
	}
	if sharedErr != nil {
		Unavailable(tb, sharedErr)
	}
	return shared
}

// Unavailable skips the test for err (a missing binary or extension), or
// fails it when CI is set.
func Unavailable(tb testing.TB, err error) {
	tb.Helper()
	if InCI() {
		tb.Fatalf("PostgreSQL tests cannot be skipped in CI: %v", err)
	}
	tb.Skipf("PostgreSQL tests skipped: %v", err)
}

// InCI reports whether the tests run in CI: CI is set (CI services set
// CI=true; .ci/run sets it), as the other end-to-end tests read it.
func InCI() bool { return os.Getenv("CI") != "" }

// ErrNoBinaries says the server binaries were not found.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries (initdb, postgres) found; " + Install)

// FindBin returns the directory of the server binaries.
func FindBin() (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "postgres", "pg_isready", "createdb"} {
			if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
				return false
			}
		}
		return true
	}
	if d := os.Getenv("CAIRN_PG_BIN"); d != "" {
		if has(d) {
			return d, nil
		}
		return "", fmt.Errorf("CAIRN_PG_BIN=%s does not hold initdb, postgres, pg_isready and createdb", d)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	return "", ErrNoBinaries
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// runAs is the credential the server runs under: nil when the process is
// not root.
func runAs() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	names := []string{"postgres", "nobody"}
	if n := os.Getenv("CAIRN_PGTEST_USER"); n != "" {
		names = []string{n}
	}
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if uid == 0 {
			continue
		}
		return &credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root and none of the users %v exists to run PostgreSQL as (set CAIRN_PGTEST_USER)", names)
}

// Start initialises and starts a private server.
func Start(o Options) (*Server, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cairn-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Bin: bin, Superuser: "postgres", cred: cred}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if err := s.initdb(data); err != nil {
		return nil, err
	}
	if err := s.configure(data, o); err != nil {
		return nil, err
	}
	// A free port can be taken between choosing it and the server binding
	// it: try a few.
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.Port = port
		if lastErr = s.start(data); lastErr == nil {
			ok = true
			return s, nil
		}
	}
	return nil, lastErr
}

// initdb creates the data directory.
func (s *Server) initdb(data string) error {
	// The database's default collation is ICU's English where the server
	// has ICU: text then sorts as most production databases sort it, and a
	// query that forgets to sort by bytes shows.
	args := []string{"-D", data, "-U", s.Superuser, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"}
	init := s.command("initdb", append(args, "--locale=C.UTF-8", "--locale-provider=icu", "--icu-locale=en-US")...)
	if out, err := init.CombinedOutput(); err != nil {
		os.RemoveAll(data)
		init = s.command("initdb", append(args, "--locale=C")...)
		if out2, err := init.CombinedOutput(); err != nil {
			return fmt.Errorf("initdb: %v: %s (with ICU: %s)", err, bytes.TrimSpace(out2), bytes.TrimSpace(out))
		}
	}
	return nil
}

// configure writes the server's settings (o's over the defaults), its
// certificate and its pg_hba.conf into the data directory.
func (s *Server) configure(data string, o Options) error {
	conf := map[string]string{
		"listen_addresses":        "'127.0.0.1'",
		"unix_socket_directories": "'" + s.Dir + "'",
		"max_connections":         "300",
		"shared_buffers":          "'128MB'",
		"log_min_messages":        "warning",
		"log_line_prefix":         "'%m [%p] '",
	}
	if !o.Fsync {
		conf["fsync"] = "off"
		conf["synchronous_commit"] = "off"
		conf["full_page_writes"] = "off"
	}
	if o.TLSCert != "" {
		for src, name := range map[string]string{o.TLSCert: "server.crt", o.TLSKey: "server.key"} {
			b, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			p := filepath.Join(data, name)
			if err := os.WriteFile(p, b, 0o600); err != nil {
				return err
			}
			if s.cred != nil {
				os.Chown(p, int(s.cred.Uid), int(s.cred.Gid))
			}
		}
		conf["ssl"] = "on"
		conf["ssl_cert_file"] = "'server.crt'"
		conf["ssl_key_file"] = "'server.key'"
	}
	for k, v := range o.Settings {
		conf[k] = v
	}
	var b strings.Builder
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, conf[k])
	}
	if err := appendFile(filepath.Join(data, "postgresql.conf"), b.String()); err != nil {
		return err
	}
	if o.HBA != "" {
		if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(o.HBA), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// command runs one of the binaries as the server's user.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.Bin, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	cmd.SysProcAttr = procAttr(s.cred, false)
	return cmd
}

// start runs the postmaster as a child that dies with this process, and
// waits until it accepts connections.
func (s *Server) start(data string) error {
	logPath := filepath.Join(s.Dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := s.command("postgres", "-D", data, "-p", strconv.Itoa(s.Port))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = procAttr(s.cred, true)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %v", err)
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ready := s.command("pg_isready", "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", s.Superuser)
		if ready.Run() == nil {
			return nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres exited at start: %s", tail(log, 2000))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Signal(syscall.SIGQUIT)
			<-s.done
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres did not accept connections within 60 s: %s", tail(log, 2000))
		}
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}

// Log returns the end of the server's log.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	return tail(b, 4000)
}

// Stop shuts the server down (fast shutdown) and removes its directory.
func (s *Server) Stop() {
	if !s.stopped.CompareAndSwap(false, true) {
		return
	}
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Signal(syscall.SIGQUIT)
			<-s.done
		}
	}
	os.RemoveAll(s.Dir)
}

// URL is the connection string of database name on this server.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", s.Superuser, s.Port, name)
}

// CreateDatabase creates a database (an error if it exists).
func (s *Server) CreateDatabase(name string) error {
	out, err := s.command("createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", s.Superuser, name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("createdb %s: %v: %s", name, err, bytes.TrimSpace(out))
	}
	return nil
}

// DropDatabase drops a database, closing its connections.
func (s *Server) DropDatabase(name string) error {
	out, err := s.command("dropdb", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", s.Superuser, "--force", "--if-exists", name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("dropdb %s: %v: %s", name, err, bytes.TrimSpace(out))
	}
	return nil
}

// NewDatabase creates a fresh database for the test, dropped when the
// test ends, and returns its URL.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbSeq.Add(1))
	if err := s.CreateDatabase(name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.DropDatabase(name) })
	return s.URL(name)
}

// URLAs is the connection string of database name for another role
// (the server trusts every role on loopback).
func (s *Server) URLAs(role, name string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", role, s.Port, name)
}

// Exec runs SQL with psql as the superuser in the database that the
// connection string url names (its other parameters are ignored), and
// returns what it printed (unaligned, tuples only).
func (s *Server) Exec(url, sql string) (string, error) {
	name := url
	if i := strings.Index(name, "://"); i >= 0 {
		name = name[i+3:]
	}
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name, _, _ = strings.Cut(name, "?")
	out, err := s.command("psql", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", s.Superuser, "-d", name,
		"-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("psql in %s: %v: %s", name, err, bytes.TrimSpace(out))
	}
	return strings.TrimSpace(string(out)), nil
}

// HasExtension reports whether the server can CREATE EXTENSION name (its
// control file is installed).
func (s *Server) HasExtension(name string) bool {
	out, err := exec.Command(filepath.Join(s.Bin, "pg_config"), "--sharedir").Output()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(strings.TrimSpace(string(out)), "extension", name+".control"))
	return err == nil
}

// PGVectorInstall says how to get pgvector.
const PGVectorInstall = "pgvector is not installed: apt-get install postgresql-server-dev-15, then make && make install in the pgvector source (.ci/run does this from testdata/pgvector/pgvector-0.8.6.tar.gz)"
