package cairn_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
)

// Hydrated code goes through the secret redactor, and the blocks count
// what it replaced; with the redactor off (CAIRN_REDACT=off) the text is
// hydrated as the disk holds it.
func TestHydratedCodeIsRedacted(t *testing.T) {
	const secret = "AKIAIOSFODNN7EXAMPLQ"
	root := t.TempDir()
	src := "package k\n\n// Client dials the store.\nfunc Client() string {\n\treturn \"" + secret + "\"\n}\n\n// Plain has no secret.\nfunc Plain() int { return 1 }\n"
	if err := os.WriteFile(filepath.Join(root, "k.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		noRedact bool
	}{{"redacted", false}, {"off", true}} {
		t.Run(tc.name, func(t *testing.T) {
			eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Embedder: embed.Hash{Dim: 64}, NoRedact: tc.noRedact})
			if _, err := eng.IndexCode(ctx, cairn.CodeIndexRequest{Root: root, RepoID: "k"}, nil); err != nil {
				t.Fatal(err)
			}
			res, err := eng.Hydrate(ctx, cairn.CodeHydrateRequest{Query: "look at k.go", EpisodeID: "e1", SessionID: "s1"})
			if err != nil || len(res.Blocks) != 2 {
				t.Fatalf("hydrate: %+v, %v", res, err)
			}
			for _, b := range res.Blocks {
				leaked := strings.Contains(b.Content, secret)
				switch {
				case b.EntityKey == "k.go::Client" && !tc.noRedact && (leaked || b.Redactions != 1 || !strings.Contains(b.Content, "[REDACTED:")):
					t.Errorf("Client block not redacted: %d redactions, %q", b.Redactions, b.Content)
				case b.EntityKey == "k.go::Client" && tc.noRedact && (!leaked || b.Redactions != 0):
					t.Errorf("redactor off, Client block changed: %d redactions, %q", b.Redactions, b.Content)
				case b.EntityKey == "k.go::Plain" && (b.Redactions != 0 || !strings.Contains(b.Content, "return 1")):
					t.Errorf("Plain block changed: %+v", b)
				}
			}
			if want := map[bool]int{false: 1, true: 0}[tc.noRedact]; res.Redactions != want {
				t.Errorf("result counts %d redactions, want %d", res.Redactions, want)
			}
		})
	}
}
