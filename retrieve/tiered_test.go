package retrieve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

func text(n int) string { return strings.Repeat("x", n) }

func newRetriever() (*retrieve.Retriever, *fakeStore, *fakeStore) {
	src := &fakeStore{
		pins: []memory.PinnedTarget{{Pin: memory.Pin{ID: "p1", TargetID: "pinned"}, TargetType: memory.TargetObservation,
			Target: memory.ObservationEntity(memory.Observation{ID: "pinned", Content: text(40)})}}, // 10 tokens
		summary: &memory.Summary{ID: "current", Content: text(80)}, // 20 tokens
	}
	src.res = memory.TextResult{Observations: []memory.TextHit{
		{Entity: memory.ObservationEntity(memory.Observation{ID: "c1", Content: text(100)}), Rank: -3}, // 25
		{Entity: memory.ObservationEntity(memory.Observation{ID: "c2", Content: text(41)}), Rank: -2},  // 11
		{Entity: memory.ObservationEntity(memory.Observation{ID: "c3", Content: text(4)}), Rank: -1},   // 1
	}}
	now := time.UnixMilli(1_000_000)
	return &retrieve.Retriever{Store: src, Provider: retrieve.LocalFTS{}, Now: func() time.Time { return now }}, src, src
}

func ptr(n int) *int { return &n }

func TestTokenBudgetAlgorithm(t *testing.T) {
	for _, tc := range []struct {
		budget    *int
		kept      []string
		truncated bool
		used      int
	}{
		{nil, []string{"c1", "c2", "c3"}, false, 67},
		{ptr(67), []string{"c1", "c2", "c3"}, false, 67},
		{ptr(66), []string{"c1", "c2"}, true, 66},
		{ptr(56), []string{"c1"}, true, 55},
		{ptr(54), nil, true, 30}, // c1 does not fit: the list ends there, c3 is not tried
		{ptr(1), nil, true, 30},  // pins and the summary stay even over budget
	} {
		rt, _, _ := newRetriever()
		res, err := rt.Retrieve(context.Background(), retrieve.Request{Query: "x", TokenBudget: tc.budget})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range res.Candidates {
			ids = append(ids, c.Entity.ID())
		}
		p := res.Provenance
		if !slices.Equal(ids, tc.kept) || p.TruncatedDueToTokenBudget != tc.truncated || p.TotalCandidates != 3 ||
			p.ReturnedCandidates != len(tc.kept) || p.TokensUsed != tc.used || len(res.Pins) != 1 || res.CurrentSummary == nil {
			t.Errorf("budget %v: kept %v truncated %v total %d returned %d used %d; want %v %v 3 %d %d",
				tc.budget, ids, p.TruncatedDueToTokenBudget, p.TotalCandidates, p.ReturnedCandidates, p.TokensUsed, tc.kept, tc.truncated, len(tc.kept), tc.used)
		}
	}
}

func TestTiersExcludeEachOther(t *testing.T) {
	rt, src, srch := newRetriever()
	res, err := rt.Retrieve(context.Background(), retrieve.Request{Query: "x", ScopeIDs: memory.Scope{SessionID: "s"}, IncludeRedacted: true, MaxCandidates: ptr(7)})
	if err != nil {
		t.Fatal(err)
	}
	ask := srch.asks[0]
	if !slices.Equal(ask.Exclude, []string{"pinned", "current"}) || ask.Limit != 7 || ask.Scope.SessionID != "s" {
		t.Fatalf("provider asked %+v; want pinned targets and the current summary excluded", ask)
	}
	if q := src.pinQ[0]; !q.IncludeRedacted || q.Now != 1_000_000 || q.Scope.SessionID != "s" {
		t.Fatalf("pins asked %+v", q)
	}
	if res.Provenance.ProviderUsed != "local-fts" || res.Provenance.MaxCandidates != 7 || res.Provenance.Now != 1_000_000 {
		t.Fatalf("provenance %+v", res.Provenance)
	}
	if src.snapshots != 1 {
		t.Fatalf("%d snapshots; every tier must come from one", src.snapshots)
	}
}

func TestDefaultsAndBounds(t *testing.T) {
	rt, _, srch := newRetriever()
	if _, err := rt.Retrieve(context.Background(), retrieve.Request{Query: "x"}); err != nil {
		t.Fatal(err)
	}
	if srch.asks[0].Limit != retrieve.DefaultMaxCandidates || retrieve.DefaultMaxCandidates != 50 {
		t.Fatalf("default limit %d; the contract's default is 50", srch.asks[0].Limit)
	}
	for _, req := range []retrieve.Request{
		{Query: "x", MaxCandidates: ptr(-1)}, {Query: "x", MaxCandidates: ptr(retrieve.MaxCandidatesLimit + 1)},
		{Query: "x", TokenBudget: ptr(0)}, {Query: "x", TokenBudget: ptr(-5)}, {Query: "x", TokenBudget: ptr(retrieve.MaxTokenBudget + 1)},
		{Query: " "}, {Query: "x", Syntax: "sql"},
	} {
		rt, src, srch := newRetriever()
		_, err := rt.Retrieve(context.Background(), req)
		if memory.CodeOf(err) != memory.CodeInvalidParams || len(src.pinQ) != 0 || len(srch.asks) != 0 {
			t.Errorf("%+v: %v (read %d/%d); want invalid_params before any read", req, err, len(src.pinQ), len(srch.asks))
		}
	}
}

func TestRetrieveIsDeterministic(t *testing.T) {
	var outs [][]byte
	for range 3 {
		rt, _, _ := newRetriever()
		res, err := rt.Retrieve(context.Background(), retrieve.Request{Query: "x", TokenBudget: ptr(60)})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) || !bytes.Equal(outs[1], outs[2]) {
		t.Fatal("the same inputs gave different JSON")
	}
}
