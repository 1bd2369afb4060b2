package code_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// clock is a test clock that moves one millisecond per reading.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// logBuf collects log records.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type fixture struct {
	t     *testing.T
	ctx   context.Context
	root  string
	store memory.Store
	mem   *code.Memory
	logs  *logBuf
	clock *clock
}

type setup struct {
	store memory.CodeStore // wraps the database when set
	ttl   time.Duration
	max   int64
}

func newFixture(t *testing.T, files map[string]string, opts ...func(*setup)) *fixture {
	t.Helper()
	root := t.TempDir()
	for p, src := range files {
		write(t, root, p, src)
	}
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var s setup
	for _, o := range opts {
		o(&s)
	}
	var store memory.CodeStore = db
	if s.store != nil {
		store = s.store
	}
	f := &fixture{t: t, ctx: context.Background(), root: root, store: db, logs: &logBuf{}, clock: &clock{t: time.Date(2026, 1, 8, 12, 0, 0, 0, time.UTC)}}
	n := 0
	var idMu sync.Mutex
	f.mem = code.New(store, code.Options{
		ETVTTL: s.ttl, MaxFileBytes: s.max, Embedder: embed.Hash{Dim: 64}, Now: f.clock.now,
		NewID: func(p string) string {
			idMu.Lock()
			defer idMu.Unlock()
			n++
			return fmt.Sprintf("%s_%04d", p, n)
		},
		Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	return f
}

func write(t *testing.T, root, rel, src string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// touch moves a file's modification time forward so the index and the
// verification cache see the change even within one clock tick.
func touch(t *testing.T, root, rel string, d time.Duration) {
	t.Helper()
	p := filepath.Join(root, rel)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime().Add(d), st.ModTime().Add(d)); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) index(approval code.Approval) code.IndexReport {
	f.t.Helper()
	rep, err := f.mem.Index(f.ctx, code.IndexRequest{Root: f.root, RepoID: "repo", Approval: approval})
	if err != nil {
		f.t.Fatalf("index: %v", err)
	}
	return rep
}

func (f *fixture) hydrate(episode, query string, tokens, entities int) code.HydrateResult {
	f.t.Helper()
	res, err := f.mem.Hydrate(f.ctx, code.HydrateRequest{Query: query, EpisodeID: episode, SessionID: "s1", BudgetTokens: tokens, BudgetEntities: entities})
	if err != nil {
		f.t.Fatalf("hydrate %s: %v", episode, err)
	}
	return res
}

func (f *fixture) entity(key string) memory.CodeEntity {
	f.t.Helper()
	es, err := f.store.CodeEntities(f.ctx, memory.CodeEntityFilter{RepoID: "repo", Keys: []string{key}})
	if err != nil || len(es) != 1 {
		f.t.Fatalf("entity %s: %v (%d found)", key, err, len(es))
	}
	return es[0]
}

func keys(blocks []code.Block) []string {
	var out []string
	for _, b := range blocks {
		out = append(out, b.EntityKey)
	}
	return out
}

func blockOf(blocks []code.Block, key string) (code.Block, bool) {
	for _, b := range blocks {
		if b.EntityKey == key {
			return b, true
		}
	}
	return code.Block{}, false
}

func wantCode(t *testing.T, err error, c memory.Code) {
	t.Helper()
	if memory.CodeOf(err) != c {
		t.Fatalf("error %v; want code %s", err, c)
	}
}

// goFile is a small Go source with the given functions.
func goFile(pkg string, funcs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n", pkg)
	for _, fn := range funcs {
		fmt.Fprintf(&b, "\n// %s does its part.\nfunc %s() int {\n\treturn %d\n}\n", fn, fn, len(fn))
	}
	return b.String()
}
