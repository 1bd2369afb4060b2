package code_test

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// Invariant 1: an entity hydrated in episode N stays available in N+1,
// N+2, ... of the same session, not only in the next one.
func TestInvariant1_PreviouslyHydratedAvailable(t *testing.T) {
	f := newFixture(t, map[string]string{
		"auth.go":    goFile("auth", "ValidateToken", "CheckPermissions"),
		"db/conn.go": goFile("db", "Connect", "Ping"),
		"api.go":     goFile("api", "Route", "Serve"),
	})
	f.index(code.ApprovalImplicit)
	ep1 := f.hydrate("ep1", "look at auth.go", 0, 0)
	if _, ok := blockOf(ep1.Blocks, "auth.go::ValidateToken"); !ok {
		t.Fatalf("episode 1 did not hydrate auth.go::ValidateToken: %v", keys(ep1.Blocks))
	}
	// Episodes 2 to 5 talk about other things; the entity from episode 1
	// must still be there in every one of them.
	for i, q := range []string{"the Connect function", "Route", "database Ping", "Serve"} {
		ep := "ep" + string(rune('2'+i))
		res := f.hydrate(ep, q, 0, 0)
		b, ok := blockOf(res.Blocks, "auth.go::ValidateToken")
		if !ok {
			t.Fatalf("%s (N+%d) lost auth.go::ValidateToken: %v", ep, i+1, keys(res.Blocks))
		}
		if b.Reason != "previously_hydrated" || b.Method != "tracking" || !strings.Contains(b.TriggeredBy, "ep1") {
			t.Fatalf("%s: block %+v; want previously_hydrated by tracking from ep1", ep, b)
		}
		if res.Seq != int64(i+2) {
			t.Fatalf("%s is episode #%d; want %d", ep, res.Seq, i+2)
		}
	}
	// Another session starts clean.
	other, err := f.mem.Hydrate(f.ctx, code.HydrateRequest{Query: "Serve", EpisodeID: "other1", SessionID: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range other.Blocks {
		if b.Reason == "previously_hydrated" {
			t.Fatalf("session s2 received session s1's hydration: %+v", b)
		}
	}
	// The introspection of the last episode explains it.
	v, err := f.mem.InspectHydration(f.ctx, "ep5")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Tracking.OK || v.Tracking.Episodes != 5 {
		t.Fatalf("tracking %+v; want ok over 5 episodes", v.Tracking)
	}
	found := false
	for _, b := range v.HydrationBlocks {
		found = found || (b.EntityKey == "auth.go::ValidateToken" && b.Reason == "previously_hydrated")
	}
	if !found {
		t.Fatalf("introspection of ep5 does not show the tracked entity: %+v", v.HydrationBlocks)
	}
}

// Invariant 2: the same source and query give the same entities, every
// time, in every database.
func TestInvariant2_ResolutionDeterministic(t *testing.T) {
	files := map[string]string{
		"a.go":      goFile("a", "Alpha", "Beta", "Gamma"),
		"b/b.go":    "package b\n\ntype Store struct{}\n\n// Get reads.\nfunc (s *Store) Get(k string) string { return k }\n\nconst Limit = 3\n\ntype Reader interface{ Read() }\n",
		"c/main.py": "class Cache:\n    def get(self, k):\n        return k\n\ndef helper():\n    return 1\n",
	}
	var runs [][]memory.CodeEntity
	var hyd [][]string
	for range 2 {
		f := newFixture(t, files)
		f.index(code.ApprovalImplicit)
		es, err := f.store.CodeEntities(f.ctx, memory.CodeEntityFilter{RepoID: "repo"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range es {
			es[i].UpdatedAt = 0
		}
		runs = append(runs, es)
		hyd = append(hyd, keys(f.hydrate("e1", "Store Get in b.go and the Cache", 0, 0).Blocks))
	}
	if len(runs[0]) < 8 {
		t.Fatalf("only %d entities resolved: %+v", len(runs[0]), runs[0])
	}
	if !reflect.DeepEqual(runs[0], runs[1]) {
		t.Fatalf("two indexes of the same tree differ:\n%+v\n%+v", runs[0], runs[1])
	}
	if !reflect.DeepEqual(hyd[0], hyd[1]) {
		t.Fatalf("the same hydration differs:\n%v\n%v", hyd[0], hyd[1])
	}
	for _, want := range []string{"b/b.go::Store.Get", "b/b.go::Store", "b/b.go::Limit", "b/b.go::Reader"} {
		if !slices.ContainsFunc(runs[0], func(e memory.CodeEntity) bool { return e.Key == want && e.Method == "ast" }) {
			t.Fatalf("no AST entity %s in %+v", want, runs[0])
		}
	}
}

// Invariant 3: an entity ETV finds stale is never promoted.
func TestInvariant3_StaleEntitiesRejected(t *testing.T) {
	f := newFixture(t, map[string]string{"file.go": goFile("p", "Func", "Other")})
	f.index(code.ApprovalNone)
	if e := f.entity("file.go::Func"); e.State != memory.StateProposed {
		t.Fatalf("state %s after an index without approval; want PROPOSED", e.State)
	}
	// The disk changes under the vault.
	write(t, f.root, "file.go", strings.Replace(goFile("p", "Func", "Other"), "return 4", "return 5", 1))
	touch(t, f.root, "file.go", 1e9)
	res, err := f.mem.Promote(f.ctx, code.PromoteRequest{EpisodeID: "g1", SessionID: "s1", Keys: []string{"file.go::Func", "file.go::Other"}, Approval: code.ApprovalApproved})
	if err != nil {
		t.Fatal(err)
	}
	if res.Promoted != 1 || res.Rejected != 1 {
		t.Fatalf("promoted %d, rejected %d; want 1 and 1: %+v", res.Promoted, res.Rejected, res.Evaluated)
	}
	if e := f.entity("file.go::Func"); e.State != memory.StateProposed {
		t.Fatalf("stale entity became %s", e.State)
	}
	if e := f.entity("file.go::Other"); e.State != memory.StateAuthoritative {
		t.Fatalf("fresh entity is %s; want AUTHORITATIVE", e.State)
	}
	gates, err := f.mem.InspectGates(f.ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	var stale *code.GateEvaluated
	for i := range gates.EntitiesEvaluated {
		if gates.EntitiesEvaluated[i].EntityKey == "file.go::Func" {
			stale = &gates.EntitiesEvaluated[i]
		}
	}
	if stale == nil || stale.GateC.Passed || !*stale.GateC.IsStale || !*stale.GateC.DiskExists ||
		!strings.Contains(stale.GateC.Reason, "mismatch") || !strings.HasPrefix(stale.FinalDecision, "REJECTED") || !stale.GateA.Passed {
		t.Fatalf("gate record %+v; want gate C failed as stale, decision REJECTED", stale)
	}
	// Introspection shows the stale PROPOSED entity.
	v, err := f.mem.InspectEntity(f.ctx, "", "file.go::Func")
	if err != nil {
		t.Fatal(err)
	}
	if !v.ETVStatus.IsStale || v.CurrentState != "PROPOSED" {
		t.Fatalf("entity view %+v; want stale and PROPOSED", v)
	}
	// A proposal not yet on disk is stale too, and passes once written.
	newSrc := strings.Replace(goFile("p", "Func", "Other"), "return 5", "return 42", 1)
	var newText string
	for _, s := range code.Resolve("file.go", []byte(newSrc)).Symbols {
		if s.Name == "Other" {
			newText = s.Text
		}
	}
	if _, err := f.mem.Propose(f.ctx, code.ProposeRequest{Key: "file.go::Other", Content: newText, EpisodeID: "g2", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	_, err = f.mem.Promote(f.ctx, code.PromoteRequest{EpisodeID: "g2", Keys: []string{"file.go::Other"}, Approval: code.ApprovalApproved})
	if err != nil {
		t.Fatal(err)
	}
	if e := f.entity("file.go::Other"); e.State != memory.StateProposed || e.Method != "ast" {
		t.Fatalf("a proposal the disk does not hold became %s (method %s)", e.State, e.Method)
	}
	write(t, f.root, "file.go", newSrc)
	touch(t, f.root, "file.go", 2e9)
	if _, err = f.mem.Promote(f.ctx, code.PromoteRequest{EpisodeID: "g3", SessionID: "s1", Keys: []string{"file.go::Other"}, Approval: code.ApprovalImplicit}); err != nil {
		t.Fatal(err)
	}
	if e := f.entity("file.go::Other"); e.State != memory.StateAuthoritative {
		t.Fatalf("the proposal is on disk now, but the entity is %s", e.State)
	}
}

// Invariant 4: an AUTHORITATIVE entity's artifact never changes without a
// new artifact.
func TestInvariant4_AuthoritativeImmutable(t *testing.T) {
	f := newFixture(t, map[string]string{"file.go": goFile("p", "Func")})
	f.index(code.ApprovalImplicit)
	e := f.entity("file.go::Func")
	if e.State != memory.StateAuthoritative {
		t.Fatalf("state %s; want AUTHORITATIVE", e.State)
	}
	for _, to := range []memory.CodeState{memory.StateAuthoritative, memory.StateProposed} {
		if _, _, err := code.Update(e, e.ArtifactHash, to, "ep", "again", 1); memory.CodeOf(err) != memory.CodeConflict {
			t.Fatalf("update of an AUTHORITATIVE entity with the same hash to %s: %v; want conflict", to, err)
		}
	}
	if _, _, err := code.Update(e, code.HashArtifact("other"), memory.StateAuthoritative, "ep", "overwrite", 1); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("overwriting an AUTHORITATIVE artifact: %v; want conflict", err)
	}
	// Proposing the same text changes nothing.
	art, err := f.store.Artifact(f.ctx, e.ArtifactHash)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.mem.Propose(f.ctx, code.ProposeRequest{Key: "file.go::Func", Content: art.Content, EpisodeID: "e1", SessionID: "s1"})
	if err != nil || p.Changed || f.entity("file.go::Func").State != memory.StateAuthoritative {
		t.Fatalf("re-proposing the same text: %+v, %v; want unchanged and still AUTHORITATIVE", p, err)
	}
	// A new artifact supersedes it, and the old one stays in the vault and
	// the ledger.
	p, err = f.mem.Propose(f.ctx, code.ProposeRequest{Key: "file.go::Func", Content: "func Func() int { return 0 }", EpisodeID: "e1", SessionID: "s1", Type: memory.ArtifactDiff})
	if err != nil || !p.Changed {
		t.Fatalf("new artifact: %+v, %v", p, err)
	}
	if _, err := f.store.Artifact(f.ctx, e.ArtifactHash); err != nil {
		t.Fatalf("the superseded artifact left the vault: %v", err)
	}
	led, err := f.store.CodeLedger(f.ctx, "repo", "file.go::Func")
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, l := range led {
		path = append(path, string(l.From)+">"+string(l.To))
	}
	want := []string{">PROPOSED", "PROPOSED>AUTHORITATIVE", "AUTHORITATIVE>SUPERSEDED", "SUPERSEDED>PROPOSED"}
	if !reflect.DeepEqual(path, want) {
		t.Fatalf("ledger %v; want %v", path, want)
	}
	if led[2].ArtifactHash != e.ArtifactHash || led[3].ArtifactHash != p.Artifact || led[3].EpisodeID != "e1" {
		t.Fatalf("ledger hashes %+v", led)
	}
	// The store refuses a write whose guard no longer holds.
	stale := e // AUTHORITATIVE with the old hash, no longer true
	next, log, err := code.Update(memory.CodeEntity{RepoID: "repo", Key: e.Key, State: memory.StateProposed, ArtifactHash: e.ArtifactHash}, e.ArtifactHash, memory.StateAuthoritative, "e1", "race", 1)
	if err != nil {
		t.Fatal(err)
	}
	err = f.store.ApplyCode(f.ctx, memory.CodeChange{Entities: []memory.CodeEntity{next}, Transitions: log,
		Guards: []memory.CodeGuard{{RepoID: "repo", Key: e.Key, State: stale.State, ArtifactHash: stale.ArtifactHash}}})
	wantCode(t, err, memory.CodeConflict)
	if got := f.entity("file.go::Func"); got.ArtifactHash != p.Artifact || got.State != memory.StateProposed {
		t.Fatalf("a refused write changed the entity: %+v", got)
	}
}

// Invariant 5: hydration never exceeds its budget of tokens or entities.
func TestInvariant5_BudgetConstrained(t *testing.T) {
	files := map[string]string{}
	for i := range 60 {
		files["pkg/f"+strconv.Itoa(i)+".go"] = goFile("pkg", "Handle"+strconv.Itoa(i), "Serve"+strconv.Itoa(i))
	}
	f := newFixture(t, files)
	f.index(code.ApprovalImplicit)
	for _, tc := range []struct{ tokens, entities int }{{1000, 0}, {60, 0}, {0, 3}, {100, 2}} {
		res := f.hydrate("b"+strings.Repeat("x", tc.tokens%7+tc.entities), "Handle Serve in every file", tc.tokens, tc.entities)
		total := 0
		for _, b := range res.Blocks {
			total += b.TokenCount
		}
		budget, ents := tc.tokens, tc.entities
		if budget == 0 {
			budget = code.DefaultBudgetTokens
		}
		if ents == 0 {
			ents = code.DefaultBudgetEntities
		}
		if total > budget || len(res.Blocks) > ents || total != res.TotalTokens {
			t.Fatalf("budget %d tokens / %d entities: %d tokens, %d blocks (reported %d)", budget, ents, total, len(res.Blocks), res.TotalTokens)
		}
		if !res.Exhausted || len(res.Pruned) == 0 {
			t.Fatalf("budget %d/%d: exhausted=%t pruned=%d; the query matches more than fits", budget, ents, res.Exhausted, len(res.Pruned))
		}
	}
	if !strings.Contains(f.logs.String(), "hydration budget exhausted") {
		t.Fatalf("exhaustion not logged:\n%s", f.logs)
	}
}
