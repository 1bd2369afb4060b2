package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// This file checks the optional seam of inner_voice's sessions
// (memory.InnerVoiceStore).

var voiceTests = []struct {
	name string
	fn   func(*testing.T, memory.Store)
}{
	{"VoiceSessions", testVoiceSessions},
	{"VoiceExchanges", testVoiceExchanges},
	{"VoiceSummary", testVoiceSummary},
	{"VoiceForgetting", testVoiceForgetting},
	{"VoiceDelete", testVoiceDelete},
	{"VoiceScopes", testVoiceScopes},
	{"VoiceOpenRace", testVoiceOpenRace},
}

func voiceStore(t *testing.T, s memory.Store) memory.InnerVoiceStore {
	t.Helper()
	vs, ok := s.(memory.InnerVoiceStore)
	if !ok {
		t.Skipf("%T does not implement memory.InnerVoiceStore: inner_voice keeps no sessions on it", s)
	}
	return vs
}

func voiceSession(id string, at int64) memory.InnerVoiceSession {
	return memory.InnerVoiceSession{ID: id, Version: memory.InnerVoiceSessionVersion, Provider: "openai", Model: "gpt-4o-mini",
		MaxPromptTokens: 8000, Topic: "deploys", CreatedAt: at, LastInteraction: at}
}

func voiceExchange(id, session string, at int64, cites ...string) memory.InnerVoiceExchange {
	x := memory.InnerVoiceExchange{ID: id, SessionID: session, Timestamp: at, Query: "why did " + id + " fail?",
		Answer: "Because of " + id + ".", Confidence: 0.9, CoverageRatio: 1, Synthesizer: "grounded", Model: "gpt-4o-mini",
		PromptTokens: 100, CompletionTokens: 20, LatencyMs: 40, CostEstimate: 0.001, PromptHash: "ab12", MemoriesReferenced: cites}
	for _, c := range cites {
		x.Sources = append(x.Sources, memory.VoiceCitation{SourceID: c, SourceType: "thought", Span: "of " + id, Relevance: 1})
	}
	return x
}

func addExchange(t *testing.T, vs memory.InnerVoiceStore, x memory.InnerVoiceExchange) (memory.InnerVoiceExchange, memory.InnerVoiceSession) {
	t.Helper()
	got, sess, err := vs.AddVoiceExchange(ctx, x)
	if err != nil {
		t.Fatalf("AddVoiceExchange %s: %v", x.ID, err)
	}
	return got, sess
}

func testVoiceSessions(t *testing.T, s memory.Store) {
	vs := voiceStore(t, s)
	if _, ok, err := vs.ActiveVoiceSession(ctx, memory.Scope{}, 0); err != nil || ok {
		t.Fatalf("active session of an empty store: %v %v", ok, err)
	}
	in := voiceSession("ivs1", 100)
	got, err := vs.CreateVoiceSession(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "created session", got, in)
	if !got.Current {
		t.Fatal("a created session is not its scope's current one")
	}
	if _, err := vs.CreateVoiceSession(ctx, in); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("a second session with the same id: %v; want conflict", err)
	}
	if _, err := vs.VoiceSession(ctx, "nope"); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("an unknown session: %v; want not_found", err)
	}
	for _, x := range []memory.InnerVoiceSession{voiceSession("ivs2", 200), voiceSession("ivs3", 150)} {
		if _, err := vs.CreateVoiceSession(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	list, err := vs.VoiceSessions(ctx, memory.Scope{}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if ids := sessionIDs(list); !slices.Equal(ids, []string{"ivs2", "ivs3", "ivs1"}) {
		t.Fatalf("sessions %v; want the latest interaction first", ids)
	}
	if page, _ := vs.VoiceSessions(ctx, memory.Scope{}, 1, 1); !slices.Equal(sessionIDs(page), []string{"ivs3"}) {
		t.Fatalf("offset 1 limit 1: %v", sessionIDs(page))
	}
	// The active session is the scope's current one (the last created)
	// when its last interaction is at or after since.
	if a, ok, err := vs.ActiveVoiceSession(ctx, memory.Scope{}, 120); err != nil || !ok || a.ID != "ivs3" || !a.Current {
		t.Fatalf("active since 120: %v %v %v", a.ID, ok, err)
	}
	if _, ok, _ := vs.ActiveVoiceSession(ctx, memory.Scope{}, 151); ok {
		t.Fatal("a session older than since is active")
	}
	if current := currentIDs(t, vs, memory.Scope{}); !slices.Equal(current, []string{"ivs3"}) {
		t.Fatalf("current sessions %v; want the last created alone", current)
	}
	// An interaction makes a session the active one.
	addExchange(t, vs, voiceExchange("ivx1", "ivs1", 300))
	if a, ok, _ := vs.ActiveVoiceSession(ctx, memory.Scope{}, 120); !ok || a.ID != "ivs1" {
		t.Fatalf("after an exchange the active session is %v", a.ID)
	}
	if current := currentIDs(t, vs, memory.Scope{}); !slices.Equal(current, []string{"ivs1"}) {
		t.Fatalf("current sessions after an exchange %v; want the one continued alone", current)
	}
}

// currentIDs lists the current sessions within filter.
func currentIDs(t *testing.T, vs memory.InnerVoiceStore, filter memory.Scope) []string {
	t.Helper()
	all, err := vs.VoiceSessions(ctx, filter, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, s := range all {
		if s.Current {
			out = append(out, s.ID)
		}
	}
	slices.Sort(out)
	return out
}

// Each scope has its own current session: opening, starting a new thread
// and continuing one in a scope leave the others' alone; listing and the
// totals filter by scope.
func testVoiceScopes(t *testing.T, s memory.Store) {
	vs := voiceStore(t, s)
	alice := memory.Scope{RepoID: "/r", AgentID: "alice"}
	bob := memory.Scope{RepoID: "/r", AgentID: "bob"}
	scoped := func(id string, at int64, sc memory.Scope) memory.InnerVoiceSession {
		v := voiceSession(id, at)
		v.Scope = sc
		return v
	}
	open := func(v memory.InnerVoiceSession, since int64) (memory.InnerVoiceSession, bool) {
		t.Helper()
		got, created, err := vs.OpenVoiceSession(ctx, v, since)
		if err != nil {
			t.Fatalf("OpenVoiceSession %s: %v", v.ID, err)
		}
		return got, created
	}
	// No current session: the one given is stored, current.
	a1, created := open(scoped("a1", 100, alice), 50)
	if !created || a1.ID != "a1" || a1.Scope != alice || !a1.Current {
		t.Fatalf("first open of alice's scope: created %v, %+v", created, a1)
	}
	sameJSON(t, "opened session", a1, scoped("a1", 100, alice))
	// Another scope is another thread.
	if b1, created := open(scoped("b1", 110, bob), 50); !created || b1.ID != "b1" {
		t.Fatalf("first open of bob's scope: created %v, %s", created, b1.ID)
	}
	if u1, created := open(voiceSession("u1", 120), 50); !created || u1.ID != "u1" || !u1.Scope.IsZero() {
		t.Fatalf("first unscoped open: created %v, %+v", created, u1)
	}
	// A recent current session is continued; the one given is not stored.
	if got, created := open(scoped("a2", 130, alice), 100); created || got.ID != "a1" {
		t.Fatalf("open within the timeout: created %v, %s; want a1 continued", created, got.ID)
	}
	if _, err := vs.VoiceSession(ctx, "a2"); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("the session a continued open was given: %v; want not_found", err)
	}
	// One too old is ended, the one given takes its place.
	if got, created := open(scoped("a3", 300, alice), 200); !created || got.ID != "a3" {
		t.Fatalf("open past the timeout: created %v, %s; want a3", created, got.ID)
	}
	if old, err := vs.VoiceSession(ctx, "a1"); err != nil || old.Current {
		t.Fatalf("the timed-out session: current %v, %v; want ended", old.Current, err)
	}
	if a, ok, _ := vs.ActiveVoiceSession(ctx, alice, 200); !ok || a.ID != "a3" {
		t.Fatalf("alice's active session %s %v; want a3", a.ID, ok)
	}
	if a, ok, _ := vs.ActiveVoiceSession(ctx, bob, 0); !ok || a.ID != "b1" {
		t.Fatalf("bob's active session %s %v; want b1 (untouched)", a.ID, ok)
	}
	// A scope is matched exactly: part of alice's is nobody's session.
	if a, ok, _ := vs.ActiveVoiceSession(ctx, memory.Scope{RepoID: "/r"}, 0); ok {
		t.Fatalf("the scope {repo /r} has active session %s; want none", a.ID)
	}
	// A new thread ends the scope's current session, not another's.
	if _, err := vs.CreateVoiceSession(ctx, scoped("a4", 310, alice)); err != nil {
		t.Fatal(err)
	}
	if got := currentIDs(t, vs, memory.Scope{}); !slices.Equal(got, []string{"a4", "b1", "u1"}) {
		t.Fatalf("current sessions after alice's new thread: %v", got)
	}
	// Continuing an ended session makes it its scope's current one.
	addExchange(t, vs, voiceExchange("ax1", "a1", 320))
	if got := currentIDs(t, vs, memory.Scope{}); !slices.Equal(got, []string{"a1", "b1", "u1"}) {
		t.Fatalf("current sessions after continuing a1: %v", got)
	}
	addExchange(t, vs, voiceExchange("bx1", "b1", 330))
	// Listing and totals take a filter: each key given must match.
	for _, c := range []struct {
		filter memory.Scope
		want   []string
	}{
		{memory.Scope{}, []string{"b1", "a1", "a4", "a3", "u1"}},
		{memory.Scope{RepoID: "/r"}, []string{"b1", "a1", "a4", "a3"}},
		{alice, []string{"a1", "a4", "a3"}},
		{memory.Scope{AgentID: "bob"}, []string{"b1"}},
		{memory.Scope{UserID: "nobody"}, []string{}},
	} {
		list, err := vs.VoiceSessions(ctx, c.filter, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		want := c.want
		if got := sessionIDs(list); !slices.Equal(got, want) {
			t.Errorf("sessions within %q: %v; want %v", c.filter.String(), got, want)
		}
		totals, err := vs.VoiceTotals(ctx, c.filter)
		if err != nil {
			t.Fatal(err)
		}
		exchanges := 0
		for _, s := range list {
			exchanges += s.TotalExchanges
		}
		if totals.Sessions != len(want) || totals.Exchanges != exchanges || totals.PromptTokens != int64(100*exchanges) {
			t.Errorf("totals within %q: %+v; want %d sessions, %d exchanges", c.filter.String(), totals, len(want), exchanges)
		}
	}
	// Deleting the current session leaves its scope without one.
	if err := vs.DeleteVoiceSession(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if a, ok, _ := vs.ActiveVoiceSession(ctx, alice, 0); ok {
		t.Fatalf("alice's active session after deleting it: %s", a.ID)
	}
	if got, created := open(scoped("a5", 400, alice), 0); !created || got.ID != "a5" {
		t.Fatalf("open after deleting the current session: created %v, %s", created, got.ID)
	}
	if _, _, err := vs.OpenVoiceSession(ctx, scoped("bad", 1, memory.Scope{AgentID: " x"}), 0); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("a session with a malformed scope: %v; want invalid_params", err)
	}
}

// Calls racing to open the thread of one scope agree on one session:
// exactly one creates it, all return it, and the scope has one current
// session. Each round also races new threads of another scope, which all
// create theirs, one of them left current.
func testVoiceOpenRace(t *testing.T, s memory.Store) {
	vs := voiceStore(t, s)
	const callers = 8
	scope := memory.Scope{AgentID: "racer"}
	other := memory.Scope{AgentID: "threads"}
	for round := range 4 {
		at := int64(1000 * (round + 1))
		var wg sync.WaitGroup
		start := make(chan struct{})
		got := make([]memory.InnerVoiceSession, callers)
		created := make([]bool, callers)
		errs := make([]error, 2*callers)
		for i := range callers {
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				v := voiceSession(fmt.Sprintf("r%d-%d", round, i), at)
				v.Scope = scope
				// Each round's sessions are past the timeout of the last.
				got[i], created[i], errs[i] = vs.OpenVoiceSession(ctx, v, at-500)
			}()
			go func() {
				defer wg.Done()
				<-start
				v := voiceSession(fmt.Sprintf("n%d-%d", round, i), at)
				v.Scope = other
				_, errs[callers+i] = vs.CreateVoiceSession(ctx, v)
			}()
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		winners := 0
		for i := range callers {
			if created[i] {
				winners++
			}
			if got[i].ID != got[0].ID {
				t.Fatalf("round %d: callers got sessions %s and %s", round, got[0].ID, got[i].ID)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d callers created a session; want 1", round, winners)
		}
		if cur := currentIDs(t, vs, scope); !slices.Equal(cur, []string{got[0].ID}) {
			t.Fatalf("round %d: current sessions of the scope %v; want [%s]", round, cur, got[0].ID)
		}
		if cur := currentIDs(t, vs, other); len(cur) != 1 {
			t.Fatalf("round %d: current sessions after racing new threads %v; want one", round, cur)
		}
		if all, _ := vs.VoiceSessions(ctx, other, 0, 1000); len(all) != callers*(round+1) {
			t.Fatalf("round %d: %d new threads stored; want %d", round, len(all), callers*(round+1))
		}
	}
}

func sessionIDs(ss []memory.InnerVoiceSession) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func testVoiceExchanges(t *testing.T, s memory.Store) {
	vs := voiceStore(t, s)
	if _, _, err := vs.AddVoiceExchange(ctx, voiceExchange("x0", "nope", 1)); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("an exchange of an unknown session: %v; want not_found", err)
	}
	if _, err := vs.CreateVoiceSession(ctx, voiceSession("s1", 100)); err != nil {
		t.Fatal(err)
	}
	first, sess := addExchange(t, vs, voiceExchange("x1", "s1", 110, "t1", "t2"))
	if first.Seq != 1 || sess.TotalExchanges != 1 || sess.TotalPromptTokens != 100 || sess.TotalCompletionTokens != 20 ||
		sess.TotalTokens != 120 || sess.TotalCost != 0.001 || sess.LastInteraction != 110 {
		t.Fatalf("after one exchange: seq %d, session %+v", first.Seq, sess)
	}
	refused := voiceExchange("x2", "s1", 105)
	refused.Answer, refused.Refused, refused.Notes, refused.Private = "", true, "Required sources 2, actual 1.", true
	second, sess := addExchange(t, vs, refused)
	if second.Seq != 2 || sess.TotalExchanges != 2 || sess.LastInteraction != 110 || sess.TotalCost != 0.002 {
		t.Fatalf("after a second, earlier exchange: seq %d, session %+v (the last interaction never goes back)", second.Seq, sess)
	}
	addExchange(t, vs, voiceExchange("x3", "s1", 120))
	if _, _, err := vs.AddVoiceExchange(ctx, voiceExchange("x3", "s1", 130)); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("a duplicate exchange id: %v; want conflict", err)
	}
	all, err := vs.VoiceExchanges(ctx, "s1", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].ID != "x1" || all[1].ID != "x2" || all[2].ID != "x3" {
		t.Fatalf("exchanges %+v", all)
	}
	want := voiceExchange("x1", "s1", 110, "t1", "t2")
	want.Seq = 1
	sameJSON(t, "stored exchange", all[0], want)
	if x := all[1]; !x.Refused || x.Answer != "" || !x.Private || x.Notes == "" || len(x.Sources) != 0 || x.Sources == nil || x.MemoriesReferenced == nil {
		t.Fatalf("the refused exchange: %+v", x)
	}
	if page, _ := vs.VoiceExchanges(ctx, "s1", 1, 1); len(page) != 1 || page[0].ID != "x2" {
		t.Fatalf("after 1, limit 1: %+v", page)
	}
	if none, err := vs.VoiceExchanges(ctx, "nope", 0, 10); err != nil || len(none) != 0 {
		t.Fatalf("exchanges of an unknown session: %v %v", none, err)
	}
	tot, err := vs.VoiceTotals(ctx, memory.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if tot.Sessions != 1 || tot.Exchanges != 3 || tot.Refused != 1 || tot.PromptTokens != 300 || tot.CompletionTokens != 60 ||
		tot.MeanLatencyMs != 40 || tot.MeanCoverage != 1 {
		t.Fatalf("totals %+v", tot)
	}
}

func testVoiceSummary(t *testing.T, s memory.Store) {
	vs := voiceStore(t, s)
	if _, err := vs.SetVoiceSummary(ctx, "nope", memory.RollingSummary{Text: "x"}, 1, 0, 0, 0); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("summary of an unknown session: %v", err)
	}
	if _, err := vs.CreateVoiceSession(ctx, voiceSession("s1", 100)); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"x1", "x2", "x3"} {
		addExchange(t, vs, voiceExchange(id, "s1", int64(110+i)))
	}
	sum := memory.RollingSummary{Text: "Deploys failed twice.", LastUpdated: 200, ExchangesSummarized: 2, TokenSavings: 30, CoverageRatio: 1, Private: true}
	got, err := vs.SetVoiceSummary(ctx, "s1", sum, 2, 50, 10, 0.0005)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary != sum || got.SummarizedThrough != 2 || got.TotalPromptTokens != 350 || got.TotalCompletionTokens != 70 || got.TotalExchanges != 3 {
		t.Fatalf("after the summary: %+v", got)
	}
	if _, err := vs.SetVoiceSummary(ctx, "s1", sum, 2, 0, 0, 0); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("a summary through an exchange already summarised: %v; want conflict", err)
	}
	if again, _ := vs.VoiceSession(ctx, "s1"); again.Summary != sum || again.TotalPromptTokens != 350 {
		t.Fatalf("the refused summary changed the session: %+v", again)
	}
}

func testVoiceForgetting(t *testing.T, s memory.Store) {
	vs := voiceStore(t, s)
	addThoughts(t, s, thought("t1", "the deploy failed on a migration", 1, s1), thought("t2", "the migration was retried", 2, s1))
	putEntities(t, s, entity("e1", "billing-service", "service", s1))
	if _, err := s.AddKGObservation(ctx, memory.KGObservation{ID: "o1", EntityID: "e1", Content: "uses PostgreSQL 15", CreatedAt: 1, Scope: s1}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s1", "s2", "s3"} {
		if _, err := vs.CreateVoiceSession(ctx, voiceSession(id, 100)); err != nil {
			t.Fatal(err)
		}
	}
	addExchange(t, vs, voiceExchange("a1", "s1", 110, "t1"))
	addExchange(t, vs, voiceExchange("a2", "s1", 111, "t2"))
	addExchange(t, vs, voiceExchange("b1", "s2", 110, "o1"))
	addExchange(t, vs, voiceExchange("b2", "s2", 111, "t2"))
	addExchange(t, vs, voiceExchange("c1", "s3", 110, "t2"))
	addExchange(t, vs, voiceExchange("c2", "s3", 111, "t1"))
	for _, id := range []string{"s1", "s2", "s3"} {
		if _, err := vs.SetVoiceSummary(ctx, id, memory.RollingSummary{Text: "summary of " + id, LastUpdated: 120, ExchangesSummarized: 1}, 1, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	// Forgetting t1 redacts a1 and c2, and drops s1's summary (made from
	// a1); s3's summary covers only c1 and stays.
	if _, err := s.RedactThought(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	check := func(session string, want map[string]bool) {
		t.Helper()
		xs, err := vs.VoiceExchanges(ctx, session, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range xs {
			if x.Redacted != want[x.ID] {
				t.Fatalf("exchange %s redacted %v; want %v", x.ID, x.Redacted, want[x.ID])
			}
			if x.Redacted && (x.Answer != memory.RedactedContent || len(x.Sources) != 0) {
				t.Fatalf("redacted exchange %s keeps %q %+v", x.ID, x.Answer, x.Sources)
			}
			if !x.Redacted && x.Answer != "Because of "+x.ID+"." {
				t.Fatalf("exchange %s changed: %q", x.ID, x.Answer)
			}
		}
	}
	check("s1", map[string]bool{"a1": true})
	check("s3", map[string]bool{"c2": true})
	if s1s, _ := vs.VoiceSession(ctx, "s1"); s1s.Summary.Text != "" || s1s.SummarizedThrough != 0 {
		t.Fatalf("s1's summary survived forgetting a source of it: %+v", s1s)
	}
	if s3s, _ := vs.VoiceSession(ctx, "s3"); s3s.Summary.Text != "summary of s3" || s3s.SummarizedThrough != 1 {
		t.Fatalf("s3's summary, made without t1, changed: %+v", s3s)
	}
	// Deleting a fact (here with its entity) redacts what cites it.
	if err := s.DeleteEntity(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	check("s2", map[string]bool{"b1": true})
	if s2s, _ := vs.VoiceSession(ctx, "s2"); s2s.Summary.Text != "" {
		t.Fatalf("s2's summary survived deleting its source: %+v", s2s)
	}
}

func testVoiceDelete(t *testing.T, s memory.Store) {
	vs := voiceStore(t, s)
	for _, id := range []string{"s1", "s2"} {
		if _, err := vs.CreateVoiceSession(ctx, voiceSession(id, 100)); err != nil {
			t.Fatal(err)
		}
		addExchange(t, vs, voiceExchange(id+"-x", id, 110, "t1"))
	}
	if err := vs.DeleteVoiceSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := vs.VoiceSession(ctx, "s1"); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("a deleted session: %v", err)
	}
	if xs, _ := vs.VoiceExchanges(ctx, "s1", 0, 10); len(xs) != 0 {
		t.Fatalf("a deleted session keeps exchanges: %+v", xs)
	}
	if err := vs.DeleteVoiceSession(ctx, "s1"); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("deleting it again: %v; want not_found", err)
	}
	if xs, _ := vs.VoiceExchanges(ctx, "s2", 0, 10); len(xs) != 1 {
		t.Fatalf("the other session lost its exchange: %+v", xs)
	}
	if tot, _ := vs.VoiceTotals(ctx, memory.Scope{}); tot.Sessions != 1 || tot.Exchanges != 1 {
		t.Fatalf("totals after the delete: %+v", tot)
	}
}
