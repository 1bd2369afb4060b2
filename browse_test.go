package cairn_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// A capsule's observations come page by page, in order, with the
// capsule's summary; bad bounds are invalid_params.
func TestCapsulePage(t *testing.T) {
	eng := openSample(t, nil)
	all, err := eng.Capsule(ctx, "cap_s1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for off := 0; off < len(all.ObservationIDs); off += 5 {
		v, err := eng.CapsulePage(ctx, "cap_s1", off, 5)
		if err != nil {
			t.Fatal(err)
		}
		if v.Total != len(all.ObservationIDs) || v.Offset != off || v.Summary == nil || v.Summary.ID != "sum_s1" {
			t.Fatalf("page at %d: %+v", off, v)
		}
		for _, o := range v.Observations {
			got = append(got, o.ID)
		}
	}
	if !slices.Equal(got, all.ObservationIDs) {
		t.Fatalf("pages hold %v; want %v", got, all.ObservationIDs)
	}
	if v, err := eng.CapsulePage(ctx, "cap_s1", 1000, 5); err != nil || len(v.Observations) != 0 {
		t.Fatalf("past the end: %+v %v", v, err)
	}
	for _, bad := range []struct {
		id       string
		off, lim int
		code     memory.Code
	}{{"cap_s1", -1, 5, memory.CodeInvalidParams}, {"cap_s1", 0, 5000, memory.CodeInvalidParams}, {"", 0, 5, memory.CodeInvalidParams}, {"cap_nope", 0, 5, memory.CodeNotFound}} {
		if _, err := eng.CapsulePage(ctx, bad.id, bad.off, bad.lim); memory.CodeOf(err) != bad.code {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	pl, err := eng.Placement(ctx, all.ObservationIDs[3])
	if err != nil || pl.CapsuleID != "cap_s1" || pl.Position != 3 {
		t.Fatalf("placement %+v %v", pl, err)
	}
}

// Pins lists the pins in force, in a scope or on one record.
func TestPinsListing(t *testing.T) {
	eng := openSample(t, nil)
	p, err := eng.Pin(ctx, cairn.PinRequest{TargetID: "obs_s1_04", Reason: "the failing test"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := eng.Pins(ctx, cairn.PinsRequest{})
	if err != nil || len(all) != 2 {
		t.Fatalf("all pins: %d %v", len(all), err)
	}
	on, err := eng.Pins(ctx, cairn.PinsRequest{TargetID: "obs_s1_04"})
	if err != nil || len(on) != 1 || on[0].Pin.ID != p.ID {
		t.Fatalf("pins on obs_s1_04: %+v %v", on, err)
	}
	// The sample's pin is scoped to the repository only: a session filter
	// leaves it out.
	s1, err := eng.Pins(ctx, cairn.PinsRequest{ScopeIDs: memory.Scope{SessionID: "s1"}})
	if err != nil || len(s1) != 1 || s1[0].Pin.ID != p.ID {
		t.Fatalf("pins of s1: %+v %v", s1, err)
	}
	if _, err := eng.Pins(ctx, cairn.PinsRequest{TargetID: " x"}); !memory.IsCode(err, memory.CodeInvalidParams) {
		t.Errorf("bad target id: %v", err)
	}
}

// The neighbourhood walk reaches entities by distance, keeps the edges
// between the entities it reached, and stops at the node cap.
func TestNeighbourhood(t *testing.T) {
	eng := openSample(t, nil)
	ids := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		e, err := eng.CreateEntity(ctx, cairn.EntityRequest{Name: n, Type: "thing"})
		if err != nil {
			t.Fatal(err)
		}
		ids[n] = e.ID
	}
	// a - b - c - d, b - e, c - e: a chain with a triangle b, c, e.
	for _, e := range [][2]string{{"a", "b"}, {"b", "c"}, {"c", "d"}, {"b", "e"}, {"c", "e"}} {
		if _, err := eng.CreateEdge(ctx, cairn.EdgeRequest{Source: ids[e[0]], Target: ids[e[1]], Relation: "links"}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(n cairn.Neighbourhood) string {
		var s []string
		for _, e := range n.Nodes {
			s = append(s, fmt.Sprintf("%s%d", e.Name, n.Depth[e.ID]))
		}
		return fmt.Sprint(s, len(n.Edges), n.Truncated)
	}
	for _, tc := range []struct {
		depth, max int
		want       string
	}{
		{1, 40, "[a0 b1] 1 false"},
		{2, 40, "[a0 b1 c2 e2] 4 false"},
		{3, 40, "[a0 b1 c2 e2 d3] 5 false"},
		{3, 3, "[a0 b1 c2] 2 true"},
	} {
		n, err := eng.Neighbourhood(ctx, ids["a"], tc.depth, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(n); got != tc.want {
			t.Errorf("depth %d max %d: %s; want %s", tc.depth, tc.max, got, tc.want)
		}
	}
	for _, bad := range [][2]int{{0, 10}, {4, 10}, {1, 1}, {1, 201}} {
		if _, err := eng.Neighbourhood(ctx, ids["a"], bad[0], bad[1]); !memory.IsCode(err, memory.CodeInvalidParams) {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if _, err := eng.Neighbourhood(ctx, "ent_nope", 1, 10); !memory.IsCode(err, memory.CodeNotFound) {
		t.Errorf("unknown entity: %v", err)
	}
}

// Browsing requests are checked before the store is asked.
func TestBrowseRequests(t *testing.T) {
	eng := openSample(t, nil)
	page, err := eng.Capsules(ctx, cairn.CapsulesRequest{Status: "closed"})
	if err != nil || len(page.Capsules) != 1 || page.Capsules[0].ID != "cap_s1" || page.Capsules[0].Observations != 12 {
		t.Fatalf("closed capsules: %+v %v", page, err)
	}
	for name, err := range map[string]error{
		"limit": func() error { _, err := eng.Capsules(ctx, cairn.CapsulesRequest{Limit: 1001}); return err }(),
		"scope": func() error {
			_, err := eng.Capsules(ctx, cairn.CapsulesRequest{ScopeIDs: memory.Scope{RepoID: " x"}})
			return err
		}(),
		"cursor": func() error { _, err := eng.BrowseThoughts(ctx, cairn.ThoughtBrowseRequest{After: "zz"}); return err }(),
		"origin": func() error {
			_, err := eng.BrowseThoughts(ctx, cairn.ThoughtBrowseRequest{Origin: "alien"})
			return err
		}(),
		"status": func() error {
			_, err := eng.BrowseThoughts(ctx, cairn.ThoughtBrowseRequest{Status: "gone"})
			return err
		}(),
		"entity":  func() error { _, err := eng.BrowseEntities(ctx, cairn.EntityBrowseRequest{After: "e%%"}); return err }(),
		"session": func() error { _, err := eng.SessionEpisodes(ctx, ""); return err }(),
	} {
		if !memory.IsCode(err, memory.CodeInvalidParams) {
			t.Errorf("%s: %v", name, err)
		}
	}
	v, err := eng.ScopeValues(ctx)
	if err != nil || !slices.Contains(v.Repos, "github.com/acme/shop") || !slices.Contains(v.Sessions, "s1") {
		t.Fatalf("scope values %+v %v", v, err)
	}
}

// A repository's code entities come a page at a time by key, each once,
// with the count on every page; a bad state, cursor or repository changes
// nothing and says so.
func TestBrowseCodeEntities(t *testing.T) {
	eng := openSample(t, nil)
	if _, err := eng.BrowseCodeEntities(ctx, cairn.CodeEntityBrowseRequest{}); !memory.IsCode(err, memory.CodeNotFound) {
		t.Fatalf("no repository indexed: %v", err)
	}
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.go": "package p\n\nfunc Alpha() {}\n\nfunc Beta() {}\n",
		"b.go": "package p\n\nfunc Gamma() {}\n\nfunc delta() {}\n\nfunc Epsilon() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.IndexCode(ctx, cairn.CodeIndexRequest{Root: dir, RepoID: "p"}, nil); err != nil {
		t.Fatal(err)
	}
	all, err := eng.CodeEntities(ctx, cairn.CodeEntitiesRequest{RepoID: "p"})
	if err != nil || all.Total < 5 {
		t.Fatalf("entities: %+v %v", all, err)
	}
	var want []string
	for _, e := range all.Entities {
		want = append(want, e.Key)
	}
	slices.Sort(want)
	var got []string
	req := cairn.CodeEntityBrowseRequest{Limit: 2} // the only repository
	for pages := 1; ; pages++ {
		p, err := eng.BrowseCodeEntities(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if p.RepoID != "p" || p.Total != all.Total {
			t.Fatalf("page %d: repo %q, total %d; want p, %d", pages, p.RepoID, p.Total, all.Total)
		}
		for _, e := range p.Entities {
			got = append(got, e.Key)
		}
		if p.Next == "" {
			if want := (all.Total + 1) / 2; pages != want {
				t.Errorf("%d pages; want %d", pages, want)
			}
			break
		}
		req.After = p.Next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged %v; want %v", got, want)
	}
	p, err := eng.BrowseCodeEntities(ctx, cairn.CodeEntityBrowseRequest{RepoID: "p", Path: "b.go"})
	if err != nil || p.Total != len(p.Entities) || p.Next != "" || len(p.Entities) == 0 {
		t.Fatalf("b.go: %+v %v", p, err)
	}
	for _, e := range p.Entities {
		if e.Path != "b.go" {
			t.Errorf("b.go lists %s", e.Key)
		}
	}
	for name, tc := range map[string]struct {
		req  cairn.CodeEntityBrowseRequest
		code memory.Code
	}{
		"state":   {cairn.CodeEntityBrowseRequest{State: "LIVE"}, memory.CodeInvalidParams},
		"cursor":  {cairn.CodeEntityBrowseRequest{After: "not-a-cursor"}, memory.CodeInvalidParams},
		"limit":   {cairn.CodeEntityBrowseRequest{Limit: 1001}, memory.CodeInvalidParams},
		"path":    {cairn.CodeEntityBrowseRequest{Path: "a\x00.go"}, memory.CodeInvalidParams},
		"repo id": {cairn.CodeEntityBrowseRequest{RepoID: " p"}, memory.CodeInvalidParams},
		"unknown": {cairn.CodeEntityBrowseRequest{RepoID: "q"}, memory.CodeNotFound},
	} {
		if _, err := eng.BrowseCodeEntities(ctx, tc.req); !memory.IsCode(err, tc.code) {
			t.Errorf("%s: %v; want %s", name, err, tc.code)
		}
	}
}
