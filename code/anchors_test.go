package code_test

import (
	"strings"
	"testing"

	"github.com/cairnhq/cairn/code"
)

// A file the query names is the file at that exact path when there is one
// (not every file ending in the name), and within it the symbols the query
// names come first, so a tight budget keeps them.
func TestAnchorsPreferTheExactFileAndNamedSymbols(t *testing.T) {
	f := newFixture(t, map[string]string{
		"server.go":          goFile("p", "Alpha", "Beta", "Gamma", "Serve", "Zeta"),
		"sub/server.go":      goFile("sub", "Other"),
		"web/api/handler.go": goFile("api", "Handle"),
	})
	f.index(code.ApprovalImplicit)

	res := f.hydrate("e1", "why does Serve hang in server.go", 8000, 50)
	got := keys(res.Blocks)
	if len(got) == 0 || got[0] != "server.go::Serve" {
		t.Fatalf("blocks %v; want server.go::Serve first", got)
	}
	// The rest of the root file follows; sub/server.go is no anchor (it may
	// still be retrieved by search, after the anchors).
	for i, b := range res.Blocks {
		anchored := strings.HasSuffix(b.Reason, "_resolved")
		if (i < 5) != (anchored && strings.HasPrefix(b.EntityKey, "server.go::")) {
			t.Fatalf("block %d is %s (%s); want the five entities of server.go anchored first, then nothing anchored", i, b.EntityKey, b.Reason)
		}
	}

	// With room for one block only, the named symbol is the one kept.
	one := f.hydrate("e2", "Serve in server.go", 8000, 1)
	if k := keys(one.Blocks); len(k) != 1 || k[0] != "server.go::Serve" || !one.Exhausted {
		t.Fatalf("one-block budget kept %v (exhausted %v)", k, one.Exhausted)
	}

	// A name with no file at that exact path matches the files ending in it.
	h := f.hydrate("e3", "look at handler.go", 8000, 50)
	if k := keys(h.Blocks); len(k) == 0 || k[0] != "web/api/handler.go::Handle" {
		t.Fatalf("blocks %v; want web/api/handler.go::Handle first", k)
	}
	// And a full path picks that file only.
	s := f.hydrate("e4", "sub/server.go", 8000, 50)
	if k := keys(s.Blocks); len(k) == 0 || k[0] != "sub/server.go::Other" {
		t.Fatalf("blocks %v; want sub/server.go::Other first", k)
	}
}
