package code_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// In the default build (no cgo, no build tag), gate A promotes the
// entities of every language with a parser: Go through go/ast, the six
// others through tree-sitter, a file whose syntax errors no entity depends
// on through its partial tree. A file whose errors do matter falls back to
// the regex patterns, is listed as a fallback, and its entities stay
// PROPOSED.
func TestIndexPromotesEveryLanguage(t *testing.T) {
	f := newFixture(t, map[string]string{
		"svc/server.go":   goFile("svc", "Serve"),
		"cache.py":        "class Cache:\n    def get(self, key):\n        return key\n",
		"web/router.js":   "export class Router {\n  add(path) {\n    return path;\n  }\n}\n",
		"web/types.ts":    "export interface Handler {\n  serve(): void;\n}\nexport function handle(): void {}\n",
		"web/App.tsx":     "export const App = () => <div>hello</div>;\n",
		"shapes.rs":       "pub struct Point { x: f64 }\nimpl Point {\n    pub fn norm(&self) -> f64 { self.x }\n}\n",
		"Cache.java":      "public class Cache {\n  public int size() { return 0; }\n}\n",
		"ring.c":          "int ring_push(int v) {\n  return v;\n}\n",
		"partial.c":       "int ok(void) {\n  int x = ;\n  return x;\n}\n",
		"broken/later.py": "class A:\n    def m(self):\n        pass\n    x = = 2\n    def n(self):\n        pass\n",
	})
	rep := f.index(code.ApprovalImplicit)
	if len(rep.Fallbacks) != 1 || rep.Fallbacks[0].Path != "broken/later.py" {
		t.Fatalf("fallbacks %+v; want broken/later.py alone", rep.Fallbacks)
	}
	want := map[string]string{
		"svc/server.go::Serve":  "ast",
		"cache.py::Cache":       "ast",
		"cache.py::Cache.get":   "ast",
		"web/router.js::Router": "ast", "web/router.js::Router.add": "ast",
		"web/types.ts::Handler": "ast", "web/types.ts::handle": "ast",
		"web/App.tsx::App": "ast",
		"shapes.rs::Point": "ast", "shapes.rs::Point.norm": "ast",
		"Cache.java::Cache": "ast", "Cache.java::Cache.size": "ast",
		"ring.c::ring_push":  "ast",
		"partial.c::ok":      "ast",
		"broken/later.py::A": "regex", "broken/later.py::A.m": "regex", "broken/later.py::A.n": "regex",
	}
	es, err := f.store.CodeEntities(f.ctx, memory.CodeEntityFilter{RepoID: "repo"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]memory.CodeEntity{}
	for _, e := range es {
		got[e.Key] = e
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		e, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: not indexed", k)
		case e.Method != want[k]:
			t.Errorf("%s: method %s, want %s", k, e.Method, want[k])
		case want[k] == "ast" && e.State != memory.StateAuthoritative:
			t.Errorf("%s: %s; gate A should have promoted it", k, e.State)
		case want[k] == "regex" && e.State != memory.StateProposed:
			t.Errorf("%s: %s; a regex entity stays PROPOSED", k, e.State)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d entities, want %d: %v", len(got), len(want), slices.Sorted(maps.Keys(got)))
	}
}
