package layering_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/internal/layering"
)

const module = "github.com/cairnhq/cairn"

// moduleRoot is the repository's root, two folders up from this test.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// listPackages runs go list -json over the module and returns each
// package with the module's packages it imports (tests aside), by
// directory in the module.
func listPackages(t *testing.T) []layering.Package {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	var pkgs []layering.Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		path, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		pkg := layering.Package{Path: path}
		for _, imp := range p.Imports {
			if r, ok := rel(imp); ok {
				pkg.Imports = append(pkg.Imports, r)
			}
		}
		pkgs = append(pkgs, pkg)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages of %s: not the repository", len(pkgs), module)
	}
	return pkgs
}

// The repository keeps its layers.
func TestRepositoryKeepsItsLayers(t *testing.T) {
	for _, v := range layering.Check(listPackages(t)) {
		t.Error(v)
	}
}

// Each rule catches the import that breaks it, and the repository's own
// shape passes.
func TestCheckCatchesEveryBrokenRule(t *testing.T) {
	base := []layering.Package{
		{Path: "memory"},
		{Path: "content"},
		{Path: "sqlstore", Imports: []string{"memory"}},
		{Path: "sqlite", Imports: []string{"memory", "sqlstore"}},
		{Path: "postgres", Imports: []string{"memory", "sqlstore"}},
		{Path: "lexical"},
		{Path: "embed", Imports: []string{"memory", "embed/glove"}},
		{Path: "embed/glove"},
		{Path: "index", Imports: []string{"embed", "lexical", "memory"}},
		{Path: "retrieve", Imports: []string{"content", "embed", "index", "memory"}},
		{Path: "graph", Imports: []string{"memory"}},
		{Path: "voice", Imports: []string{"graph", "memory", "retrieve"}},
		{Path: "maintain", Imports: []string{"memory", "internal/text"}},
		{Path: "internal/text"},
		{Path: "internal/metrics"},
		{Path: "", Imports: []string{"graph", "maintain", "memory", "retrieve", "sqlite", "postgres", "voice"}},
		{Path: "internal/bench", Imports: []string{"", "postgres", "retrieve"}},
		{Path: "httpapi", Imports: []string{"", "internal/metrics", "memory"}},
		{Path: "webui", Imports: []string{"", "internal/text", "memory"}},
		{Path: "cmd/cairn", Imports: []string{"", "httpapi", "internal/bench", "memory", "webui"}},
	}
	if v := layering.Check(base); len(v) > 0 {
		t.Fatalf("a well-layered module fails: %q", v)
	}
	for _, c := range []struct {
		name string
		pkg  layering.Package
		want string
	}{
		{"a face imports a service", layering.Package{Path: "webui", Imports: []string{"", "maintain"}}, "a face imports only the root package"},
		{"a face imports the ground beyond memory", layering.Package{Path: "httpapi", Imports: []string{"content"}}, "a face imports only the root package"},
		{"a face imports another face", layering.Package{Path: "webui", Imports: []string{"httpapi"}}, "nothing imports a face but cmd/cairn"},
		{"a service imports a face", layering.Package{Path: "voice", Imports: []string{"webui"}}, "nothing imports a face"},
		{"a service imports the root package", layering.Package{Path: "voice", Imports: []string{""}}, "imports the root package"},
		{"a store imports a base package", layering.Package{Path: "sqlite", Imports: []string{"memory", "lexical"}}, "a store imports only memory and sqlstore"},
		{"a store imports another store", layering.Package{Path: "postgres", Imports: []string{"sqlite"}}, "a store imports only memory and sqlstore"},
		{"sqlstore imports more than memory", layering.Package{Path: "sqlstore", Imports: []string{"content"}}, "the shared SQL imports only memory"},
		{"a service imports a store", layering.Package{Path: "maintain", Imports: []string{"sqlite"}}, "only through memory.Store"},
		{"an import points up", layering.Package{Path: "graph", Imports: []string{"voice"}}, "not below it"},
		{"the ground imports", layering.Package{Path: "memory", Imports: []string{"content"}}, "not below it"},
		{"an internal package hides the root", layering.Package{Path: "internal/text", Imports: []string{""}}, "maintain imports internal/text, which is not below it"},
		{"a package in no layer", layering.Package{Path: "widgets"}, "widgets is in no layer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pkgs := slices.DeleteFunc(slices.Clone(base), func(p layering.Package) bool { return p.Path == c.pkg.Path })
			v := layering.Check(append(pkgs, c.pkg))
			if !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, c.want) }) {
				t.Errorf("want a violation saying %q, got %q", c.want, v)
			}
		})
	}
}

// docs/architecture.md draws every layer, top down: DESIGN.md's order
// read from the faces to the ground.
func TestArchitectureDocDrawsEveryLayer(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "```text")
	end := strings.Index(doc[start+1:], "```")
	if start < 0 || end < 0 {
		t.Fatal("docs/architecture.md has no ```text diagram")
	}
	diagram := doc[start : start+1+end]
	last := -1
	layers := layering.Layers()
	slices.Reverse(layers)
	for _, l := range layers {
		name := l.Path + "/"
		if l.Path == "" {
			name = "cairn (root)"
		}
		at := strings.Index(diagram, name)
		if at < 0 {
			t.Errorf("the diagram does not draw %s", name)
			continue
		}
		if at < last {
			t.Errorf("the diagram draws %s above a layer that stands on it: it draws the layers top down, the ground last", name)
		}
		last = at
	}
}
