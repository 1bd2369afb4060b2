package layering

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is what a layer's packages are for.
type Kind string

// The kinds of layer, from the ground up.
const (
	// Ground is the vocabulary every package stands on: memory, content.
	Ground Kind = "ground"
	// Store is a database behind memory.Store, and the SQL both stores
	// share (sqlstore).
	Store Kind = "store"
	// Suite is the conformance suite every store passes.
	Suite Kind = "suite"
	// Base is the machinery of retrieval: analysis, embedders, vectors,
	// the persisted index and its segments.
	Base Kind = "base"
	// Service is a capability over memory.Store: retrieval, the
	// knowledge graph, code memory, synthesis, the inner voice, the
	// removal lifecycle, capture, import and export.
	Service Kind = "service"
	// Root is the package cairn: the engine's wiring and its tool table.
	Root Kind = "root"
	// Face is a way in for people and agents: MCP, HTTP, the web page,
	// the CLI.
	Face Kind = "face"
	// Tool is a package under internal/: benchmarks, metrics, test
	// helpers, shared text. It ranks with what it imports.
	Tool Kind = "tool"
	// Tests is the end-to-end tests.
	Tests Kind = "tests"
)

// Layer is one row of the order: a package (and the packages under it)
// and its kind.
type Layer struct {
	// Path is the package's directory in the module ("" for the root
	// package, "cmd/cairn").
	Path string
	Kind Kind
}

// Layers is DESIGN.md's table, lowest first: a package imports only
// packages listed above it (tests aside). Packages under a listed path
// belong to its layer (embed/glove to embed); internal/ packages rank
// with the highest layer they import.
func Layers() []Layer {
	return []Layer{
		{"memory", Ground}, {"content", Ground},
		{"sqlstore", Store}, {"sqlite", Store}, {"postgres", Store}, {"storetest", Suite},
		{"lexical", Base}, {"embed", Base}, {"vector", Base}, {"segment", Base}, {"index", Base},
		{"retrieve", Service}, {"graph", Service}, {"code", Service}, {"synth", Service}, {"llm", Service},
		{"voice", Service}, {"maintain", Service}, {"heal", Service}, {"capture", Service}, {"peer", Service}, {"transfer", Service}, {"browse", Service},
		{"", Root},
		{"mcpserver", Face}, {"httpapi", Face}, {"webui", Face}, {"cmd/cairn", Face},
		{"internal", Tool},
		{"e2e", Tests},
	}
}

// Binary is the face that serves the others (cairn serve, cairn mcp,
// cairn ui): the one package that may import a face.
const Binary = "cmd/cairn"

// Package is a package of the module and the packages of the module it
// imports (tests aside), each by its directory in the module.
type Package struct {
	Path    string
	Imports []string
}

// placed is a package's layer and rank in the order.
type placed struct {
	layer Layer
	rank  int
}

// place finds the layer of a package path: the longest listed path it is
// or lies under.
func place(path string) (placed, bool) {
	best, found := placed{}, false
	for i, l := range Layers() {
		under := l.Path == "" && path == "" || l.Path != "" && (path == l.Path || strings.HasPrefix(path, l.Path+"/"))
		if under && (!found || len(l.Path) > len(best.layer.Path)) {
			best, found = placed{l, i}, true
		}
	}
	return best, found
}

// Check returns every way pkgs bend the layers, one sentence each
// (none: they keep them).
func Check(pkgs []Package) []string {
	byPath := map[string]Package{}
	for _, p := range pkgs {
		byPath[p.Path] = p
	}
	ranks := map[string]int{}
	var out []string
	for _, p := range pkgs {
		if _, ok := place(p.Path); !ok {
			out = append(out, fmt.Sprintf("%s is in no layer: place it in internal/layering and docs/architecture.md", show(p.Path)))
		}
	}
	for _, p := range pkgs {
		from, ok := place(p.Path)
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			to, ok := place(imp)
			if !ok {
				continue
			}
			if msg := rule(p.Path, from, imp, to); msg != "" {
				out = append(out, msg)
				continue
			}
			if from.layer.Path == to.layer.Path || from.layer.Kind == Tool {
				// Within one package family (embed and embed/glove); an
				// internal/ package ranks with what it imports.
				continue
			}
			if rankOf(p.Path, byPath, ranks) <= rankOf(imp, byPath, ranks) {
				out = append(out, fmt.Sprintf("%s imports %s, which is not below it in DESIGN.md's order", show(p.Path), show(imp)))
			}
		}
	}
	slices.Sort(out)
	return out
}

// rule is the named rule an import breaks ("" for none).
func rule(path string, from placed, imp string, to placed) string {
	switch {
	case to.layer.Kind == Face && path != Binary:
		return fmt.Sprintf("%s imports the face %s: nothing imports a face but %s", show(path), show(imp), Binary)
	case from.layer.Kind == Face && to.layer.Kind != Root && to.layer.Kind != Face && imp != "memory" && to.layer.Kind != Tool:
		return fmt.Sprintf("the face %s imports %s: a face imports only the root package, memory and internal/", show(path), show(imp))
	case to.layer.Kind == Root && from.rank < to.rank && from.layer.Kind != Tool:
		return fmt.Sprintf("%s imports the root package: the packages below it get what they need through seams the engine wires", show(path))
	case from.layer.Kind == Store && path == "sqlstore" && imp != "memory":
		return fmt.Sprintf("sqlstore imports %s: the shared SQL imports only memory", show(imp))
	case from.layer.Kind == Store && imp != "memory" && imp != "sqlstore":
		return fmt.Sprintf("the store %s imports %s: a store imports only memory and sqlstore", show(path), show(imp))
	case to.layer.Kind == Store && from.layer.Kind != Store && from.layer.Kind != Root && from.layer.Kind != Tool:
		return fmt.Sprintf("%s imports the store %s: services use a store only through memory.Store", show(path), show(imp))
	}
	return ""
}

// rankOf is a package's rank in the order; an internal/ package ranks
// with the highest package it imports (directly or through other
// internal/ packages), so that whatever imports it stays above that.
func rankOf(path string, byPath map[string]Package, ranks map[string]int) int {
	if r, ok := ranks[path]; ok {
		return r
	}
	p, _ := place(path)
	if p.layer.Kind != Tool {
		return p.rank
	}
	ranks[path] = 0 // an import cycle cannot build; this ends the walk
	r := 0
	for _, imp := range byPath[path].Imports {
		r = max(r, rankOf(imp, byPath, ranks))
	}
	ranks[path] = r
	return r
}

// show names a package as the docs do.
func show(path string) string {
	if path == "" {
		return "the root package cairn"
	}
	return path
}
