package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHistory: cairn history lists a record's ledger entries oldest
// first, with their time by --now, op, kind and changed fields; pages
// with --limit and --after; an id naming two kinds of record shows both;
// an unknown id exits 3 and a malformed one 2.
func TestHistory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	mustCLI(t, db, "--now", "2026-03-01T10:00:00Z", "think", "--id", "th_1", "the staging password is hunter2")
	mustCLI(t, db, "--now", "2026-03-01T11:00:00Z", "thoughts", "mark", "--status", "removal", "th_1")
	mustCLI(t, db, "--now", "2026-03-01T12:00:00Z", "forget", "--type", "thought", "th_1")
	out := mustCLI(t, db, "history", "th_1")
	want := []string{
		"2026-03-01 10:00  create   thought  #",
		"2026-03-01 11:00  mark     thought (status)  #",
		"2026-03-01 12:00  forget   thought (content, redacted)  #",
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(want) {
		t.Fatalf("cairn history th_1:\n%s", out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Fatalf("cairn history th_1, line %d: %q; want %q...", i+1, lines[i], w)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Fatalf("the history holds the forgotten text:\n%s", out)
	}
	page := mustCLI(t, db, "history", "--limit", "2", "th_1")
	if !strings.Contains(page, "mark") || strings.Contains(page, "forget") || !strings.Contains(page, "-- more: --after ") {
		t.Fatalf("cairn history --limit 2:\n%s", page)
	}
	after := strings.TrimSpace(page[strings.LastIndex(page, "--after ")+len("--after "):])
	if rest := mustCLI(t, db, "history", "--after", after, "th_1"); !strings.Contains(rest, "forget") || strings.Contains(rest, "mark") {
		t.Fatalf("cairn history --after %s:\n%s", after, rest)
	}

	mustCLI(t, db, "--now", "2026-03-02T09:00:00Z", "log", "--kind", "message", "--id", "th_1", "an observation with the same id")
	if both := mustCLI(t, db, "history", "th_1"); !strings.Contains(both, "create   observation") || !strings.Contains(both, "forget   thought") {
		t.Fatalf("cairn history of an id naming two records:\n%s", both)
	}
	if _, errs, code := cli(t, db, "", "history", "th_nothing"); code != 3 || !strings.Contains(errs, "not_found") {
		t.Fatalf("cairn history of an unknown id: exit %d %s; want 3", code, errs)
	}
	for _, args := range [][]string{{"history", " th_1"}, {"history", "--limit", "0", "th_1"}, {"history"}, {"history", "a", "b"}} {
		if _, errs, code := cli(t, db, "", args...); code != 2 {
			t.Errorf("cairn %q: exit %d %s; want 2", args, code, errs)
		}
	}
}
