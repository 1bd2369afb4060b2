package code_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// A fresh verifier confirms an entity whose lines still hold its text by
// reading them, without parsing the file (no cache lookup, no miss); one
// whose lines moved is found by parsing, and one whose text changed is
// stale.
func TestVerifierReadsEntityInPlace(t *testing.T) {
	root := t.TempDir()
	src := "package p\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
	path := filepath.Join(root, "p.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var sym code.Symbol
	for _, s := range code.Resolve("p.go", []byte(src)).Symbols {
		if s.Name == "Add" {
			sym = s
		}
	}
	if sym.Name == "" {
		t.Fatal("Add not resolved")
	}
	e := memory.CodeEntity{Path: "p.go", Symbol: "Add", StartLine: sym.StartLine, EndLine: sym.EndLine, ArtifactHash: code.HashArtifact(sym.Text)}
	check := func(v *code.Verifier) code.ETVResult { return v.Check(root, e, 0) }

	v := code.NewVerifier(time.Minute, nil, nil)
	if res := check(v); res.IsStale || res.DiskHash != e.ArtifactHash {
		t.Fatalf("unchanged file: %+v", res)
	}
	if st := v.Stats(); st.Misses != 0 || st.Hits != 0 {
		t.Fatalf("an entity in place was looked up or parsed: %+v", st)
	}

	// Two lines added above: the text is intact but elsewhere, so the
	// file is parsed and the entity found.
	if err := os.WriteFile(path, []byte(strings.Replace(src, "package p\n", "package p\n\nvar x = 1\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	v = code.NewVerifier(time.Minute, nil, nil)
	if res := check(v); res.IsStale {
		t.Fatalf("moved entity reported stale: %+v", res)
	}
	if st := v.Stats(); st.Misses != 1 {
		t.Fatalf("a moved entity was not parsed: %+v", st)
	}

	// The body changed where the entity lies: stale, whatever the route.
	if err := os.WriteFile(path, []byte(strings.Replace(src, "a + b", "a - b", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	v = code.NewVerifier(time.Minute, nil, nil)
	if res := check(v); !res.IsStale {
		t.Fatalf("changed entity not stale: %+v", res)
	}
}
