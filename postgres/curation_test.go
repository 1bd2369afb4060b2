package postgres_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
)

// A database written before candidates, removals and inner_voice
// sessions existed (schema version 1) is upgraded when a newer cairn
// opens it, its records kept, and the new tables work at once.
func TestVersion1SchemaUpgrades(t *testing.T) {
	url := storeURL(t, "array")
	old, err := postgres.OpenAtVersion(ctx, url, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := old.Stats(ctx); err != nil || st.SchemaVersion != 1 {
		t.Fatalf("old store: %+v %v", st, err)
	}
	if _, err := old.AddThought(ctx, memory.Thought{ID: "t1", Content: "kept across the upgrade", Origin: memory.OriginHuman,
		Status: memory.StatusRemoval, Significance: 0.5, CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db := open(t, url)
	defer db.Close()
	st, err := db.Stats(ctx)
	if err != nil || st.SchemaVersion != postgres.SchemaVersion() || st.Thoughts != 1 {
		t.Fatalf("upgraded store: %+v %v; want version %d with the thought", st, err, postgres.SchemaVersion())
	}
	// The thought was marked before removals were recorded: its mark has
	// no time until it is marked again.
	rs, err := db.Removals(ctx, 0, 10)
	if err != nil || len(rs) != 1 || rs[0].MarkedAt != 0 {
		t.Fatalf("removals after the upgrade: %+v %v", rs, err)
	}
	if _, err := db.MarkRemoval(ctx, []string{"t1"}, 7); err != nil {
		t.Fatal(err)
	}
	if rs, err := db.Removals(ctx, 0, 10); err != nil || len(rs) != 1 || rs[0].MarkedAt != 7 {
		t.Fatalf("removals after marking: %+v %v", rs, err)
	}
}

// Servers staging the same candidate at once: the unique index of
// pending keys lets one stage it; the others report it pending.
func TestStagingOneKeyAcrossServers(t *testing.T) {
	url := storeURL(t, "array")
	servers := make([]*postgres.DB, 6)
	for i := range servers {
		servers[i] = open(t, url)
		defer servers[i].Close()
	}
	for round := range 4 {
		var wg sync.WaitGroup
		results := make([]memory.StageResult, len(servers))
		errs := make([]error, len(servers))
		start := make(chan struct{})
		for i, s := range servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = s.StageCandidates(ctx, []memory.KGCandidate{{
					ID: fmt.Sprintf("c%d-%d", round, i), Kind: memory.CandidateEntity, Name: fmt.Sprintf("Service %d", round),
					EntityType: "component", Data: memory.RawObject(`{}`), Confidence: 0.8, Status: memory.CandidatePending, CreatedAt: 1}})
			}()
		}
		close(start)
		wg.Wait()
		staged := 0
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, server %d: %v", round, i, err)
			}
			staged += len(results[i].Staged)
			for _, c := range results[i].Skipped {
				if c.Feedback != "pending" {
					t.Fatalf("round %d: skipped as %q; want pending", round, c.Feedback)
				}
			}
		}
		if staged != 1 {
			t.Fatalf("round %d: %d servers staged the same key; want 1", round, staged)
		}
	}
}

// Servers deciding one candidate at once: one decides, the others find
// it decided (conflict), and what the approval writes is written once.
func TestDecidingOneCandidateAcrossServers(t *testing.T) {
	url := storeURL(t, "array")
	servers := make([]*postgres.DB, 6)
	for i := range servers {
		servers[i] = open(t, url)
		defer servers[i].Close()
	}
	if _, err := servers[0].StageCandidates(ctx, []memory.KGCandidate{{ID: "c1", Kind: memory.CandidateEntity, Name: "Billing",
		EntityType: "component", Data: memory.RawObject(`{}`), Confidence: 0.9, Status: memory.CandidatePending, CreatedAt: 1}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	start := make(chan struct{})
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			id := fmt.Sprintf("e%d", i)
			_, errs[i] = s.DecideCandidate(ctx, memory.CandidateDecision{ID: "c1", Status: memory.CandidateApproved, DecidedAt: 2,
				PromotedID: id, Entities: []memory.KGEntity{{ID: id, Name: "Billing", Type: "component", Data: memory.RawObject(`{}`),
					CreatedAt: 2, UpdatedAt: 2}}})
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch memory.CodeOf(err) {
		case "":
			won++
		case memory.CodeConflict:
		default:
			t.Fatalf("server %d: %v", i, err)
		}
	}
	es, err := servers[0].EntitiesByName(ctx, "Billing")
	if won != 1 || err != nil || len(es) != 1 {
		t.Fatalf("%d servers approved the candidate, %d entities written (%v); want 1 and 1", won, len(es), err)
	}
}

// Exchanges added to one inner_voice session by many servers at once take
// sequence numbers one after another, and every one is counted.
func TestVoiceExchangesAcrossServers(t *testing.T) {
	url := storeURL(t, "array")
	servers := make([]*postgres.DB, 4)
	for i := range servers {
		servers[i] = open(t, url)
		defer servers[i].Close()
	}
	if _, err := servers[0].CreateVoiceSession(ctx, memory.InnerVoiceSession{ID: "v1", Version: 1, CreatedAt: 1, LastInteraction: 1}); err != nil {
		t.Fatal(err)
	}
	const each = 10
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				if _, _, err := s.AddVoiceExchange(ctx, memory.InnerVoiceExchange{ID: fmt.Sprintf("x%d-%d", i, j), SessionID: "v1",
					Timestamp: int64(2 + j), Query: "q", PromptTokens: 1}); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
	}
	xs, err := servers[0].VoiceExchanges(ctx, "v1", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for _, x := range xs {
		seqs = append(seqs, x.Seq)
	}
	want := make([]int, len(servers)*each)
	for i := range want {
		want[i] = i + 1
	}
	s, err := servers[0].VoiceSession(ctx, "v1")
	if !slices.Equal(seqs, want) || err != nil || s.TotalExchanges != len(want) || s.TotalPromptTokens != int64(len(want)) {
		t.Fatalf("sequence numbers %v, session %+v (%v); want 1..%d, all counted", seqs, s, err, len(want))
	}
}

// Forgetting a thought takes the sentence out of its decided candidates'
// data and keeps the rest of the object as it was written: the members'
// order and text.
func TestForgetKeepsTheRestOfCandidateData(t *testing.T) {
	db := open(t, storeURL(t, "array"))
	defer db.Close()
	if _, err := db.AddThought(ctx, memory.Thought{ID: "t1", Content: "Billing calls Ledger", Origin: memory.OriginHuman,
		Status: memory.StatusActive, Significance: 0.5, CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, data string }{
		{"c1", `{"z":1,"sentence":"Billing calls Ledger","a":{"sentence":"inner","b":[1, 2.50,"\u00e9"]},"m":null}`},
		{"c2", `{"sentence":"Billing calls Ledger"}`},
		{"c3", `{"rule":"cap"}`},
	} {
		if _, err := db.StageCandidates(ctx, []memory.KGCandidate{{ID: c.id, Kind: memory.CandidateEntity, Name: "N" + c.id,
			EntityType: "component", Data: memory.RawObject(c.data), Confidence: 0.5, SourceThoughtID: "t1",
			Status: memory.CandidatePending, CreatedAt: 1}}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DecideCandidate(ctx, memory.CandidateDecision{ID: c.id, Status: memory.CandidateRejected, DecidedAt: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.RedactThought(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	cs, err := db.Candidates(ctx, memory.CandidateFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		got[c.ID] = string(c.Data)
	}
	want := map[string]string{
		"c1": `{"z":1,"a":{"sentence":"inner","b":[1, 2.50,"\u00e9"]},"m":null}`,
		"c2": `{}`,
		"c3": `{"rule":"cap"}`,
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("candidate %s after forgetting its thought: %s; want %s", id, got[id], w)
		}
	}
}
