package storetest

import (
	"slices"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// testCapsuleLister: a session's open capsule, capsules by scope and
// status newest first, and the known values of a scope dimension.
func testCapsuleLister(t *testing.T, s memory.Store) {
	_, err := s.OpenCapsuleOf(ctx, "s1")
	wantCode(t, err, memory.CodeNotFound)
	shop := memory.Scope{SessionID: "s1", RepoID: "/src/shop"}
	if _, err := s.OpenCapsule(ctx, memory.Capsule{ID: "a", Type: "session", OpenedAt: 100, Scope: shop}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendObservations(ctx, []memory.NewObservation{{Observation: memory.Observation{ID: "o1", Kind: memory.KindCommand,
		Content: "go test", Provenance: []byte("{}"), TS: 110, Scope: shop}}}); err != nil {
		t.Fatal(err)
	}
	c, err := s.OpenCapsuleOf(ctx, "s1")
	if err != nil || c.ID != "a" || !slices.Equal(c.ObservationIDs, []string{"o1"}) {
		t.Fatalf("open capsule of s1: %+v %v", c, err)
	}
	if _, err := s.CloseCapsule(ctx, "a", 200, &memory.Summary{ID: "sa", Content: "done", Confidence: 1, CreatedAt: 200, EvidenceRefs: []string{}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.OpenCapsuleOf(ctx, "s1")
	wantCode(t, err, memory.CodeNotFound)
	for _, c := range []memory.Capsule{
		{ID: "b", Type: "session", OpenedAt: 300, Scope: memory.Scope{SessionID: "s2", RepoID: "/src/shop"}},
		{ID: "c", Type: "session", OpenedAt: 150, Scope: memory.Scope{SessionID: "s3", RepoID: "/src/other"}},
	} {
		if _, err := s.OpenCapsule(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(cs []memory.Capsule) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	all, err := s.Capsules(ctx, memory.CapsuleQuery{})
	if err != nil || !slices.Equal(ids(all), []string{"b", "a", "c"}) {
		t.Fatalf("all capsules (closed by closedAt, open by openedAt, newest first): %v %v", ids(all), err)
	}
	closed, _ := s.Capsules(ctx, memory.CapsuleQuery{Scope: memory.Scope{RepoID: "/src/shop"}, Status: memory.CapsuleClosed})
	if len(closed) != 1 || closed[0].SummaryID != "sa" || len(closed[0].ObservationIDs) != 1 {
		t.Fatalf("closed in /src/shop: %+v", closed)
	}
	if one, _ := s.Capsules(ctx, memory.CapsuleQuery{Limit: 1}); len(one) != 1 {
		t.Fatalf("limit 1: %v", ids(one))
	}
	repos, err := s.CompleteScope(ctx, "repoId", "/src/", 10)
	if err != nil || !slices.Equal(repos, []string{"/src/other", "/src/shop"}) {
		t.Fatalf("repo values: %v %v", repos, err)
	}
	if v, _ := s.CompleteScope(ctx, "repoId", "/src/s", 10); !slices.Equal(v, []string{"/src/shop"}) {
		t.Fatalf("prefix /src/s: %v", v)
	}
	if v, _ := s.CompleteScope(ctx, "sessionId", "", 2); len(v) != 2 {
		t.Fatalf("limit 2: %v", v)
	}
	if v, _ := s.CompleteScope(ctx, "repoId", "%", 10); len(v) != 0 {
		t.Fatalf("%% is no wildcard: %v", v)
	}
	_, err = s.CompleteScope(ctx, "team", "", 10)
	wantCode(t, err, memory.CodeInvalidParams)
}
