package retrieve_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// fakeStore returns fixed pins, summary and hits, records what it was
// asked, and counts snapshots.
type fakeStore struct {
	pins      []memory.PinnedTarget
	summary   *memory.Summary
	res       memory.TextResult
	asks      []memory.TextSearch
	pinQ      []memory.PinQuery
	snapshots int
}

func (f *fakeStore) SearchText(_ context.Context, q memory.TextSearch) (memory.TextResult, error) {
	f.asks = append(f.asks, q)
	return f.res, nil
}

func (f *fakeStore) ActivePins(_ context.Context, q memory.PinQuery) ([]memory.PinnedTarget, error) {
	f.pinQ = append(f.pinQ, q)
	return f.pins, nil
}

func (f *fakeStore) CurrentSummary(context.Context, memory.Scope) (*memory.Summary, error) {
	return f.summary, nil
}

func (f *fakeStore) Entities(context.Context, []memory.EntityRef) ([]memory.Entity, error) {
	return nil, nil
}

func (f *fakeStore) Records(context.Context, memory.VectorKind, []string) ([]memory.IndexRecord, error) {
	return nil, nil
}

func (f *fakeStore) LoadIndex(context.Context, memory.Space, func(memory.IndexRecord) error) (int64, error) {
	return 0, nil
}

func (f *fakeStore) ChangesSince(context.Context, memory.Space, int64, int) ([]memory.IndexRecord, int64, error) {
	return nil, 0, nil
}

func (f *fakeStore) ChangeRef(context.Context, int64) (string, error) { return "", nil }

func (f *fakeStore) LastChange(context.Context) (int64, error) { return 0, nil }

func (f *fakeStore) Snapshot(_ context.Context, fn func(memory.Reader) error) error {
	f.snapshots++
	return fn(f)
}

const day = 24 * 60 * 60 * 1000

func hitObs(id string, rank float64, ts int64) memory.TextHit {
	return memory.TextHit{Entity: memory.ObservationEntity(memory.Observation{ID: id, Content: id + " content", TS: ts}), Rank: rank}
}

func hitSum(id string, rank float64, ts int64) memory.TextHit {
	return memory.TextHit{Entity: memory.SummaryEntity(memory.Summary{ID: id, Content: id + " summary", CreatedAt: ts}), Rank: rank}
}

func TestLocalFTSScoring(t *testing.T) {
	now := int64(100 * day)
	f := &fakeStore{res: memory.TextResult{
		Observations: []memory.TextHit{hitObs("best", -5, now), hitObs("mid", -3, now-15*day), hitObs("old", -1, now-40*day)},
		Summaries:    []memory.TextHit{hitSum("sum", -4, now+3*day)}, // dated in the future
	}}
	ranking, err := retrieve.LocalFTS{}.Search(context.Background(), f, retrieve.SearchOptions{
		Query: memory.TextQuery{Terms: []string{"x"}}, MaxResults: 3, Exclude: []string{"pinned"}, Now: now,
		Scope: memory.Scope{RepoID: "r"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := ranking.Candidates
	if ranking.Scoring.Params["minRank"] != -5 || ranking.Scoring.Params["maxRank"] != -1 || ranking.Scoring.Params["lexicalWeight"] != 0.7 || ranking.Scoring.Formula == "" {
		t.Fatalf("scoring %+v", ranking.Scoring)
	}
	ask := f.asks[0]
	if ask.Limit != 3 || !slices.Equal(ask.Exclude, []string{"pinned"}) || ask.Scope.RepoID != "r" {
		t.Fatalf("provider asked %+v", ask)
	}
	// bm25Norm over ranks [-5, -1]: best 1, sum 0.75, mid 0.5, old 0.
	want := map[string]float64{
		"best": 0.7*1 + 0.3*1,
		"sum":  0.7*0.75 + 0.3*1, // dated 3 days after now: counted as now, recency 1
		"mid":  0.7*0.5 + 0.3*0.5,
		"old":  0,
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.Entity.ID())
		if math.Abs(c.Score-want[c.Entity.ID()]) > 1e-9 {
			t.Errorf("%s score %.10f; want %.10f", c.Entity.ID(), c.Score, want[c.Entity.ID()])
		}
		if c.EntityType != c.Entity.Type() || c.MatchContext != c.Entity.Content() {
			t.Errorf("%s: type %s context %q", c.Entity.ID(), c.EntityType, c.MatchContext)
		}
		norm, ok1 := c.Explanation.Child("bm25Norm")
		rec, ok2 := c.Explanation.Child("recency")
		if !ok1 || !ok2 || math.Abs(retrieve.Round10(0.7*norm.Value+0.3*rec.Value)-c.Score) > 1e-9 && c.Score != 1 {
			t.Errorf("%s: explanation %+v does not add up to %v", c.Entity.ID(), c.Explanation, c.Score)
		}
	}
	if !slices.Equal(ids, []string{"best", "sum", "mid"}) {
		t.Fatalf("order %v; want best, sum, mid (cut to 3)", ids)
	}
}

func TestLocalFTSClampAndSingleHit(t *testing.T) {
	now := int64(10 * day)
	f := &fakeStore{res: memory.TextResult{Observations: []memory.TextHit{hitObs("future", -2, now+30*day)}}}
	r, _ := retrieve.LocalFTS{}.Search(context.Background(), f, retrieve.SearchOptions{MaxResults: 10, Now: now})
	got := r.Candidates
	// One hit: bm25Norm 0.5; a record dated after now counts as now,
	// recency 1: 0.35 + 0.3 = 0.65.
	if len(got) != 1 || math.Abs(got[0].Score-0.65) > 1e-12 {
		t.Fatalf("single future hit: %+v", got)
	}
	// A record dated far in the future does not outrank one that matches
	// the query better: both count as now, and bm25 decides.
	f.res.Observations = []memory.TextHit{hitObs("far-future", -1, math.MaxInt64), hitObs("relevant", -3, now)}
	r, _ = retrieve.LocalFTS{}.Search(context.Background(), f, retrieve.SearchOptions{MaxResults: 10, Now: now})
	got = r.Candidates
	if len(got) != 2 || got[0].Entity.ID() != "relevant" || got[0].Score != 1 || math.Abs(got[1].Score-0.3) > 1e-12 {
		t.Fatalf("a record dated in the future outranks the relevant one: %+v", got)
	}
	if rec, ok := got[1].Explanation.Child("recency"); !ok || rec.Value != 1 || !strings.Contains(rec.Detail, "counted as now") {
		t.Fatalf("the future record's recency: %+v", rec)
	}
	r, _ = retrieve.LocalFTS{}.Search(context.Background(), f, retrieve.SearchOptions{MaxResults: 0, Now: now})
	got = r.Candidates
	if len(got) != 0 || got == nil {
		t.Fatalf("MaxResults 0: %v", got)
	}
}

func TestSortCandidatesTieRule(t *testing.T) {
	c := func(id string, s float64) retrieve.Candidate {
		return retrieve.Candidate{Entity: memory.ObservationEntity(memory.Observation{ID: id}), Score: s}
	}
	list := []retrieve.Candidate{c("b", 0.5), c("c", 0.9), c("a", 0.5), c("d", 0.1)}
	retrieve.SortCandidates(list)
	var ids []string
	for _, x := range list {
		ids = append(ids, x.Entity.ID())
	}
	if !slices.Equal(ids, []string{"c", "a", "b", "d"}) {
		t.Fatalf("sorted %v; want score desc, then id asc", ids)
	}
}
