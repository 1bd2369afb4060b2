package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// This file checks thoughts and the knowledge graph.

func thought(id, content string, createdAt int64, scope memory.Scope) memory.Thought {
	return memory.Thought{ID: id, Content: content, Origin: memory.OriginModel, Status: memory.StatusActive,
		Significance: 0.5, CreatedAt: createdAt, Scope: scope}
}

func addThoughts(t *testing.T, s memory.Store, ts ...memory.Thought) {
	t.Helper()
	for _, th := range ts {
		if _, err := s.AddThought(ctx, th); err != nil {
			t.Fatalf("AddThought %s: %v", th.ID, err)
		}
	}
}

func entity(id, name, typ string, scope memory.Scope) memory.KGEntity {
	return memory.KGEntity{ID: id, Name: name, Type: typ, CreatedAt: 1, UpdatedAt: 1, Scope: scope}
}

func putEntities(t *testing.T, s memory.Store, es ...memory.KGEntity) {
	t.Helper()
	for _, e := range es {
		if _, err := s.PutEntity(ctx, e); err != nil {
			t.Fatalf("PutEntity %s: %v", e.ID, err)
		}
	}
}

// sameJSON fails unless a and b encode to the same JSON (so a nil list and
// an empty one, or nil data and {}, count as equal).
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Fatalf("%s:\n got  %s\n want %s", what, g, w)
	}
}

func thoughtIDs(ts []memory.Thought) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func entityIDs(es []memory.KGEntity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func edgeIDs(gs []memory.KGEdge) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.ID)
	}
	return out
}

func kgObsIDs(os []memory.KGObservation) []string {
	var out []string
	for _, o := range os {
		out = append(out, o.ID)
	}
	return out
}

// lastSeq is the newest change a snapshot reflects.
func lastSeq(t *testing.T, s memory.Store) int64 {
	t.Helper()
	var last int64
	err := s.Snapshot(ctx, func(r memory.Reader) error {
		var err error
		last, err = r.LoadIndex(ctx, memory.Space{}, func(memory.IndexRecord) error { return nil })
		return err
	})
	if err != nil {
		t.Fatalf("LoadIndex: %v", err)
	}
	return last
}

// knowledgeState is every thought, entity, entity observation and edge,
// and the change log's head, for checking that a refused write changed
// nothing.
func knowledgeState(t *testing.T, s memory.Store) string {
	t.Helper()
	ts, err := s.Thoughts(ctx, memory.ThoughtFilter{IncludePrivate: true, Limit: 1000})
	if err != nil {
		t.Fatalf("Thoughts: %v", err)
	}
	es, err := s.Entities(ctx, "", memory.Scope{}, 1000)
	if err != nil {
		t.Fatalf("Entities: %v", err)
	}
	var kos []memory.KGObservation
	for _, e := range es {
		os, err := s.KGObservations(ctx, e.ID)
		if err != nil {
			t.Fatalf("KGObservations: %v", err)
		}
		kos = append(kos, os...)
	}
	gs, err := s.Edges(ctx, "", 1000)
	if err != nil {
		t.Fatalf("Edges: %v", err)
	}
	b, err := json.Marshal([]any{ts, es, kos, gs})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s seq=%d", b, lastSeq(t, s))
}

func testThoughtRoundTrip(t *testing.T, s memory.Store) {
	in := memory.Thought{ID: "t1", Content: "the cache must be invalidated on deploy ✓", Origin: memory.OriginHuman,
		Tags: []string{"deploy", "cache"}, IsPrivate: true, Status: memory.StatusActive, Significance: 0.9,
		IsSummary: true, SummaryOf: []string{"t0", "t-1"}, Pipeline: "inner_voice", CreatedAt: 1234,
		Scope: memory.Scope{SessionID: "s1", RepoID: "r1", AgentID: "a1", UserID: "u1"}}
	out, err := s.AddThought(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "AddThought returned", out, in)
	got, err := s.Thought(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "thought read back", got, in)
	if !slices.Equal(got.Tags, in.Tags) || !slices.Equal(got.SummaryOf, in.SummaryOf) {
		t.Fatalf("lists read back as %v %v; want %v %v (in order)", got.Tags, got.SummaryOf, in.Tags, in.SummaryOf)
	}

	// Lists left nil come back empty, never nil.
	bare := thought("t2", "bare", 5, memory.Scope{})
	out, err = s.AddThought(ctx, bare)
	if err != nil {
		t.Fatal(err)
	}
	got, err = s.Thought(ctx, "t2")
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string][]string{"returned tags": out.Tags, "returned summary_of": out.SummaryOf,
		"stored tags": got.Tags, "stored summary_of": got.SummaryOf} {
		if l == nil || len(l) != 0 {
			t.Errorf("%s = %#v; want an empty, non-nil list", name, l)
		}
	}
	if got.IsPrivate || got.IsSummary || got.Origin != memory.OriginModel || got.Status != memory.StatusActive {
		t.Fatalf("bare thought read back as %+v", got)
	}

	// A duplicate id is a conflict and changes nothing; an unknown id is
	// not found.
	before := knowledgeState(t, s)
	_, err = s.AddThought(ctx, thought("t1", "another thought with a taken id", 9, s2))
	wantCode(t, err, memory.CodeConflict)
	if after := knowledgeState(t, s); after != before {
		t.Fatalf("a refused thought changed the store:\nbefore %s\nafter  %s", before, after)
	}
	_, err = s.Thought(ctx, "nope")
	wantCode(t, err, memory.CodeNotFound)
}

func testThoughtListing(t *testing.T, s memory.Store) {
	priv := thought("p1", "private", 50, s1)
	priv.IsPrivate = true
	old := thought("t-old", "old", 10, s1)
	old.Status = memory.StatusRemoval
	addThoughts(t, s,
		old,
		thought("t-b", "tie b", 20, s1),
		thought("t-a", "tie a", 20, s2),
		thought("t-new", "new", 40, s3),
		priv,
	)
	list := func(f memory.ThoughtFilter) []string {
		t.Helper()
		got, err := s.Thoughts(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return thoughtIDs(got)
	}
	for _, tc := range []struct {
		name string
		f    memory.ThoughtFilter
		want []string
	}{
		{"newest first, ties by id, private left out", memory.ThoughtFilter{}, []string{"t-new", "t-a", "t-b", "t-old"}},
		{"private asked for", memory.ThoughtFilter{IncludePrivate: true}, []string{"p1", "t-new", "t-a", "t-b", "t-old"}},
		{"scope: repo", memory.ThoughtFilter{Scope: memory.Scope{RepoID: "r1"}, IncludePrivate: true}, []string{"p1", "t-a", "t-b", "t-old"}},
		{"scope: session", memory.ThoughtFilter{Scope: s1}, []string{"t-b", "t-old"}},
		{"scope: nobody", memory.ThoughtFilter{Scope: memory.Scope{UserID: "nobody"}, IncludePrivate: true}, nil},
		{"status active", memory.ThoughtFilter{Status: memory.StatusActive, IncludePrivate: true}, []string{"p1", "t-new", "t-a", "t-b"}},
		{"status removal", memory.ThoughtFilter{Status: memory.StatusRemoval}, []string{"t-old"}},
		{"limit", memory.ThoughtFilter{IncludePrivate: true, Limit: 2}, []string{"p1", "t-new"}},
		{"all filters", memory.ThoughtFilter{Scope: memory.Scope{RepoID: "r1"}, Status: memory.StatusActive, Limit: 1}, []string{"t-a"}},
	} {
		if got := list(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Thoughts(%+v) = %v; want %v", tc.name, tc.f, got, tc.want)
		}
	}
	// Listed thoughts are whole: the same as read one by one.
	all, err := s.Thoughts(ctx, memory.ThoughtFilter{IncludePrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range all {
		one, err := s.Thought(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "listed thought "+th.ID, th, one)
	}
}

func testThoughtStatus(t *testing.T, s memory.Store) {
	addThoughts(t, s, thought("t1", "one", 1, s1), thought("t2", "two", 2, s1), thought("t3", "three", 3, s1))
	n, err := s.SetThoughtStatus(ctx, []string{"t1", "t2", "missing"}, memory.StatusRemoval)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("marked %d thoughts for removal; want 2 (an unknown id changes nothing)", n)
	}
	// Marking again counts only thoughts whose status changes.
	if n, err = s.SetThoughtStatus(ctx, []string{"t1", "t3"}, memory.StatusRemoval); err != nil || n != 1 {
		t.Fatalf("second mark changed %d (%v); want 1", n, err)
	}
	for id, want := range map[string]string{"t1": memory.StatusRemoval, "t2": memory.StatusRemoval, "t3": memory.StatusRemoval} {
		got, err := s.Thought(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != want {
			t.Errorf("thought %s status %q; want %q", id, got.Status, want)
		}
	}
	if n, err = s.SetThoughtStatus(ctx, []string{"t2"}, memory.StatusActive); err != nil || n != 1 {
		t.Fatalf("restore changed %d (%v); want 1", n, err)
	}
	got, err := s.Thoughts(ctx, memory.ThoughtFilter{Status: memory.StatusActive})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(thoughtIDs(got), []string{"t2"}) {
		t.Fatalf("active thoughts %v; want [t2]", thoughtIDs(got))
	}
	if n, err = s.SetThoughtStatus(ctx, nil, memory.StatusActive); err != nil || n != 0 {
		t.Fatalf("marking no thoughts changed %d (%v)", n, err)
	}
}

func testEntities(t *testing.T, s memory.Store) {
	in := memory.KGEntity{ID: "e1", Name: "Alice", Type: "person", Data: memory.RawObject(`{"role":"dev","langs":["go","sql"]}`),
		CreatedAt: 100, UpdatedAt: 100, Scope: s1}
	out, err := s.PutEntity(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "PutEntity returned", out, in)
	got, err := s.Entity(ctx, "e1")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "entity read back", got, in)

	// No data reads back as {}.
	putEntities(t, s, entity("e-nodata", "Bare", "thing", memory.Scope{}))
	got, err = s.Entity(ctx, "e-nodata")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(got.Data); string(b) != "{}" {
		t.Fatalf("entity without data reads back data %s; want {}", b)
	}

	// Putting an existing id updates name, type and data; created_at and
	// scope stay as created, and the returned entity is the stored one.
	upd := memory.KGEntity{ID: "e1", Name: "Alice Smith", Type: "engineer", Data: memory.RawObject(`{"role":"lead"}`),
		CreatedAt: 999, UpdatedAt: 200, Scope: s3}
	out, err = s.PutEntity(ctx, upd)
	if err != nil {
		t.Fatal(err)
	}
	got, err = s.Entity(ctx, "e1")
	if err != nil {
		t.Fatal(err)
	}
	want := memory.KGEntity{ID: "e1", Name: "Alice Smith", Type: "engineer", Data: memory.RawObject(`{"role":"lead"}`),
		CreatedAt: 100, UpdatedAt: 200, Scope: s1}
	sameJSON(t, "updated entity read back", got, want)
	sameJSON(t, "PutEntity returned on update", out, want)
	if byOld, err := s.EntitiesByName(ctx, "alice"); err != nil || len(byOld) != 0 {
		t.Fatalf("the old name still finds %v (%v)", entityIDs(byOld), err)
	}
	if byNew, err := s.EntitiesByName(ctx, "ALICE SMITH"); err != nil || !slices.Equal(entityIDs(byNew), []string{"e1"}) {
		t.Fatalf("the new name finds %v (%v); want [e1]", entityIDs(byNew), err)
	}

	_, err = s.Entity(ctx, "nope")
	wantCode(t, err, memory.CodeNotFound)
}

func testEntityLookup(t *testing.T, s memory.Store) {
	putEntities(t, s,
		entity("e3", "bob", "person", s1),
		entity("e2", "alice", "person", s2),
		entity("e1", "Alice", "person", s1),
		entity("e4", "Carol", "person", s3),
		entity("e5", "Cairn", "project", s1),
		entity("e6", "Ärzte", "band", s2),
	)
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"alice", []string{"e2", "e1"}}, // every case; in creation order
		{"ALICE", []string{"e2", "e1"}},
		{"Alic", nil}, // whole names only
		{"alice ", nil},
		{"ärzte", []string{"e6"}}, // case beyond ASCII
		{"ÄRZTE", []string{"e6"}},
		{"", nil},
	} {
		got, err := s.EntitiesByName(ctx, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(entityIDs(got), tc.want) {
			t.Errorf("EntitiesByName(%q) = %v; want %v", tc.name, entityIDs(got), tc.want)
		}
	}
	for _, tc := range []struct {
		typ   string
		scope memory.Scope
		limit int
		want  []string
	}{
		// By name ignoring case (then bytewise), ties by id.
		{"", memory.Scope{}, 100, []string{"e1", "e2", "e3", "e5", "e4", "e6"}},
		{"person", memory.Scope{}, 100, []string{"e1", "e2", "e3", "e4"}},
		{"", memory.Scope{RepoID: "r1"}, 100, []string{"e1", "e2", "e3", "e5", "e6"}},
		{"person", s1, 100, []string{"e1", "e3"}},
		{"", memory.Scope{}, 2, []string{"e1", "e2"}},
		{"robot", memory.Scope{}, 100, nil},
	} {
		got, err := s.Entities(ctx, tc.typ, tc.scope, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(entityIDs(got), tc.want) {
			t.Errorf("Entities(%q, %+v, %d) = %v; want %v", tc.typ, tc.scope, tc.limit, entityIDs(got), tc.want)
		}
	}
}

func testKGObservations(t *testing.T, s memory.Store) {
	putEntities(t, s, entity("e1", "Alice", "person", s1), entity("e2", "Bob", "person", s1))
	for _, o := range []memory.KGObservation{
		{ID: "k-late", EntityID: "e1", Content: "moved to Berlin", CreatedAt: 30, Scope: s1},
		{ID: "k-early", EntityID: "e1", Content: "writes Go", CreatedAt: 10, Scope: s1},
		{ID: "k-tie2", EntityID: "e1", Content: "likes tea", CreatedAt: 20, Scope: s1},
		{ID: "k-tie1", EntityID: "e1", Content: "likes coffee", CreatedAt: 20, Scope: s1},
		{ID: "k-bob", EntityID: "e2", Content: "reviews code", CreatedAt: 5, Scope: s2},
	} {
		out, err := s.AddKGObservation(ctx, o)
		if err != nil {
			t.Fatalf("AddKGObservation %s: %v", o.ID, err)
		}
		sameJSON(t, "AddKGObservation returned", out, o)
	}
	got, err := s.KGObservations(ctx, "e1")
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first; equal times in the order written.
	if want := []string{"k-early", "k-tie2", "k-tie1", "k-late"}; !slices.Equal(kgObsIDs(got), want) {
		t.Fatalf("KGObservations(e1) = %v; want %v", kgObsIDs(got), want)
	}
	sameJSON(t, "entity observation read back", got[0],
		memory.KGObservation{ID: "k-early", EntityID: "e1", Content: "writes Go", CreatedAt: 10, Scope: s1})
	if got, err := s.KGObservations(ctx, "nobody"); err != nil || len(got) != 0 {
		t.Fatalf("observations of an unknown entity: %v %v", kgObsIDs(got), err)
	}

	before := knowledgeState(t, s)
	_, err = s.AddKGObservation(ctx, memory.KGObservation{ID: "k-x", EntityID: "ghost", Content: "x", CreatedAt: 1})
	wantCode(t, err, memory.CodeNotFound)
	_, err = s.AddKGObservation(ctx, memory.KGObservation{ID: "k-early", EntityID: "e2", Content: "taken id", CreatedAt: 1})
	wantCode(t, err, memory.CodeConflict)
	wantCode(t, s.DeleteKGObservation(ctx, "ghost"), memory.CodeNotFound)
	if after := knowledgeState(t, s); after != before {
		t.Fatalf("refused observation writes changed the store:\nbefore %s\nafter  %s", before, after)
	}

	if err := s.DeleteKGObservation(ctx, "k-tie2"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteKGObservation(ctx, "k-tie2"), memory.CodeNotFound)
	got, _ = s.KGObservations(ctx, "e1")
	if want := []string{"k-early", "k-tie1", "k-late"}; !slices.Equal(kgObsIDs(got), want) {
		t.Fatalf("after delete: %v; want %v", kgObsIDs(got), want)
	}
}

func testEdges(t *testing.T, s memory.Store) {
	putEntities(t, s, entity("a", "A", "node", s1), entity("b", "B", "node", s1), entity("c", "C", "node", s1))
	for _, g := range []memory.KGEdge{
		{ID: "g1", Source: "a", Target: "b", Relation: "depends_on", Data: memory.RawObject(`{"since":2024}`), CreatedAt: 1, Scope: s1},
		{ID: "g2", Source: "c", Target: "a", Relation: "owns", CreatedAt: 2, Scope: s1},
		{ID: "g3", Source: "b", Target: "c", Relation: "calls", CreatedAt: 3, Scope: s2},
		{ID: "g4", Source: "a", Target: "a", Relation: "wraps", CreatedAt: 4, Scope: s1},
	} {
		out, err := s.AddEdge(ctx, g)
		if err != nil {
			t.Fatalf("AddEdge %s: %v", g.ID, err)
		}
		sameJSON(t, "AddEdge returned", out, g)
	}
	for _, tc := range []struct {
		entity string
		limit  int
		want   []string
	}{
		{"a", 100, []string{"g1", "g2", "g4"}}, // as source or target, a loop once
		{"b", 100, []string{"g1", "g3"}},
		{"", 100, []string{"g1", "g2", "g3", "g4"}},
		{"", 2, []string{"g1", "g2"}},
		{"ghost", 100, nil},
	} {
		got, err := s.Edges(ctx, tc.entity, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(edgeIDs(got), tc.want) {
			t.Errorf("Edges(%q, %d) = %v; want %v", tc.entity, tc.limit, edgeIDs(got), tc.want)
		}
	}
	got, _ := s.Edges(ctx, "b", 100)
	sameJSON(t, "edge read back", got[0],
		memory.KGEdge{ID: "g1", Source: "a", Target: "b", Relation: "depends_on", Data: memory.RawObject(`{"since":2024}`), CreatedAt: 1, Scope: s1})
	if b, _ := json.Marshal(got[1].Data); string(b) != "{}" {
		t.Fatalf("edge without data reads back data %s; want {}", b)
	}

	before := knowledgeState(t, s)
	_, err := s.AddEdge(ctx, memory.KGEdge{ID: "g-x", Source: "ghost", Target: "a", Relation: "r", CreatedAt: 1})
	wantCode(t, err, memory.CodeNotFound)
	_, err = s.AddEdge(ctx, memory.KGEdge{ID: "g-y", Source: "a", Target: "ghost", Relation: "r", CreatedAt: 1})
	wantCode(t, err, memory.CodeNotFound)
	_, err = s.AddEdge(ctx, memory.KGEdge{ID: "g1", Source: "b", Target: "c", Relation: "taken id", CreatedAt: 1})
	wantCode(t, err, memory.CodeConflict)
	wantCode(t, s.DeleteEdge(ctx, "ghost"), memory.CodeNotFound)
	if after := knowledgeState(t, s); after != before {
		t.Fatalf("refused edge writes changed the store:\nbefore %s\nafter  %s", before, after)
	}

	if err := s.DeleteEdge(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteEdge(ctx, "g1"), memory.CodeNotFound)
	if got, _ := s.Edges(ctx, "a", 100); !slices.Equal(edgeIDs(got), []string{"g2", "g4"}) {
		t.Fatalf("edges of a after delete: %v", edgeIDs(got))
	}
	// Deleting an edge leaves its entities.
	for _, id := range []string{"a", "b"} {
		if _, err := s.Entity(ctx, id); err != nil {
			t.Fatalf("entity %s after deleting an edge: %v", id, err)
		}
	}
}

func testDeleteEntityCascades(t *testing.T, s memory.Store) {
	putEntities(t, s, entity("a", "A", "node", s1), entity("b", "B", "node", s1), entity("c", "C", "node", s1))
	for _, o := range []memory.KGObservation{
		{ID: "ka", EntityID: "a", Content: "fact about a", CreatedAt: 1},
		{ID: "kb", EntityID: "b", Content: "fact about b", CreatedAt: 2},
	} {
		if _, err := s.AddKGObservation(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []memory.KGEdge{
		{ID: "ab", Source: "a", Target: "b", Relation: "r", CreatedAt: 1},
		{ID: "ca", Source: "c", Target: "a", Relation: "r", CreatedAt: 2},
		{ID: "bc", Source: "b", Target: "c", Relation: "r", CreatedAt: 3},
	} {
		if _, err := s.AddEdge(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	before := knowledgeState(t, s)
	wantCode(t, s.DeleteEntity(ctx, "ghost"), memory.CodeNotFound)
	if knowledgeState(t, s) != before {
		t.Fatal("deleting an unknown entity changed the store")
	}
	if err := s.DeleteEntity(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Entity(ctx, "a")
	wantCode(t, err, memory.CodeNotFound)
	wantCode(t, s.DeleteEntity(ctx, "a"), memory.CodeNotFound)
	if got, err := s.KGObservations(ctx, "a"); err != nil || len(got) != 0 {
		t.Fatalf("observations of a deleted entity: %v %v", kgObsIDs(got), err)
	}
	wantCode(t, s.DeleteKGObservation(ctx, "ka"), memory.CodeNotFound)
	if got, _ := s.Edges(ctx, "", 100); !slices.Equal(edgeIDs(got), []string{"bc"}) {
		t.Fatalf("edges after deleting a: %v; want [bc]", edgeIDs(got))
	}
	wantCode(t, s.DeleteEdge(ctx, "ab"), memory.CodeNotFound)
	if got, _ := s.KGObservations(ctx, "b"); !slices.Equal(kgObsIDs(got), []string{"kb"}) {
		t.Fatalf("observations of b after deleting a: %v", kgObsIDs(got))
	}
	if got, _ := s.Entities(ctx, "", memory.Scope{}, 100); !slices.Equal(entityIDs(got), []string{"b", "c"}) {
		t.Fatalf("entities after deleting a: %v", entityIDs(got))
	}
	// The id is free again.
	putEntities(t, s, entity("a", "A2", "node", s1))
	if got, _ := s.KGObservations(ctx, "a"); len(got) != 0 {
		t.Fatalf("a new entity with a deleted id inherited observations %v", kgObsIDs(got))
	}
}
