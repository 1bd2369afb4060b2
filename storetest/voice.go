package storetest

import (
	"slices"
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
	if _, ok, err := vs.ActiveVoiceSession(ctx, 0); err != nil || ok {
		t.Fatalf("active session of an empty store: %v %v", ok, err)
	}
	in := voiceSession("ivs1", 100)
	got, err := vs.CreateVoiceSession(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "created session", got, in)
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
	list, err := vs.VoiceSessions(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if ids := sessionIDs(list); !slices.Equal(ids, []string{"ivs2", "ivs3", "ivs1"}) {
		t.Fatalf("sessions %v; want the latest interaction first", ids)
	}
	if page, _ := vs.VoiceSessions(ctx, 1, 1); !slices.Equal(sessionIDs(page), []string{"ivs3"}) {
		t.Fatalf("offset 1 limit 1: %v", sessionIDs(page))
	}
	// The active session is the latest interaction at or after since.
	if a, ok, err := vs.ActiveVoiceSession(ctx, 120); err != nil || !ok || a.ID != "ivs2" {
		t.Fatalf("active since 120: %v %v %v", a.ID, ok, err)
	}
	if _, ok, _ := vs.ActiveVoiceSession(ctx, 201); ok {
		t.Fatal("a session older than since is active")
	}
	// An interaction makes a session the active one.
	addExchange(t, vs, voiceExchange("ivx1", "ivs1", 300))
	if a, ok, _ := vs.ActiveVoiceSession(ctx, 120); !ok || a.ID != "ivs1" {
		t.Fatalf("after an exchange the active session is %v", a.ID)
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
	tot, err := vs.VoiceTotals(ctx)
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
	if tot, _ := vs.VoiceTotals(ctx); tot.Sessions != 1 || tot.Exchanges != 1 {
		t.Fatalf("totals after the delete: %+v", tot)
	}
}
