package code_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

func TestConfineRefusesEscapes(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, root, "in.go", "package p\n")
	write(t, outside, "secret.go", "package s\n")
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(root, "link.go")); err != nil {
		t.Skip("symlinks unavailable here: ", err)
	}
	if err := os.Symlink(filepath.Join(root, "loop.go"), filepath.Join(root, "loop.go")); err != nil {
		t.Fatal(err)
	}
	real, err := code.CleanRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel  string
		want memory.Code
	}{
		{"../" + filepath.Base(outside) + "/secret.go", memory.CodeInvalidParams},
		{"a/../../x.go", memory.CodeInvalidParams},
		{"/etc/passwd", memory.CodeInvalidParams},
		{"link.go", memory.CodeInvalidParams},
		{"loop.go", memory.CodeInvalidParams},
		{"gone.go", memory.CodeNotFound},
		{"", memory.CodeInvalidParams},
		{"a\x00b", memory.CodeInvalidParams},
	} {
		_, err := code.Confine(real, tc.rel)
		if memory.CodeOf(err) != tc.want {
			t.Errorf("Confine(%q): %v; want %s", tc.rel, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), outside) {
			t.Errorf("Confine(%q) leaked a path outside the root: %v", tc.rel, err)
		}
	}
	if p, err := code.Confine(real, "in.go"); err != nil || p != filepath.Join(real, "in.go") {
		t.Fatalf("Confine(in.go) = %q, %v", p, err)
	}
}

// Bad files are skipped with a reason, never a crash; an index run again
// reads only what changed; files deleted after the index are stale.
func TestIndexBadInputAndReindex(t *testing.T) {
	huge := "package p\n\n// " + strings.Repeat("x", 3000) + "\nfunc Huge() {}\n"
	f := newFixture(t, map[string]string{
		"ok.go":        goFile("p", "Good", "Fine"),
		"bin.go":       "package p\x00\x01\x02 binary",
		"huge.go":      huge,
		"latin1.py":    "def caf\xe9():\n    return '\xff\xfe'\n\ndef plain():\n    return 1\n",
		"dir::x/k.go":  goFile("k", "Colon"),
		"README.md":    "# not code",
		".hidden/h.go": goFile("h", "Hidden"),
	}, func(s *setup) { s.max = 2048 })
	outside := t.TempDir()
	write(t, outside, "secret.go", goFile("s", "Secret"))
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(f.root, "link.go")); err != nil {
		t.Skip("symlinks unavailable here: ", err)
	}
	if err := os.Symlink(filepath.Join(f.root, "self.go"), filepath.Join(f.root, "self.go")); err != nil {
		t.Fatal(err)
	}
	rep := f.index(code.ApprovalImplicit)
	reasons := map[string]string{}
	for _, s := range rep.SkippedFiles {
		reasons[s.Path] = s.Reason
	}
	for path, want := range map[string]string{"bin.go": "binary", "huge.go": "over the 2048-byte limit", "link.go": "outside the repository root", "self.go": "symlink loop"} {
		if !strings.Contains(reasons[path], want) {
			t.Errorf("skip reason of %s: %q; want %q (all: %v)", path, reasons[path], want, reasons)
		}
	}
	all, err := f.store.CodeEntities(f.ctx, memory.CodeEntityFilter{RepoID: "repo"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range all {
		got[e.Key] = true
		if strings.Contains(e.Key, "Secret") || strings.Contains(e.Key, "Hidden") {
			t.Errorf("indexed %s", e.Key)
		}
	}
	for _, k := range []string{"ok.go::Good", "dir::x/k.go::Colon", "latin1.py::plain"} {
		if !got[k] {
			t.Errorf("missing %s in %v", k, got)
		}
	}
	// The key with "::" in its path still parses and introspects.
	v, err := f.mem.InspectEntity(f.ctx, "", "dir::x/k.go::Colon")
	if err != nil || v.Filepath != "dir::x/k.go" || v.CurrentState != "AUTHORITATIVE" {
		t.Fatalf("entity with :: in its path: %+v, %v", v, err)
	}

	// Nothing changed: nothing is read again.
	again := f.index(code.ApprovalImplicit)
	if again.Changed != 0 || again.Proposed != 0 || again.Unchanged == 0 {
		t.Fatalf("re-index of an unchanged tree: %+v", again)
	}
	// One file changes, one is deleted.
	write(t, f.root, "ok.go", goFile("p", "Good"))
	touch(t, f.root, "ok.go", 1e9)
	if err := os.Remove(filepath.Join(f.root, "dir::x", "k.go")); err != nil {
		t.Fatal(err)
	}
	// Verify between the delete and the next index: stale, no crash.
	ver, err := f.mem.Verify(f.ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	staleKeys := map[string]string{}
	for _, s := range ver.Stale {
		staleKeys[s.EntityKey] = s.ETV.Reason
	}
	if !strings.Contains(staleKeys["dir::x/k.go::Colon"], "no longer exists") || !strings.Contains(staleKeys["ok.go::Fine"], "no longer in ok.go") {
		t.Fatalf("verify after changes: %v", staleKeys)
	}
	third := f.index(code.ApprovalImplicit)
	if third.Changed != 1 || third.Removed != 1 || third.Tombstoned != 2 {
		t.Fatalf("re-index after one change and one delete: %+v", third)
	}
	if e := f.entity("ok.go::Fine"); e.State != memory.StateTombstoned {
		t.Fatalf("removed symbol is %s", e.State)
	}
	if e := f.entity("ok.go::Good"); e.State != memory.StateAuthoritative {
		t.Fatalf("unchanged symbol in a changed file is %s", e.State)
	}
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t, map[string]string{"a.go": goFile("a", "Alpha")})
	_, err := f.mem.Hydrate(f.ctx, code.HydrateRequest{Query: "x", EpisodeID: "e1", SessionID: "s1"})
	wantCode(t, err, memory.CodeNotFound) // nothing indexed yet
	f.index(code.ApprovalImplicit)
	for name, err := range map[string]error{
		"unknown episode, hydration": second(f.mem.InspectHydration(f.ctx, "nope")),
		"unknown episode, gates":     second(f.mem.InspectGates(f.ctx, "nope")),
		"unknown entity":             second(f.mem.InspectEntity(f.ctx, "", "a.go::Nope")),
	} {
		if memory.CodeOf(err) != memory.CodeNotFound {
			t.Errorf("%s: %v; want not_found", name, err)
		}
	}
	for name, err := range map[string]error{
		"bad key":            second(f.mem.InspectEntity(f.ctx, "", "no-separator")),
		"empty query":        second(f.mem.Hydrate(f.ctx, code.HydrateRequest{Query: " ", EpisodeID: "e1", SessionID: "s1"})),
		"new episode":        second(f.mem.Hydrate(f.ctx, code.HydrateRequest{Query: "x", EpisodeID: "e9"})),
		"bad episode id":     second(f.mem.Hydrate(f.ctx, code.HydrateRequest{Query: "x", EpisodeID: "a b", SessionID: "s1"})),
		"budget":             second(f.mem.Hydrate(f.ctx, code.HydrateRequest{Query: "x", EpisodeID: "e1", SessionID: "s1", BudgetTokens: -1})),
		"approval":           second(f.mem.Promote(f.ctx, code.PromoteRequest{EpisodeID: "e1", SessionID: "s1", Approval: "maybe"})),
		"artifact type":      second(f.mem.Propose(f.ctx, code.ProposeRequest{Key: "a.go::Alpha", Content: "x", Type: "poem", EpisodeID: "e1", SessionID: "s1"})),
		"escaping proposal":  second(f.mem.Propose(f.ctx, code.ProposeRequest{Key: "../x.go::Alpha", Content: "x", EpisodeID: "e1", SessionID: "s1"})),
		"missing root":       second(f.mem.Index(f.ctx, code.IndexRequest{Root: ""})),
		"root is a file":     second(f.mem.Index(f.ctx, code.IndexRequest{Root: filepath.Join(f.root, "a.go")})),
		"promote not found":  second(f.mem.Promote(f.ctx, code.PromoteRequest{EpisodeID: "e1", SessionID: "s1", Keys: []string{"a.go::Zed"}, Approval: code.ApprovalApproved})),
		"promote non-propos": second(f.mem.Promote(f.ctx, code.PromoteRequest{EpisodeID: "e1", SessionID: "s1", Keys: []string{"a.go::Alpha"}, Approval: code.ApprovalApproved})),
	} {
		c := memory.CodeOf(err)
		if c != memory.CodeInvalidParams && c != memory.CodeNotFound {
			t.Errorf("%s: %v; want invalid_params or not_found", name, err)
		}
	}
	// A second session may not take over an episode.
	f.hydrate("e1", "Alpha", 0, 0)
	_, err = f.mem.Hydrate(f.ctx, code.HydrateRequest{Query: "x", EpisodeID: "e1", SessionID: "other"})
	wantCode(t, err, memory.CodeConflict)
	// Another root under the same repository id is a conflict.
	_, err = f.mem.Index(f.ctx, code.IndexRequest{Root: t.TempDir(), RepoID: "repo"})
	wantCode(t, err, memory.CodeConflict)
}

func second[T any](_ T, err error) error { return err }

// The Go standard library's net/http, a real tree: every file resolves by
// AST except deliberate testdata, the index is stable, and hydration names
// the right entity.
func TestGOROOTNetHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes the standard library's net/http; skipped with -short")
	}
	goroot := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		goroot = strings.TrimSpace(string(out))
	}
	dir := filepath.Join(goroot, "src", "net", "http")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no Go source tree at %s: %v", dir, err)
	}
	f := newFixture(t, nil)
	rep, err := f.mem.Index(f.ctx, code.IndexRequest{Root: dir, RepoID: "nethttp"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files < 100 || rep.Entities < 2000 {
		t.Fatalf("net/http: %+v", rep)
	}
	for _, fb := range rep.Fallbacks {
		if !strings.Contains(fb.Path, "testdata") {
			t.Errorf("regex fallback outside testdata: %+v", fb)
		}
	}
	again, err := f.mem.Index(f.ctx, code.IndexRequest{Root: dir, RepoID: "nethttp"})
	if err != nil || again.Changed != 0 || again.Proposed != 0 || again.Entities != rep.Entities {
		t.Fatalf("re-index of an unchanged tree: %+v, %v", again, err)
	}
	res, err := f.mem.Hydrate(f.ctx, code.HydrateRequest{Query: "how does Server.Serve accept connections", EpisodeID: "e1", SessionID: "s1", BudgetTokens: 4000})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := blockOf(res.Blocks, "server.go::Server.Serve"); !ok || b.Reason != "ast_resolved" {
		t.Fatalf("server.go::Server.Serve not hydrated as a named symbol: %v", keys(res.Blocks))
	}
	ver, err := f.mem.Verify(f.ctx, "nethttp", nil)
	if err != nil || len(ver.Stale) != 0 || ver.Checked < 2000 {
		t.Fatalf("verify of an untouched tree: checked %d, stale %d, %v", ver.Checked, len(ver.Stale), err)
	}
}
