package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
)

// canonical re-encodes JSON with latency_ms dropped, for comparing two
// answers to the same call.
func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "latency_ms")
			for _, y := range x {
				strip(y)
			}
		case []any:
			for _, y := range x {
				strip(y)
			}
		}
	}
	strip(v)
	b, _ := json.Marshal(v)
	return string(b)
}

// The inner voice's answers, moderation and maintenance from the command
// line: the subcommands' JSON is the tools' (cairn call) JSON.
func TestInnerVoiceAskModerateMaintain(t *testing.T) {
	t.Setenv("SURR_ENABLE_INNER_VOICE", "1")
	t.Setenv("SURR_ARCHIVE_DIR", filepath.Join(t.TempDir(), "archive"))
	db := filepath.Join(t.TempDir(), "cairn.db")
	for _, text := range []string{
		"The auth-service depends on NTP; clock drift breaks session token expiry.",
		"The auth-service uses Redis for session tokens, and clock drift breaks token expiry.",
		"Clock drift breaks session token expiry on the auth hosts; Alice owns auth-service.",
	} {
		mustCLI(t, db, "think", "--origin", "human", text)
	}
	q := "why does clock drift break session token expiry?"
	// --no-save writes nothing: the CLI and the tool give the same answer.
	viaCLI := mustCLI(t, db, "--json", "inner-voice", "ask", "--no-save", "--mode", "none", "--top-k", "3", q)
	viaTool := mustCLI(t, db, "call", "inner_voice", `{"content":"`+q+`","top_k":3,"save":false,"mode":"none"}`)
	if canonical(t, viaCLI) != canonical(t, viaTool) {
		t.Fatalf("cli and tool differ:\n%s\n%s", viaCLI, viaTool)
	}
	res := decode[cairn.AskResult](t, viaCLI)
	if len(res.Sources) != 3 || res.SynthesizedAnswer == "" || res.SavedThoughtID != "" {
		t.Fatalf("ask %+v", res)
	}
	text := mustCLI(t, db, "inner-voice", "ask", "--stage-kg", "--auto-mark-removal", q)
	for _, want := range []string{"sources:", "saved as thought th_", "staged ", "marked 3 sources for removal"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	// The candidates list, then approve and reject.
	list := decode[cairn.CandidateList](t, mustCLI(t, db, "--json", "kg", "candidates"))
	if len(list.Candidates) < 3 {
		t.Fatalf("candidates %+v", list)
	}
	if canonical(t, mustCLI(t, db, "--json", "kg", "candidates")) != canonical(t, mustCLI(t, db, "call", "kg_candidates", "{}")) {
		t.Fatal("cairn kg candidates and the kg_candidates tool differ")
	}
	var approveID, rejectID string
	for _, c := range list.Candidates {
		switch strings.ToLower(c.Name) {
		case "auth-service":
			approveID = c.ID
		case "alice":
			rejectID = c.ID
		}
	}
	out := mustCLI(t, db, "kg", "candidates", "approve", approveID)
	if !strings.Contains(out, "approved as ent_") {
		t.Fatalf("approve: %s", out)
	}
	out = mustCLI(t, db, "kg", "candidates", "reject", "--block", rejectID)
	if !strings.Contains(out, "rejected (blocked)") {
		t.Fatalf("reject: %s", out)
	}
	if out := mustCLI(t, db, "kg", "candidates", "blocklist"); !strings.Contains(out, "alice") {
		t.Fatalf("blocklist: %s", out)
	}
	if _, errs, code := cli(t, db, "", "kg", "candidates", "approve", approveID); code != 4 || !strings.Contains(errs, "conflict") {
		t.Fatalf("approving twice: exit %d %s", code, errs)
	}
	mustCLI(t, db, "kg", "candidates", "unblock", "entity", "Alice")
	// Maintenance: list, export (JSON lines), finalize after the retention.
	out = mustCLI(t, db, "maintenance", "list")
	if strings.Count(out, "not exported yet") != 3 {
		t.Fatalf("maintenance list:\n%s", out)
	}
	exp := decode[cairn.MaintenanceResult](t, mustCLI(t, db, "--json", "maintenance", "export", "--format", "jsonl"))
	if exp.Export == nil || exp.Export.Exported != 3 || !strings.HasSuffix(exp.Export.Archive.Path, ".jsonl") {
		t.Fatalf("export %+v", exp)
	}
	if out := mustCLI(t, db, "maintenance", "finalize"); !strings.Contains(out, "deleted 0 thoughts") || !strings.Contains(out, "retention") {
		t.Fatalf("finalize within retention:\n%s", out)
	}
	var fin cairn.MaintenanceResult
	out, errs, code := cli(t, db, "", "--json", "--now", "2026-04-10", "maintenance", "finalize")
	if code != 0 {
		t.Fatal(errs)
	}
	fin = decode[cairn.MaintenanceResult](t, out)
	if len(fin.Finalize.Finalized) != 3 {
		t.Fatalf("finalize after the retention: %+v", fin.Finalize)
	}
	// Bad input is a usage error with a code, and changes nothing.
	for _, args := range [][]string{
		{"inner-voice", "ask", "--sim-thresh", "2", "q"},
		{"maintenance", "export", "--format", "xml"},
		{"kg", "candidates", "--status", "limbo"},
		{"kg", "candidates", "unblock", "planet", "x"},
	} {
		if _, errs, code := cli(t, db, "", args...); code != 2 || !strings.Contains(errs, "invalid_params") {
			t.Errorf("cairn %v: exit %d %s; want 2, invalid_params", args, code, errs)
		}
	}
}

// Knowledge-graph moderation from the command line keeps private text and
// blocked names out: candidates staged from a private thought are listed
// only with --include-private (the text output says how many it hides),
// and approving an edge to a blocked name exits with a conflict, which
// --dry-run reports as would_refuse.
func TestKGCandidatesPrivateAndBlocked(t *testing.T) {
	t.Setenv("SURR_ENABLE_INNER_VOICE", "1")
	db := filepath.Join(t.TempDir(), "cairn.db")
	mustCLI(t, db, "think", "--origin", "human", "The auth-service uses Redis for session tokens, and clock drift breaks token expiry.")
	mustCLI(t, db, "think", "--origin", "human", "--private", "Clock drift breaks session token expiry; the auth-service depends on NTP.")
	mustCLI(t, db, "inner-voice", "ask", "--stage-kg", "--private", "--no-save", "--mode", "none", "why does clock drift break session token expiry?")
	all := decode[cairn.CandidateList](t, mustCLI(t, db, "--json", "kg", "candidates", "--include-private"))
	shared := decode[cairn.CandidateList](t, mustCLI(t, db, "--json", "kg", "candidates"))
	hidden := len(all.Candidates) - len(shared.Candidates)
	if hidden == 0 || shared.PrivateExcluded != hidden || all.PrivateExcluded != 0 {
		t.Fatalf("%d candidates in all, %d listed without private ones, private_excluded %d", len(all.Candidates), len(shared.Candidates), shared.PrivateExcluded)
	}
	for _, c := range shared.Candidates {
		if strings.Contains(string(c.Data), "NTP") {
			t.Errorf("a candidate quoting the private thought is listed: %+v", c)
		}
	}
	for _, pair := range [][2][]string{
		{{"--json", "kg", "candidates"}, {"call", "kg_candidates", "{}"}},
		{{"--json", "kg", "candidates", "--include-private"}, {"call", "kg_candidates", `{"include_private":true}`}},
	} {
		if canonical(t, mustCLI(t, db, pair[0]...)) != canonical(t, mustCLI(t, db, pair[1]...)) {
			t.Errorf("cairn %v and cairn %v differ", pair[0], pair[1])
		}
	}
	if out := mustCLI(t, db, "kg", "candidates"); !strings.Contains(out, "from private thoughts not shown") {
		t.Errorf("the text output does not say private candidates are hidden:\n%s", out)
	}
	var redis, edge string
	for _, c := range all.Candidates {
		switch {
		case strings.EqualFold(c.Name, "redis"):
			redis = c.ID
		case strings.EqualFold(c.TargetName, "redis"):
			edge = c.ID
		}
	}
	if redis == "" || edge == "" {
		t.Fatalf("no Redis entity and edge among %+v", all.Candidates)
	}
	mustCLI(t, db, "kg", "candidates", "reject", "--block", redis)
	if out := mustCLI(t, db, "kg", "candidates", "approve", "--dry-run", edge); !strings.Contains(out, "would_refuse") || !strings.Contains(out, `"redis"`) {
		t.Fatalf("dry run of an edge to a blocked name: %s", out)
	}
	if _, errs, code := cli(t, db, "", "kg", "candidates", "approve", edge); code != 4 || !strings.Contains(errs, "conflict") || !strings.Contains(errs, "unblock") {
		t.Fatalf("approving an edge to a blocked name: exit %d %s", code, errs)
	}
	if after := decode[cairn.CandidateList](t, mustCLI(t, db, "--json", "kg", "candidates", "--include-private")); len(after.Candidates) != len(all.Candidates)-1 {
		t.Fatalf("the refused approval decided candidates: %d pending, want %d", len(after.Candidates), len(all.Candidates)-1)
	}
}
