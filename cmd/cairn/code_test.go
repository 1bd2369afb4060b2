package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/code"
)

func TestCodeCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	repo := t.TempDir()
	src := "package shop\n\n// Checkout charges the cart.\nfunc Checkout(total int) error {\n\treturn nil\n}\n\n// Cart holds items.\ntype Cart struct{ Items []string }\n\n// Add puts an item in the cart.\nfunc (c *Cart) Add(item string) {\n\tc.Items = append(c.Items, item)\n}\n"
	if err := os.WriteFile(filepath.Join(repo, "shop.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustCLI(t, db, "code", "index", "--repo-id", "shop", repo)
	if !strings.Contains(out, "3 live, 3 proposed, 3 promoted") {
		t.Fatalf("index output:\n%s", out)
	}
	rep := decode[code.IndexReport](t, mustCLI(t, db, "--json", "code", "index", "--repo-id", "shop", repo))
	if rep.Unchanged != 1 || rep.Changed != 0 || rep.Entities != 3 {
		t.Fatalf("re-index: %+v", rep)
	}

	out = mustCLI(t, db, "code", "hydrate", "--session", "s1", "--episode", "e1", "--content", "why", "does", "Checkout", "fail")
	if !strings.Contains(out, "shop.go::Checkout") || !strings.Contains(out, "ast_resolved/ast") || !strings.Contains(out, "func Checkout(total int) error") {
		t.Fatalf("hydrate output:\n%s", out)
	}
	res := decode[code.HydrateResult](t, mustCLI(t, db, "--json", "code", "hydrate", "--session", "s1", "--episode", "e2", "--budget", "60", "items"))
	found := false
	for _, b := range res.Blocks {
		found = found || (b.EntityKey == "shop.go::Checkout" && b.Reason == "previously_hydrated")
	}
	if !found || res.TotalTokens > 60 {
		t.Fatalf("episode 2: %+v", res)
	}

	out = mustCLI(t, db, "code", "inspect", "hydration", "e2")
	if !strings.Contains(out, "previously_hydrated/tracking") || !strings.Contains(out, "tracking  ok") {
		t.Fatalf("inspect hydration:\n%s", out)
	}
	out = mustCLI(t, db, "code", "inspect", "entity", "shop.go::Cart.Add")
	if !strings.Contains(out, "AUTHORITATIVE") || !strings.Contains(out, "- -> PROPOSED") || !strings.Contains(out, "PROPOSED -> AUTHORITATIVE") {
		t.Fatalf("inspect entity:\n%s", out)
	}
	out = mustCLI(t, db, "code", "inspect", "gates", rep.EpisodeID)
	if !strings.Contains(out, "no gate evaluations") {
		t.Fatalf("inspect gates of an index that changed nothing:\n%s", out)
	}
	out = mustCLI(t, db, "code", "verify")
	if !strings.Contains(out, "3 checked, 3 fresh, 0 stale") {
		t.Fatalf("verify:\n%s", out)
	}

	// The disk changes: verify says so and exits 1.
	if err := os.WriteFile(filepath.Join(repo, "shop.go"), []byte(strings.Replace(src, "return nil", "return errNoCart", 1)+"\nvar errNoCart error\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, exit := cli(t, db, "", "code", "verify")
	if exit != 1 || !strings.Contains(out, "stale  shop.go::Checkout") {
		t.Fatalf("verify after a change: exit %d\n%s", exit, out)
	}

	// Bad input: typed errors and exit codes.
	for _, tc := range []struct {
		args []string
		exit int
		msg  string
	}{
		{[]string{"code", "inspect", "hydration", "nope"}, 3, "not_found"},
		{[]string{"code", "inspect", "entity", "no-separator"}, 2, "invalid_params"},
		{[]string{"code", "inspect", "what", "x"}, 2, "hydration, entity or gates"},
		{[]string{"code", "hydrate", "--episode", "e9", "x"}, 2, "session_id"},
		{[]string{"code", "index", filepath.Join(repo, "missing")}, 3, "does not exist"},
		{[]string{"code", "index"}, 2, "invalid_params"},
	} {
		_, errs, exit := cli(t, db, "", tc.args...)
		if exit != tc.exit || !strings.Contains(errs, tc.msg) {
			t.Errorf("cairn %v: exit %d, %q; want exit %d mentioning %q", tc.args, exit, errs, tc.exit, tc.msg)
		}
	}
}
