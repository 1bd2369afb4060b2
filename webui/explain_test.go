package webui

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/uiseed"
	"github.com/cairnhq/cairn/memory"
)

// The breakdown a candidate shows adds up to its score, for both
// providers, with and without cues, and says which signal is which.
func TestExplanationAddsUpToTheScore(t *testing.T) {
	dir := t.TempDir()
	eng, err := cairn.Open(filepath.Join(dir, "cairn.db"), uiseed.Options(filepath.Join(dir, "archive")))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := uiseed.Seed(context.Background(), eng, filepath.Join(dir, "repo")); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, q := range []cairn.RetrieveRequest{
		{Query: "why does checkout say session expired?"},
		{Query: "when did we decide webhooks must be idempotent", ScopeIDs: memory.Scope{RepoID: "github.com/acme/shop"}},
		{Query: "user: clock skew in March 2026"},
		{Query: "clock skew leeway", Provider: "local-fts"},
	} {
		res, err := eng.Retrieve(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Candidates) == 0 {
			t.Fatalf("%q: no candidates", q.Query)
		}
		for _, c := range res.Candidates {
			parts, other, sum := explain(c.Explanation, res.Provenance.Scoring.Params)
			if math.Abs(sum-c.Score) > 1e-6 {
				t.Errorf("%q %s: parts add up to %.10f; score %.10f (%+v)", q.Query, c.Entity.ID(), sum, c.Score, c.Explanation)
			}
			for _, p := range parts {
				if p.Weight <= 0 || p.Label == p.Name {
					t.Errorf("%q: part %+v has no weight or label", q.Query, p)
				}
			}
			if len(other) != 1 || other[0].Name != "bm25" {
				t.Errorf("%q: other values %+v; want the raw bm25", q.Query, other)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("only %d candidates checked", checked)
	}
}

// A degraded explanation leaves meaning out of the sum and says so.
func TestExplanationDegraded(t *testing.T) {
	ex := memory.Explanation{Name: "score", Value: 0.5, Degraded: memory.CodeEmbedderUnavailable, Children: []memory.Explanation{
		{Name: "bm25", Value: 3}, {Name: "lexical", Value: 1}, {Name: "semantic", Value: 0, Detail: "not computed"}, {Name: "recency", Value: 0},
	}}
	parts, other, sum := explain(ex, map[string]float64{"lexicalWeight": 0.5, "semanticWeight": 0.3, "recencyWeight": 0.5})
	if math.Abs(sum-0.5) > 1e-9 || len(parts) != 2 || len(other) != 2 {
		t.Fatalf("sum %v parts %+v other %+v", sum, parts, other)
	}
}

func TestHighlight(t *testing.T) {
	segs := highlight("Checkout fails: session expired, sessions EXPIRE <b>", []string{"session", "expir", "x"})
	var hits []string
	for _, s := range segs {
		if s.Hit {
			hits = append(hits, s.Text)
		}
	}
	joined := ""
	for _, s := range segs {
		joined += s.Text
	}
	if joined != "Checkout fails: session expired, sessions EXPIRE <b>" {
		t.Fatalf("segments lose text: %q", joined)
	}
	if len(hits) != 4 || hits[0] != "session" || hits[3] != "EXPIRE" {
		t.Fatalf("hits %q", hits)
	}
}
