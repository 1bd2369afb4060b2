package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// This file checks memory.Browser, for the stores that implement it.

func browser(t *testing.T, s memory.Store) memory.Browser {
	t.Helper()
	b, ok := s.(memory.Browser)
	if !ok {
		t.Skip("this store does not implement memory.Browser (listing for the web page)")
	}
	return b
}

func testBrowseCapsules(t *testing.T, s memory.Store) {
	b := browser(t, s)
	for i := range 5 {
		scope := s1
		if i%2 == 1 {
			scope = s3
		}
		scope.SessionID = fmt.Sprintf("sess%d", i)
		id := fmt.Sprintf("c%d", i)
		if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: id, Type: "session", Intent: "intent " + id, OpenedAt: int64(100 + i), Scope: scope}); err != nil {
			t.Fatal(err)
		}
		for j := range i {
			o := obs(fmt.Sprintf("o%d_%d", i, j), "text", int64(200+j), memory.Scope{SessionID: scope.SessionID})
			add(t, s, o)
		}
	}
	if _, err := s.PutSummary(ctx, memory.Summary{ID: "sum2", CapsuleID: "c2", Content: "two", Confidence: 1, CreatedAt: 300, EvidenceRefs: []string{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CloseCapsule(ctx, "c3", 400, nil); err != nil {
		t.Fatal(err)
	}
	// Pages of two, newest first, until the cursor runs out.
	var ids []string
	var after memory.Cursor
	for pages := 0; ; pages++ {
		p, err := b.BrowseCapsules(ctx, memory.CapsuleFilter{After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Capsules {
			ids = append(ids, c.ID)
			if c.ID == "c4" && c.Observations != 4 {
				t.Errorf("c4 holds %d observations; want 4", c.Observations)
			}
			if c.ID == "c2" && (c.Summary == nil || c.Summary.Content != "two" || c.SummaryID != "sum2") {
				t.Errorf("c2's summary = %+v", c.Summary)
			}
			if c.ID == "c3" && (c.Status != memory.CapsuleClosed || c.ClosedAt == nil) {
				t.Errorf("c3 = %+v; want closed", c.Capsule)
			}
		}
		if p.Next == "" {
			if pages != 2 {
				t.Errorf("%d pages; want 3", pages+1)
			}
			break
		}
		after = p.Next
	}
	if want := []string{"c4", "c3", "c2", "c1", "c0"}; !slices.Equal(ids, want) {
		t.Fatalf("capsules %v; want %v", ids, want)
	}
	p, err := b.BrowseCapsules(ctx, memory.CapsuleFilter{Scope: memory.Scope{RepoID: "r2"}, Status: memory.CapsuleOpen, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Capsules) != 1 || p.Capsules[0].ID != "c1" || p.Next != "" {
		t.Fatalf("open capsules of r2: %+v", p)
	}
	_, err = b.BrowseCapsules(ctx, memory.CapsuleFilter{After: "nonsense", Limit: 2})
	wantCode(t, err, memory.CodeInvalidParams)
	_, err = b.BrowseCapsules(ctx, memory.CapsuleFilter{Limit: 0})
	wantCode(t, err, memory.CodeInvalidParams)
	_, err = b.BrowseCapsules(ctx, memory.CapsuleFilter{Status: "ajar", Limit: 1})
	wantCode(t, err, memory.CodeInvalidParams)
}

func testBrowseThoughts(t *testing.T, s memory.Store) {
	b := browser(t, s)
	th := []memory.Thought{
		thought("t1", "Clock skew breaks sessions", 10, s1),
		thought("t2", "Use idempotent webhooks", 20, s1),
		thought("t3", "Private note about SKEW", 30, s1),
		thought("t4", "Retry with backoff", 40, s3),
	}
	th[0].Tags, th[0].Origin = []string{"auth"}, memory.OriginHuman
	th[2].IsPrivate = true
	th[3].Tags = []string{"auth", "net"}
	addThoughts(t, s, th...)
	if _, err := s.SetThoughtStatus(ctx, []string{"t2"}, memory.StatusRemoval); err != nil {
		t.Fatal(err)
	}
	list := func(f memory.ThoughtBrowse) []string {
		t.Helper()
		var ids []string
		for {
			p, err := b.BrowseThoughts(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range p.Thoughts {
				ids = append(ids, x.ID)
			}
			if p.Next == "" {
				return ids
			}
			f.After = p.Next
		}
	}
	for _, tc := range []struct {
		f    memory.ThoughtBrowse
		want []string
	}{
		{memory.ThoughtBrowse{Limit: 1}, []string{"t4", "t2", "t1"}},
		{memory.ThoughtBrowse{Limit: 2, IncludePrivate: true}, []string{"t4", "t3", "t2", "t1"}},
		{memory.ThoughtBrowse{Limit: 5, Tag: "auth"}, []string{"t4", "t1"}},
		{memory.ThoughtBrowse{Limit: 5, Origin: memory.OriginHuman}, []string{"t1"}},
		{memory.ThoughtBrowse{Limit: 5, Status: memory.StatusRemoval}, []string{"t2"}},
		{memory.ThoughtBrowse{Limit: 5, Contains: "skew", IncludePrivate: true}, []string{"t3", "t1"}},
		{memory.ThoughtBrowse{Limit: 5, Scope: memory.Scope{RepoID: "r2"}}, []string{"t4"}},
	} {
		if got := list(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v; want %v", tc.f, got, tc.want)
		}
	}
	_, err := b.BrowseThoughts(ctx, memory.ThoughtBrowse{Limit: 1, After: "s-3"})
	wantCode(t, err, memory.CodeInvalidParams)
}

func testBrowseEntities(t *testing.T, s memory.Store) {
	b := browser(t, s)
	putEntities(t, s,
		entity("e1", "auth-service", "service", s1),
		entity("e2", "Alice", "person", s1),
		entity("e3", "api-gateway", "service", s3),
		entity("e4", "Bob", "person", s3),
		entity("e5", "AUTH-db", "database", s1),
	)
	list := func(f memory.EntityBrowse) []string {
		t.Helper()
		var ids []string
		for {
			p, err := b.BrowseEntities(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range p.Entities {
				ids = append(ids, x.ID)
			}
			if p.Next == "" {
				return ids
			}
			f.After = p.Next
		}
	}
	for _, tc := range []struct {
		f    memory.EntityBrowse
		want []string
	}{
		{memory.EntityBrowse{Limit: 2}, []string{"e2", "e3", "e5", "e1", "e4"}},
		{memory.EntityBrowse{Limit: 1, Type: "person"}, []string{"e2", "e4"}},
		{memory.EntityBrowse{Limit: 10, Prefix: "Auth"}, []string{"e5", "e1"}},
		{memory.EntityBrowse{Limit: 10, Scope: memory.Scope{RepoID: "r2"}}, []string{"e3", "e4"}},
	} {
		if got := list(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v; want %v", tc.f, got, tc.want)
		}
	}
	_, err := b.BrowseEntities(ctx, memory.EntityBrowse{Limit: 1, After: "e!!"})
	wantCode(t, err, memory.CodeInvalidParams)
}

func testBrowseCodeEntities(t *testing.T, s memory.Store) {
	b := browser(t, s)
	h := artifact("x").Hash
	var es []memory.CodeEntity
	// Keys whose byte order differs from a dictionary's: upper case first,
	// "_" between the cases.
	for _, sym := range []string{"b", "B", "a", "_z", "A", "c"} {
		state := memory.StateAuthoritative
		if sym == "B" || sym == "c" {
			state = memory.StateProposed
		}
		es = append(es, codeEntity("r1", "a.go", sym, state, h))
	}
	es = append(es, codeEntity("r1", "b.go", "Main", memory.StateAuthoritative, h), codeEntity("r2", "a.go", "A", memory.StateAuthoritative, h))
	applyCode(t, s, memory.CodeChange{Entities: es})
	list := func(f memory.CodeEntityBrowse) (keys []string, pages int) {
		t.Helper()
		for {
			p, err := b.BrowseCodeEntities(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if p.Total != len(keys)+len(p.Entities) && p.Next == "" {
				t.Errorf("%+v: total %d, %d listed", f, p.Total, len(keys)+len(p.Entities))
			}
			for _, x := range p.Entities {
				if x.RepoID != f.RepoID {
					t.Errorf("%+v lists %s of %s", f, x.Key, x.RepoID)
				}
				keys = append(keys, x.Key)
			}
			if p.Next == "" {
				return keys, pages
			}
			if len(p.Entities) != f.Limit {
				t.Errorf("%+v: a page of %d before the last", f, len(p.Entities))
			}
			f.After = p.Next
		}
	}
	for _, tc := range []struct {
		f     memory.CodeEntityBrowse
		want  []string
		pages int
	}{
		{memory.CodeEntityBrowse{RepoID: "r1", Limit: 2}, []string{"a.go::A", "a.go::B", "a.go::_z", "a.go::a", "a.go::b", "a.go::c", "b.go::Main"}, 4},
		{memory.CodeEntityBrowse{RepoID: "r1", Limit: 7}, []string{"a.go::A", "a.go::B", "a.go::_z", "a.go::a", "a.go::b", "a.go::c", "b.go::Main"}, 1},
		{memory.CodeEntityBrowse{RepoID: "r1", Limit: 1, Path: "a.go", State: memory.StateProposed}, []string{"a.go::B", "a.go::c"}, 2},
		{memory.CodeEntityBrowse{RepoID: "r1", Limit: 10, Path: "b.go"}, []string{"b.go::Main"}, 1},
		{memory.CodeEntityBrowse{RepoID: "r2", Limit: 10}, []string{"a.go::A"}, 1},
		{memory.CodeEntityBrowse{RepoID: "r3", Limit: 10}, nil, 1},
	} {
		got, pages := list(tc.f)
		if !slices.Equal(got, tc.want) || pages != tc.pages {
			t.Errorf("%+v: %v over %d pages; want %v over %d", tc.f, got, pages, tc.want, tc.pages)
		}
	}
	// Total counts the whole filter on every page.
	p, err := b.BrowseCodeEntities(ctx, memory.CodeEntityBrowse{RepoID: "r1", State: memory.StateAuthoritative, Limit: 2})
	if err != nil || p.Total != 5 || len(p.Entities) != 2 || p.Next == "" {
		t.Fatalf("first page of r1's authoritative entities: %+v %v", p, err)
	}
	if p, err = b.BrowseCodeEntities(ctx, memory.CodeEntityBrowse{RepoID: "r1", State: memory.StateAuthoritative, After: p.Next, Limit: 2}); err != nil || p.Total != 5 {
		t.Fatalf("second page: %+v %v", p, err)
	}
	for name, f := range map[string]memory.CodeEntityBrowse{
		"cursor":   {RepoID: "r1", After: "e!!", Limit: 1},
		"empty":    {RepoID: "r1", After: "k", Limit: 1},
		"no repo":  {Limit: 1},
		"state":    {RepoID: "r1", State: "LIVE", Limit: 1},
		"no limit": {RepoID: "r1"},
	} {
		_, err := b.BrowseCodeEntities(ctx, f)
		if !memory.IsCode(err, memory.CodeInvalidParams) {
			t.Errorf("%s: %v; want invalid_params", name, err)
		}
	}
}

func testScopeValues(t *testing.T, s memory.Store) {
	b := browser(t, s)
	add(t, s, obs("o1", "a", 1, memory.Scope{SessionID: "old", RepoID: "r1"}),
		obs("o2", "b", 2, memory.Scope{SessionID: "new", RepoID: "r1", AgentID: "claude"}))
	addThoughts(t, s, thought("t1", "x", 1, memory.Scope{UserID: "ann", RepoID: "r9"}))
	v, err := b.ScopeValues(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := memory.ScopeValues{Sessions: []string{"new", "old"}, Repos: []string{"r1", "r9"}, Agents: []string{"claude"}, Users: []string{"ann"}}
	if fmt.Sprint(v) != fmt.Sprint(want) {
		t.Fatalf("scope values %+v; want %+v", v, want)
	}
	if v, err = b.ScopeValues(ctx, 1); err != nil || len(v.Sessions) != 1 || v.Sessions[0] != "new" {
		t.Fatalf("limit 1: %+v, %v", v, err)
	}
}
