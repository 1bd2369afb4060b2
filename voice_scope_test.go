package cairn_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// First inner_voice calls racing in continue mode, from engines that share
// one database (as cairn mcp processes or cairn serve replicas do), agree
// on one session per scope: one call creates it, the others continue it,
// and the scope has one active session. Scopes keep their threads apart;
// unscoped calls share theirs.
func TestInnerVoiceRacingFirstCallsShareOneSessionSQLite(t *testing.T) {
	testRacingFirstCalls(t, filepath.Join(t.TempDir(), "cairn.db"))
}

func TestInnerVoiceRacingFirstCallsShareOneSessionPostgres(t *testing.T) {
	testRacingFirstCalls(t, pgURL(t))
}

func testRacingFirstCalls(t *testing.T, where string) {
	const engines = 4
	opts := func() *cairn.Options { return &cairn.Options{Embedder: embed.Hash{Dim: 256}, InnerVoice: voiceOn()} }
	first := openAt(t, where, opts())
	seedAsk(t, first)
	engs := []*cairn.Engine{first}
	for len(engs) < engines {
		engs = append(engs, openAt(t, where, opts()))
	}
	alice := memory.Scope{RepoID: "/src/auth", AgentID: "alice"}
	bob := memory.Scope{RepoID: "/src/auth", AgentID: "bob"}
	scopes := []memory.Scope{{}, alice, bob}
	// Every engine asks once per scope, all at once.
	type call struct {
		scope memory.Scope
		res   cairn.AskResult
		err   error
	}
	var calls []*call
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, eng := range engs {
		for _, sc := range scopes {
			for range 2 {
				c := &call{scope: sc}
				calls = append(calls, c)
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					c.res, c.err = eng.Ask(ctx, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(false), Mode: "continue", ScopeIDs: sc})
				}()
			}
		}
	}
	close(start)
	wg.Wait()
	sessionOf := map[memory.Scope]string{}
	created := map[memory.Scope]int{}
	seqs := map[memory.Scope][]int{}
	for _, c := range calls {
		if c.err != nil {
			t.Fatalf("scope %q: %v", c.scope.String(), c.err)
		}
		s := c.res.Session
		if s == nil {
			t.Fatalf("scope %q: no session recorded", c.scope.String())
		}
		if id, ok := sessionOf[c.scope]; ok && id != s.SessionID {
			t.Fatalf("scope %q: calls recorded in sessions %s and %s; want one", c.scope.String(), id, s.SessionID)
		}
		sessionOf[c.scope] = s.SessionID
		if s.Created {
			created[c.scope]++
		}
		if s.Scope != c.scope {
			t.Fatalf("scope %q: recorded in a session of scope %q", c.scope.String(), s.Scope.String())
		}
		seqs[c.scope] = append(seqs[c.scope], s.Seq)
	}
	perScope := 2 * engines
	for _, sc := range scopes {
		if created[sc] != 1 {
			t.Fatalf("scope %q: %d calls created a session; want 1", sc.String(), created[sc])
		}
		slices.Sort(seqs[sc])
		if want := []int{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(seqs[sc], want[:perScope]) {
			t.Fatalf("scope %q: exchange numbers %v", sc.String(), seqs[sc])
		}
	}
	if sessionOf[alice] == sessionOf[bob] || sessionOf[alice] == sessionOf[memory.Scope{}] {
		t.Fatalf("scopes share a session: %v", sessionOf)
	}
	// Every engine sees one active session per scope, and the scope's
	// next call continues it.
	for i, eng := range engs {
		for _, sc := range scopes {
			list, err := eng.VoiceSessions(ctx, cairn.VoiceSessionsRequest{ScopeIDs: sc})
			if err != nil {
				t.Fatal(err)
			}
			active := 0
			for _, s := range list.Sessions {
				if s.Active && s.Scope == sc {
					active++
				}
			}
			if list.ActiveSessionID != sessionOf[sc] || active != 1 {
				t.Fatalf("engine %d, scope %q: active %s (%d active of that scope); want %s", i, sc.String(), list.ActiveSessionID, active, sessionOf[sc])
			}
		}
	}
	next := ask(t, engs[2], cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(false), Mode: "continue", ScopeIDs: bob})
	if next.Session.SessionID != sessionOf[bob] || next.Session.Seq != perScope+1 || next.Session.Created {
		t.Fatalf("bob's next call: %+v", next.Session)
	}
	all, err := first.VoiceSessions(ctx, cairn.VoiceSessionsRequest{})
	if err != nil || len(all.Sessions) != len(scopes) || all.Totals.Exchanges != len(calls)+1 {
		t.Fatalf("every session: %d, totals %+v, %v", len(all.Sessions), all.Totals, err)
	}
}

// A scoped call continues only its scope's session: two agents sharing a
// database never see each other's exchanges; unscoped calls behave as
// before scopes (one shared thread); listing filters by scope; a
// session_id given with a scope must be of it; the scope goes over the
// tool's JSON arguments too.
func TestInnerVoiceSessionScopes(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	eng, _ := askEngine(t, &cairn.Options{Now: clk.now})
	alice := memory.Scope{RepoID: "/src/auth", AgentID: "alice"}
	bob := memory.Scope{RepoID: "/src/auth", AgentID: "bob"}
	q := func(sc memory.Scope, req cairn.AskRequest) cairn.AskResult {
		t.Helper()
		req.Content, req.TopK, req.Save, req.ScopeIDs = askQuestion, ptr(3), ptr(false), sc
		if req.Mode == "" && req.SessionID == "" {
			req.Mode = "continue"
		}
		return ask(t, eng, req)
	}
	plain := q(memory.Scope{}, cairn.AskRequest{})
	a1 := q(alice, cairn.AskRequest{})
	b1 := q(bob, cairn.AskRequest{})
	if !plain.Session.Created || !a1.Session.Created || !b1.Session.Created || a1.Session.SessionID == b1.Session.SessionID ||
		a1.Session.SessionID == plain.Session.SessionID || a1.Session.Scope != alice || !plain.Session.Scope.IsZero() {
		t.Fatalf("first calls: %+v %+v %+v", plain.Session, a1.Session, b1.Session)
	}
	a2 := q(alice, cairn.AskRequest{})
	if a2.Session.SessionID != a1.Session.SessionID || a2.Session.Seq != 2 {
		t.Fatalf("alice's second call: %+v", a2.Session)
	}
	// Bob's window holds his exchange alone: alice's never reach it.
	view, err := eng.VoiceSession(ctx, cairn.VoiceSessionRequest{SessionID: b1.Session.SessionID})
	if err != nil || len(view.Exchanges) != 1 || view.Session.Scope != bob || !view.Session.Active {
		t.Fatalf("bob's session: %+v %v", view, err)
	}
	// A new thread ends alice's session, not bob's or the unscoped one.
	a3 := q(alice, cairn.AskRequest{Mode: "new_thread"})
	if !a3.Session.Created || a3.Session.SessionID == a1.Session.SessionID {
		t.Fatalf("alice's new thread: %+v", a3.Session)
	}
	if p := q(memory.Scope{}, cairn.AskRequest{}); p.Session.SessionID != plain.Session.SessionID || p.Session.Seq != 2 {
		t.Fatalf("the unscoped thread after alice's new one: %+v", p.Session)
	}
	if b := q(bob, cairn.AskRequest{}); b.Session.SessionID != b1.Session.SessionID || b.Session.Seq != 2 {
		t.Fatalf("bob's thread after alice's new one: %+v", b.Session)
	}
	// Listing by scope: each key given must match; the active session is
	// the one of exactly the scope given.
	for _, c := range []struct {
		filter memory.Scope
		n      int
		active string
	}{
		{memory.Scope{}, 4, plain.Session.SessionID},
		{memory.Scope{RepoID: "/src/auth"}, 3, ""},
		{alice, 2, a3.Session.SessionID},
		{memory.Scope{AgentID: "bob"}, 1, ""},
	} {
		list, err := eng.VoiceSessions(ctx, cairn.VoiceSessionsRequest{ScopeIDs: c.filter})
		if err != nil || len(list.Sessions) != c.n || list.ActiveSessionID != c.active || list.Totals.Sessions != c.n {
			t.Fatalf("sessions within %q: %d, active %q, totals %+v, %v; want %d, %q", c.filter.String(), len(list.Sessions),
				list.ActiveSessionID, list.Totals, err, c.n, c.active)
		}
		for _, s := range list.Sessions {
			if !c.filter.Matches(s.Scope) {
				t.Fatalf("sessions within %q list one of %q", c.filter.String(), s.Scope.String())
			}
		}
	}
	// session_id: of the scope given, or given without one.
	if _, err := eng.Ask(ctx, cairn.AskRequest{Content: askQuestion, SessionID: a1.Session.SessionID, ScopeIDs: bob}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("alice's session continued in bob's scope: %v", err)
	}
	if r := q(memory.Scope{}, cairn.AskRequest{SessionID: a1.Session.SessionID}); r.Session.SessionID != a1.Session.SessionID || r.Session.Seq != 3 {
		t.Fatalf("alice's old session resumed by id: %+v", r.Session)
	}
	// Resuming it made it alice's current session again.
	if r := q(alice, cairn.AskRequest{}); r.Session.SessionID != a1.Session.SessionID || r.Session.Seq != 4 {
		t.Fatalf("alice's call after resuming a1: %+v", r.Session)
	}
	// save false alone keeps no exchange; with a scope it asks for the
	// scope's session.
	if r := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(false)}); r.Session != nil {
		t.Fatalf("save false alone recorded %+v", r.Session)
	}
	if r := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(false), ScopeIDs: alice}); r.Session == nil ||
		r.Session.SessionID != a1.Session.SessionID || r.Session.Mode != "continue" || r.Session.Seq != 5 {
		t.Fatalf("save false with a scope: %+v", r.Session)
	}
	// Over the tool's JSON arguments.
	out, err := eng.CallJSON(ctx, "inner_voice", []byte(`{"content":"`+askQuestion+`","top_k":3,"save":false,"mode":"continue","scopeIds":{"repoId":"/src/auth","agentId":"bob"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Session struct {
			SessionID string       `json:"session_id"`
			Scope     memory.Scope `json:"scopeIds"`
		} `json:"session"`
	}
	text, _ := json.Marshal(out)
	if err := json.Unmarshal(text, &res); err != nil || res.Session.SessionID != b1.Session.SessionID || res.Session.Scope != bob {
		t.Fatalf("inner_voice over JSON: %s %v", text, err)
	}
	out, err = eng.CallJSON(ctx, "inner_voice_sessions", []byte(`{"scopeIds":{"agentId":"bob"}}`))
	list, _ := out.(cairn.VoiceSessionList)
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].ID != b1.Session.SessionID {
		t.Fatalf("inner_voice_sessions over JSON: %+v %v", out, err)
	}
	// A malformed scope changes nothing.
	before, _ := eng.VoiceSessions(ctx, cairn.VoiceSessionsRequest{})
	for _, args := range []string{`{"content":"q","scopeIds":{"agentId":""}}`, `{"content":"q","scopeIds":{"team":"x"}}`,
		`{"content":"q","scopeIds":{"agentId":" padded "}}`} {
		if _, err := eng.CallJSON(ctx, "inner_voice", []byte(args)); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Fatalf("%s: %v", args, err)
		}
	}
	if _, err := eng.Ask(ctx, cairn.AskRequest{Content: "q", ScopeIDs: memory.Scope{AgentID: "a\nb"}}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("a scope with a line break: %v", err)
	}
	if _, err := eng.CallJSON(ctx, "inner_voice_sessions", []byte(`{"scopeIds":{"userId":""}}`)); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("an empty scope value in a listing: %v", err)
	}
	if after, _ := eng.VoiceSessions(ctx, cairn.VoiceSessionsRequest{}); after.Totals != before.Totals {
		t.Fatalf("bad input recorded something: %+v → %+v", before.Totals, after.Totals)
	}
}
