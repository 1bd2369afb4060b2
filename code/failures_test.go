package code_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// Failure mode 1: a file that does not parse falls back to regex; its
// entities say so, a warning is logged, and gate A refuses them.
func TestFailureMode1_ASTParsingFails(t *testing.T) {
	broken := "package p\n\nfunc broken( {\n\treturn \"missing closing paren\"\n}\n\nfunc Fine() int {\n\treturn 1\n}\n"
	f := newFixture(t, map[string]string{"broken.go": broken, "ok.go": goFile("p", "Good")})
	rep := f.index(code.ApprovalImplicit)
	if rep.Regex == 0 || len(rep.Fallbacks) != 1 || rep.Fallbacks[0].Path != "broken.go" {
		t.Fatalf("report %+v; want broken.go as the one regex fallback", rep)
	}
	if !strings.Contains(f.logs.String(), "AST parsing failed for broken.go") || !strings.Contains(f.logs.String(), "regex fallback") {
		t.Fatalf("no fallback warning in the log:\n%s", f.logs)
	}
	fine := f.entity("broken.go::Fine")
	if fine.Method != "regex" || fine.State != memory.StateProposed {
		t.Fatalf("entity of a broken file: %+v; want method regex, left PROPOSED", fine)
	}
	if good := f.entity("ok.go::Good"); good.Method != "ast" || good.State != memory.StateAuthoritative {
		t.Fatalf("entity of a good file: %+v", good)
	}
	gates, err := f.mem.InspectGates(f.ctx, rep.EpisodeID)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gates.EntitiesEvaluated {
		if g.EntityKey == "broken.go::Fine" && (g.GateA.Passed || g.GateA.Method != "regex" || !strings.Contains(g.FinalDecision, "Gate A")) {
			t.Fatalf("gate A of a regex entity: %+v", g)
		}
	}
	res := f.hydrate("e1", "broken.go", 0, 0)
	b, ok := blockOf(res.Blocks, "broken.go::Fine")
	if !ok || b.Method != "regex" || b.Reason != "regex_resolved" {
		t.Fatalf("hydration of a regex entity: %+v (blocks %v)", b, keys(res.Blocks))
	}
}

// Failure mode 2: files changing faster than the cache TTL make the cache
// miss; the hit rate is counted and a warning logged below 50%, while
// unchanged files within the TTL hit.
func TestFailureMode2_ETVCacheThrashing(t *testing.T) {
	root := t.TempDir()
	write(t, root, "hot.go", goFile("p", "Hot"))
	logs := &logBuf{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := code.NewVerifier(5*time.Second, func() time.Time { return now }, slog.New(slog.NewTextHandler(logs, nil)))
	src, _ := os.ReadFile(filepath.Join(root, "hot.go"))
	sym := code.Resolve("hot.go", src).Symbols[0]
	e := memory.CodeEntity{RepoID: "r", Key: "hot.go::Hot", Path: "hot.go", Symbol: "Hot", ArtifactHash: code.HashArtifact(sym.Text)}

	if r := v.Check(root, e, 0); r.CacheHit || r.IsStale {
		t.Fatalf("first check %+v; want a fresh miss", r)
	}
	if r := v.Check(root, e, 0); !r.CacheHit || r.IsStale {
		t.Fatalf("second check within the TTL %+v; want a fresh hit", r)
	}
	now = now.Add(6 * time.Second)
	if r := v.Check(root, e, 0); r.CacheHit {
		t.Fatalf("check after the TTL hit the cache")
	}
	// The file changes within the TTL: its modification time invalidates
	// the entry at once and the change is seen.
	write(t, root, "hot.go", goFile("p", "Hot", "Cold"))
	write(t, root, "hot.go", strings.Replace(goFile("p", "Hot"), "return 3", "return 4", 1))
	touch(t, root, "hot.go", time.Second)
	if r := v.Check(root, e, 0); r.CacheHit || !r.IsStale {
		t.Fatalf("check after a change within the TTL %+v; want a stale miss", r)
	}
	if logs.String() != "" {
		t.Fatalf("warned too early: %s", logs)
	}
	// Thrashing: the file changes before every check.
	for i := range 100 {
		touch(t, root, "hot.go", time.Duration(i+2)*time.Second)
		v.Check(root, e, 0)
	}
	s := v.Stats()
	if s.HitRate >= 0.5 || s.Warnings == 0 || s.Hits+s.Misses != 104 {
		t.Fatalf("stats %+v; want a hit rate under 50%% with a warning over 104 lookups", s)
	}
	if !strings.Contains(logs.String(), "ETV cache hit rate below 50%") {
		t.Fatalf("no thrashing warning:\n%s", logs)
	}
}

// Failure mode 3: a query naming many large files cannot blow the context:
// priority pruning keeps the budget, and the exhaustion is logged.
func TestFailureMode3_UnboundedHydrationRejected(t *testing.T) {
	files := map[string]string{}
	var query []string
	big := strings.Repeat("\tx = append(x, \"padding to make this entity large\")\n", 900) // ~10k tokens
	for i := range 100 {
		name := "f" + strings.Repeat("0", 3-len(strconv.Itoa(i))) + strconv.Itoa(i) + ".go"
		files[name] = "package p\n\nfunc Big" + strconv.Itoa(i) + "() (x []string) {\n" + big + "\treturn\n}\n"
		query = append(query, name)
	}
	f := newFixture(t, files)
	f.index(code.ApprovalImplicit)
	res := f.hydrate("e1", "Fix bugs in "+strings.Join(query, ", "), 50000, 0)
	total := 0
	for _, b := range res.Blocks {
		total += b.TokenCount
		if b.Reason != "ast_resolved" {
			t.Fatalf("block %s included for %s; want only the named files", b.EntityKey, b.Reason)
		}
	}
	if len(res.Blocks) > 10 || len(res.Blocks) == 0 || total > 50000 {
		t.Fatalf("%d blocks, %d tokens; want at most 10 blocks within 50000 tokens", len(res.Blocks), total)
	}
	if !res.Exhausted || len(res.Pruned) < 90 {
		t.Fatalf("exhausted=%t, %d pruned; want the other files pruned", res.Exhausted, len(res.Pruned))
	}
	// Priority: the files named first are the ones kept.
	if res.Blocks[0].EntityKey != "f000.go::Big0" {
		t.Fatalf("first block %s; want the first file named", res.Blocks[0].EntityKey)
	}
	if !strings.Contains(f.logs.String(), "hydration budget exhausted") {
		t.Fatal("budget exhaustion not logged")
	}
}

// lossy wraps a store and loses or alters hydration rows and episodes, as
// a damaged tracking table would.
type lossy struct {
	memory.Store
	dropRow      string // entity key whose rows vanish
	alterRow     string // entity key whose rows are altered
	dropEpisode  string // episode that vanishes
	alterEpisode bool
}

func (l *lossy) SessionHydrationRows(ctx context.Context, s string) ([]memory.HydrationRow, error) {
	rows, err := l.Store.SessionHydrationRows(ctx, s)
	var out []memory.HydrationRow
	for _, r := range rows {
		switch r.Key {
		case l.dropRow:
			continue
		case l.alterRow:
			r.Key = "a.go::Forged"
		}
		out = append(out, r)
	}
	return out, err
}

func (l *lossy) SessionEpisodes(ctx context.Context, s string) ([]memory.Episode, error) {
	eps, err := l.Store.SessionEpisodes(ctx, s)
	var out []memory.Episode
	for _, e := range eps {
		if e.ID != l.dropEpisode {
			out = append(out, e)
		}
	}
	return out, err
}

// Failure mode 4: lost or corrupted tracking rows are detected and
// reported, never silently dropped; what survives is still hydrated.
func TestFailureMode4_TrackingLossDetected(t *testing.T) {
	files := map[string]string{"a.go": goFile("a", "Alpha"), "b.go": goFile("b", "Bravo"), "c.go": goFile("c", "Charlie")}
	for _, tc := range []struct {
		name  string
		l     lossy
		want  string
		keeps string
	}{
		{"row deleted", lossy{dropRow: "a.go::Alpha"}, "sealed", "b.go::Bravo"},
		{"row altered", lossy{alterRow: "a.go::Alpha"}, "fails its checksum", "b.go::Bravo"},
		{"episode deleted", lossy{dropEpisode: "e1"}, "missing", "b.go::Bravo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.l
			f := newFixture(t, files)
			l.Store = f.store
			f.index(code.ApprovalImplicit)
			f.hydrate("e1", "a.go", 0, 0)
			f.hydrate("e2", "b.go", 0, 0)
			// A second service over the same database sees the damage.
			damaged := code.New(&l, code.Options{Now: f.clock.now, NewID: func(p string) string { return p + "_x" }, Logger: slog.New(slog.NewTextHandler(f.logs, nil))})
			res, err := damaged.Hydrate(f.ctx, code.HydrateRequest{Query: "c.go", EpisodeID: "e3", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Tracking.OK || !strings.Contains(strings.Join(res.Tracking.Problems, "; "), tc.want) {
				t.Fatalf("tracking %+v; want a problem mentioning %q", res.Tracking, tc.want)
			}
			if _, ok := blockOf(res.Blocks, tc.keeps); !ok {
				t.Fatalf("the intact history (%s) was not hydrated: %v", tc.keeps, keys(res.Blocks))
			}
			if !strings.Contains(f.logs.String(), "hydration tracking damaged") {
				t.Fatal("damage not logged")
			}
			v, err := damaged.InspectHydration(f.ctx, "e2")
			if err != nil {
				t.Fatal(err)
			}
			if v.Tracking.OK {
				t.Fatal("introspection reports damaged tracking as ok")
			}
			// The intact database verifies.
			v, err = f.mem.InspectHydration(f.ctx, "e2")
			if err != nil || !v.Tracking.OK {
				t.Fatalf("intact tracking: %+v, %v", v.Tracking, err)
			}
		})
	}
}

// Failure mode 5: ETV compares full SHA-256 digests of the entity's text;
// any change of content, even one that keeps the size, is a different
// hash. (A real SHA-256 collision is accepted as infeasible, as the seed
// says.)
func TestFailureMode5_ETVFalsePositive(t *testing.T) {
	a, b := code.HashArtifact("return 1"), code.HashArtifact("return 2")
	if len(a) != 64 || a == b || strings.Trim(a, "0123456789abcdef") != "" {
		t.Fatalf("hashes %s and %s; want distinct 64-digit lowercase SHA-256", a, b)
	}
	f := newFixture(t, map[string]string{"x.go": goFile("p", "Func")}, func(s *setup) { s.ttl = -1 })
	f.index(code.ApprovalImplicit)
	p := filepath.Join(f.root, "x.go")
	st, _ := os.Stat(p)
	// Same size, same modification time: only the hash can tell.
	write(t, f.root, "x.go", strings.Replace(goFile("p", "Func"), "return 4", "return 5", 1))
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	rep, err := f.mem.Verify(f.ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Stale) != 1 || rep.Stale[0].EntityKey != "x.go::Func" || rep.Stale[0].ETV.DiskHash == rep.Stale[0].ETV.VaultHash {
		t.Fatalf("verify %+v; want x.go::Func stale with differing hashes", rep)
	}
}
