package cairn_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
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

// With CodeRootsOnly (the network faces), code_index indexes only under
// CodeRoots and refuses the rest with one answer; none listed turns it
// off. Without it (the CLI, MCP over stdio) any directory is indexed.
func TestCodeIndexOnlyUnderCodeRoots(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{allowed, outside} {
		if err := os.WriteFile(filepath.Join(d, "k.go"), []byte("package k\n\nfunc K() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	open := func(o cairn.Options) *cairn.Engine {
		o.Embedder = embed.Hash{Dim: 64}
		return openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &o)
	}
	net := open(cairn.Options{CodeRootsOnly: true, CodeRoots: []string{allowed}})
	if rep, err := net.IndexCode(ctx, cairn.CodeIndexRequest{Root: allowed, RepoID: "a"}, nil); err != nil || rep.Proposed != 1 {
		t.Fatalf("under the code roots: %+v, %v", rep, err)
	}
	var msgs []string
	for _, root := range []string{outside, filepath.Join(outside, "missing"), filepath.Join(outside, "k.go")} {
		_, err := net.IndexCode(ctx, cairn.CodeIndexRequest{Root: root, RepoID: "b"}, nil)
		if memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Fatalf("%s: %v; want invalid_params", root, err)
		}
		msgs = append(msgs, strings.Replace(memory.Public(err).Message, root, "ROOT", 1))
	}
	if msgs[0] != msgs[1] || msgs[1] != msgs[2] {
		t.Fatalf("refusals differ: %q", msgs)
	}
	if _, err := open(cairn.Options{CodeRootsOnly: true}).IndexCode(ctx, cairn.CodeIndexRequest{Root: allowed}, nil); memory.CodeOf(err) != memory.CodeFeatureDisabled {
		t.Fatalf("no code roots: %v; want feature_disabled", err)
	}
	if _, err := open(cairn.Options{}).IndexCode(ctx, cairn.CodeIndexRequest{Root: outside}, nil); err != nil {
		t.Fatalf("the CLI's engine indexes any directory: %v", err)
	}

	// A repository the CLI indexed outside the code roots is not read
	// over the network: hydrate, verify and promote refuse it as they
	// would its root, and serve a repository under the roots.
	db := filepath.Join(t.TempDir(), "shared.db")
	cli := openAt(t, db, &cairn.Options{Embedder: embed.Hash{Dim: 64}})
	if _, err := cli.IndexCode(ctx, cairn.CodeIndexRequest{Root: outside, RepoID: "elsewhere"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.IndexCode(ctx, cairn.CodeIndexRequest{Root: allowed, RepoID: "here"}, nil); err != nil {
		t.Fatal(err)
	}
	cli.Close()
	served := openAt(t, db, &cairn.Options{Embedder: embed.Hash{Dim: 64}, CodeRootsOnly: true, CodeRoots: []string{allowed}})
	hydrate := func(repo string) error {
		_, err := served.Hydrate(ctx, cairn.CodeHydrateRequest{Query: "K", RepoID: repo, SessionID: "s", EpisodeID: "e-" + repo})
		return err
	}
	if err := hydrate("elsewhere"); memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), "CAIRN_CODE_ROOTS") {
		t.Fatalf("hydrating a repository outside the code roots: %v", err)
	}
	if _, err := served.VerifyCode(ctx, cairn.CodeVerifyRequest{RepoID: "elsewhere"}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("verifying a repository outside the code roots: %v", err)
	}
	if _, err := served.PromoteCode(ctx, cairn.CodePromoteRequest{RepoID: "elsewhere", Approval: "approved", SessionID: "s", EpisodeID: "p"}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("promoting in a repository outside the code roots: %v", err)
	}
	if err := hydrate("here"); err != nil {
		t.Fatalf("hydrating a repository under the code roots: %v", err)
	}
}

func TestCodeRootsSetting(t *testing.T) {
	env := map[string]string{cairn.EnvCodeRoots: "/srv/a" + string(os.PathListSeparator) + " /srv/b/ "}
	s, err := cairn.SettingsFromEnv(func(k string) string { return env[k] })
	if err != nil || strings.Join(s.CodeRoots, ",") != "/srv/a,/srv/b" {
		t.Fatalf("code roots %q, %v", s.CodeRoots, err)
	}
	env[cairn.EnvCodeRoots] = "relative/dir"
	if _, err := cairn.SettingsFromEnv(func(k string) string { return env[k] }); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("a relative code root: %v; want invalid_params", err)
	}
}
