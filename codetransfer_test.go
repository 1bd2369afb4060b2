package cairn_test

import (
	"database/sql"

	"encoding/json"
	_ "modernc.org/sqlite"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// openCodeMemory indexes a small Go repository, hydrates two episodes of a
// session, and proposes and promotes a change, so every code-memory table
// holds rows.
func openCodeMemory(t *testing.T) (*cairn.Engine, string) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"billing/invoice.go": "package billing\n\n// Invoice is a bill.\ntype Invoice struct{ Total int }\n\n// Add adds a line.\nfunc (i *Invoice) Add(n int) { i.Total += n }\n",
		"billing/tax.go":     "package billing\n\n// Tax computes the tax due.\nfunc Tax(total int) int { return total / 5 }\n",
		"web/handler.go":     "package web\n\n// Serve answers requests.\nfunc Serve() {}\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), nil)
	if _, err := eng.IndexCode(ctx, cairn.CodeIndexRequest{Root: root, RepoID: "shop"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, h := range []cairn.CodeHydrateRequest{
		{Query: "fix the Tax rounding", EpisodeID: "ep-1", SessionID: "s-1"},
		{Query: "invoice.go totals", EpisodeID: "ep-2", SessionID: "s-1"},
	} {
		if _, err := eng.Hydrate(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	tax := "// Tax computes the tax due.\nfunc Tax(total int) int { return total / 4 }"
	if _, err := eng.ProposeCode(ctx, cairn.CodeProposeRequest{EntityKey: "billing/tax.go::Tax", Content: tax, EpisodeID: "ep-2", SessionID: "s-1"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "billing/tax.go"), []byte("package billing\n\n"+tax+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := eng.PromoteCode(ctx, cairn.CodePromoteRequest{EpisodeID: "ep-2", Approval: "approved"}); err != nil || r.Promoted != 1 {
		t.Fatalf("promote %+v %v", r, err)
	}
	return eng, root
}

func TestImportExportCodeMemoryRoundTrip(t *testing.T) {
	eng, _ := openCodeMemory(t)
	first := export(t, eng)
	for _, want := range []string{`{"code_repo":{"repo_id":"shop"`, `{"code_artifact":`, `{"code_file":`, `{"code_entity":`,
		`{"code_transition":`, `{"code_episode":{"episode_id":"ep-1"`, `{"code_hydration":`, `{"code_gate":`} {
		if !strings.Contains(first, want) {
			t.Fatalf("the export lacks %s:\n%s", want, first)
		}
	}
	copyEng := openAt(t, filepath.Join(t.TempDir(), "copy.db"), nil)
	rep, err := copyEng.Import(ctx, strings.NewReader(first), cairn.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Count(first, `{"code_`); rep.Code != want {
		t.Fatalf("imported %d code records; the export holds %d", rep.Code, want)
	}
	if second := export(t, copyEng); second != first {
		t.Fatalf("export → import → export is not the identity:\n%s\n%s", first, second)
	}
	// Introspection answers the same in the copy, tracking verifies, and the
	// ledger keeps its history.
	for _, ep := range []string{"ep-1", "ep-2"} {
		a, err := eng.InspectHydration(ctx, cairn.EpisodeRef{EpisodeID: ep})
		if err != nil {
			t.Fatal(err)
		}
		b, err := copyEng.InspectHydration(ctx, cairn.EpisodeRef{EpisodeID: ep})
		if err != nil {
			t.Fatal(err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) || !b.Tracking.OK {
			t.Fatalf("episode %s inspects differently in the copy:\n%s\n%s", ep, ja, jb)
		}
		ga, _ := eng.InspectGates(ctx, cairn.EpisodeRef{EpisodeID: ep})
		gb, _ := copyEng.InspectGates(ctx, cairn.EpisodeRef{EpisodeID: ep})
		if ja, jb := mustJSON(t, ga), mustJSON(t, gb); ja != jb {
			t.Fatalf("gates of %s differ in the copy:\n%s\n%s", ep, ja, jb)
		}
	}
	// (Only the verification cache differs: the copy has not checked the
	// file yet.)
	noCache := func(v any) string { return strings.ReplaceAll(mustJSON(t, v), `"cache_hit":true`, `"cache_hit":false`) }
	view, err := copyEng.InspectCodeEntity(ctx, cairn.CodeEntityRef{EntityKey: "billing/tax.go::Tax"})
	if err != nil {
		t.Fatal(err)
	}
	if orig, _ := eng.InspectCodeEntity(ctx, cairn.CodeEntityRef{EntityKey: "billing/tax.go::Tax"}); noCache(orig) != noCache(view) {
		t.Fatalf("the entity inspects differently in the copy:\n%s\n%s", noCache(orig), noCache(view))
	}
	// Invariant 1 holds across the copy: a third episode of the session
	// still carries what the first two hydrated.
	res, err := copyEng.Hydrate(ctx, cairn.CodeHydrateRequest{Query: "web handler", EpisodeID: "ep-3", SessionID: "s-1"})
	if err != nil {
		t.Fatal(err)
	}
	prev := map[string]bool{}
	for _, b := range res.Blocks {
		if b.Reason == "previously_hydrated" {
			prev[b.EntityKey] = true
		}
	}
	if !prev["billing/tax.go::Tax"] || !res.Tracking.OK || res.Seq != 3 {
		t.Fatalf("episode 3 in the copy: seq %d, tracking %+v, previously hydrated %v", res.Seq, res.Tracking, prev)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestImportCodeMemoryIsAllOrNothing(t *testing.T) {
	eng, _ := openCodeMemory(t)
	lines := strings.Split(strings.TrimSpace(export(t, eng)), "\n")
	var code []string
	for _, l := range lines {
		if strings.HasPrefix(l, `{"code_`) {
			code = append(code, l)
		}
	}
	// edit returns the code lines with the first line holding key changed
	// by fn.
	edit := func(key string, fn func(string) string) []string {
		out := append([]string{}, code...)
		for i, l := range out {
			if strings.HasPrefix(l, `{"`+key+`":`) {
				out[i] = fn(l)
				return out
			}
		}
		t.Fatalf("no %s line", key)
		return nil
	}
	drop := func(key string) []string {
		for i, l := range code {
			if strings.HasPrefix(l, `{"`+key+`":`) {
				return append(append([]string{}, code[:i]...), code[i+1:]...)
			}
		}
		t.Fatalf("no %s line", key)
		return nil
	}
	dropWith := func(episode string) []string {
		for i, l := range code {
			if strings.HasPrefix(l, `{"code_episode":`) && strings.Contains(l, episode) {
				return append(append([]string{}, code[:i]...), code[i+1:]...)
			}
		}
		t.Fatalf("no episode line with %s", episode)
		return nil
	}
	replaceField := func(field, with string) func(string) string {
		return func(l string) string {
			var outer map[string]map[string]any
			if err := json.Unmarshal([]byte(l), &outer); err != nil {
				t.Fatal(err)
			}
			for _, rec := range outer {
				var v any
				if err := json.Unmarshal([]byte(with), &v); err != nil {
					t.Fatal(err)
				}
				rec[field] = v
			}
			b, _ := json.Marshal(outer)
			return string(b)
		}
	}
	before := export(t, eng)
	fresh := openAt(t, filepath.Join(t.TempDir(), "fresh.db"), nil)
	emptyBefore := export(t, fresh)
	for name, tc := range map[string]struct {
		lines []string
		into  *cairn.Engine
		code  memory.Code
	}{
		"everything again (repository exists)":   {code, eng, memory.CodeConflict},
		"artifact whose hash is not its content": {edit("code_artifact", replaceField("content", `"tampered"`)), fresh, memory.CodeInvalidParams},
		"artifact of an unknown type":            {edit("code_artifact", replaceField("type", `"secret"`)), fresh, memory.CodeInvalidParams},
		"entity in an unknown state":             {edit("code_entity", replaceField("state", `"GOLDEN"`)), fresh, memory.CodeInvalidParams},
		"entity key with no symbol":              {edit("code_entity", replaceField("entity_key", `"billing/tax.go"`)), fresh, memory.CodeInvalidParams},
		"entity key escaping the root":           {edit("code_entity", replaceField("entity_key", `"../etc/passwd::X"`)), fresh, memory.CodeInvalidParams},
		"entity of an unregistered repository":   {drop("code_repo"), fresh, memory.CodeNotFound},
		"hydration row altered":                  {edit("code_hydration", replaceField("token_count", `1`)), fresh, memory.CodeInvalidParams},
		"hydration row lost":                     {drop("code_hydration"), fresh, memory.CodeInvalidParams},
		"hydration row of a missing episode":     {dropWith(`"episode_id":"ep-1"`), fresh, memory.CodeInvalidParams},
		"gate of a missing episode":              {edit("code_gate", replaceField("episode_id", `"ep-ghost"`)), fresh, memory.CodeNotFound},
		"unknown field":                          {edit("code_file", replaceField("colour", `"red"`)), fresh, memory.CodeInvalidParams},
	} {
		_, err := tc.into.Import(ctx, strings.NewReader(strings.Join(tc.lines, "\n")), cairn.ImportOptions{})
		if memory.CodeOf(err) != tc.code || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: error %v; want %s naming a line", name, err, tc.code)
		}
	}
	if export(t, eng) != before || export(t, fresh) != emptyBefore {
		t.Fatal("a failed import changed a database")
	}
}

// Failure mode 4 surfaces in cairn doctor: a tracking row altered behind
// cairn's back fails the code tracking check, naming the session and the
// episode, with a fix.
func TestDoctorChecksCodeTracking(t *testing.T) {
	eng, _ := openCodeMemory(t)
	finding := func() memory.Finding {
		rep, err := eng.Doctor(ctx, cairn.DoctorRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Check == "code tracking" {
				return f
			}
		}
		t.Fatalf("doctor has no code tracking check: %+v", rep.Findings)
		return memory.Finding{}
	}
	if f := finding(); !f.OK || !strings.Contains(f.Detail, "episodes") {
		t.Fatalf("healthy tracking: %+v", f)
	}
	raw, err := sql.Open("sqlite", eng.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	res, err := raw.Exec("UPDATE code_hydration SET token_count = token_count + 1 WHERE episode_id = 'ep-1' AND seq = 1")
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("tampering: %v (%d rows)", err, n)
	}
	f := finding()
	if f.OK || !strings.Contains(f.Detail, "session s-1") || !strings.Contains(f.Detail, "ep-1") || f.Fix == "" {
		t.Fatalf("tampered tracking: %+v", f)
	}
}
