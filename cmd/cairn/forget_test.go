package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/forgettest"
)

// command renders a forget's tool call as the command that does it.
func command(c forgettest.Call, args map[string]any) []string {
	id := func(k string) string { s, _ := args[k].(string); return s }
	switch c.Tool {
	case "forget":
		return []string{"forget", id("observationId")}
	case "summary_forget":
		return []string{"forget", id("summaryId")}
	case "thought_forget":
		return []string{"forget", "--type", "thought", id("thoughtId")}
	case "thought_mark":
		return []string{"thoughts", "mark", "--status", id("status"), id("thoughtId")}
	case "code_artifact_forget":
		return []string{"code", "forget", id("hash")}
	case "kg_observation_delete":
		return []string{"kg", "unobserve", id("observationId")}
	case "kg_edge_delete":
		return []string{"kg", "edge", "delete", id("edgeId")}
	case "kg_entity_delete":
		return []string{"kg", "entity", "delete", id("entityId")}
	}
	return nil
}

// TestForgetEveryKind forgets or deletes a record of every kind with the
// command line: the first command forgets it, a second one prints the
// same (a delete: exit 3, not_found); unknown ids exit 3 and malformed
// ones 2, changing nothing.
func TestForgetEveryKind(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	eng, err := cairn.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := forgettest.Seed(t, eng, t.TempDir())
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range forgettest.Calls(recs) {
		args := append([]string{"--json"}, command(c, c.Args)...)
		first := mustCLI(t, db, args...)
		forgettest.CheckResult(t, c, []byte(first))
		second, errs, code := cli(t, db, "", args...)
		switch {
		case c.Redacts && (code != 0 || second != first):
			t.Errorf("cairn %v again: exit %d %s%s; want the same output", args, code, second, errs)
		case !c.Redacts && (code != 3 || !strings.Contains(errs, `"not_found"`)):
			t.Errorf("cairn %v again: exit %d %s; want 3, not_found", args, code, errs)
		}
		if _, errs, code := cli(t, db, "", append([]string{"--json"}, command(c, c.Unknown)...)...); code != 3 {
			t.Errorf("cairn %v (unknown): exit %d %s; want 3", command(c, c.Unknown), code, errs)
		}
		if _, errs, code := cli(t, db, "", append([]string{"--json"}, command(c, c.Bad)...)...); code != 2 {
			t.Errorf("cairn %v (malformed): exit %d %s; want 2", command(c, c.Bad), code, errs)
		}
		forgettest.CheckHistory(t, c, []byte(mustCLI(t, db, "--json", "history", c.ID)))
	}
	eng, err = cairn.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	forgettest.CheckGone(t, eng, recs)
}

// TestForgetFindsTheType: cairn forget finds whether an id names an
// observation, a summary or a thought, refuses one that names several
// unless --type says which, and forgets nothing when any id is unknown.
func TestForgetFindsTheType(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	mustCLI(t, db, "log", "--kind", "message", "--id", "same", "an observation")
	mustCLI(t, db, "think", "--id", "same", "a thought")
	mustCLI(t, db, "think", "--id", "th_only", "another thought")
	if _, errs, code := cli(t, db, "", "forget", "same"); code != 4 || !strings.Contains(errs, "--type") {
		t.Fatalf("an id naming two records: exit %d %s; want 4 asking for --type", code, errs)
	}
	if _, errs, code := cli(t, db, "", "forget", "th_only", "nope"); code != 3 {
		t.Fatalf("an unknown id among others: exit %d %s; want 3", code, errs)
	}
	if out := mustCLI(t, db, "thoughts"); !strings.Contains(out, "another thought") {
		t.Fatalf("a forget that failed forgot th_only: %s", out)
	}
	if out := mustCLI(t, db, "forget", "--type", "thought", "same", "th_only"); !strings.Contains(out, "forgot same (thought)") || !strings.Contains(out, "forgot th_only (thought)") {
		t.Fatalf("forget --type thought: %s", out)
	}
	if out := mustCLI(t, db, "show", "same"); !strings.Contains(out, "an observation") {
		t.Fatalf("the observation was forgotten too: %s", out)
	}
	if out := mustCLI(t, db, "thoughts"); strings.Contains(out, "another thought") || strings.Count(out, "forgotten  [redacted]") != 2 {
		t.Fatalf("thoughts after forget: %s", out)
	}
	if _, _, code := cli(t, db, "", "forget", "--type", "pin", "same"); code != 2 {
		t.Fatalf("--type pin: exit %d; want 2", code)
	}
}
