package code_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// Under the allowed directories a root resolves; anything else gets one
// and the same answer, whether the path exists, is a file, or leads out
// through a symlink.
func TestAllowedRootGivesNothingAway(t *testing.T) {
	allowed := t.TempDir()
	outside := t.TempDir()
	repo := filepath.Join(allowed, "repo")
	for _, d := range []string{repo, filepath.Join(outside, "secret")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(allowed, "out")); err != nil {
		t.Fatal(err)
	}
	got, err := code.AllowedRoot(repo, []string{allowed})
	if want, _ := filepath.EvalSymlinks(repo); err != nil || got != want {
		t.Fatalf("AllowedRoot(repo) = %q, %v; want %q", got, err, want)
	}
	if got, err := code.AllowedRoot(allowed, []string{allowed}); err != nil || got == "" {
		t.Fatalf("the allowed directory itself: %q, %v", got, err)
	}
	var msgs []string
	for _, root := range []string{
		outside, filepath.Join(outside, "secret"), filepath.Join(outside, "missing"), filepath.Join(outside, "file"),
		filepath.Join(allowed, "out"), filepath.Join(allowed, "out", "secret"), filepath.Join(allowed, "out", "missing"),
		filepath.Join(allowed, "missing"), filepath.Join(allowed, "file"), filepath.Join(allowed, "..", filepath.Base(outside)),
		"relative/repo", "/",
	} {
		_, err := code.AllowedRoot(root, []string{allowed})
		if memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Fatalf("%s: %v; want invalid_params", root, err)
		}
		pub := memory.Public(err).Message
		msgs = append(msgs, stripQuoted(pub))
	}
	for _, m := range msgs[1:] {
		if m != msgs[0] {
			t.Fatalf("refusals differ beyond the path they quote:\n%q\n%q", msgs[0], m)
		}
	}
	if _, err := code.AllowedRoot(repo, nil); memory.CodeOf(err) != memory.CodeFeatureDisabled {
		t.Fatalf("no allowed roots: %v; want feature_disabled", err)
	}
}

// stripQuoted drops the first quoted string of a message (the root as
// given).
func stripQuoted(s string) string {
	before, rest, ok := strings.Cut(s, `"`)
	if !ok {
		return s
	}
	_, after, _ := strings.Cut(rest, `"`)
	return before + after
}
