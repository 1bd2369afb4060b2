package retrieve

import (
	"context"
	"fmt"
	"math"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/memory"
)

// LocalFTSName is the local-fts provider's name in provenance.
const LocalFTSName = "local-fts"

// The local-fts scoring constants of the retrieval contract.
const (
	// LexicalWeight weighs the normalised bm25 relevance.
	LexicalWeight = 0.7
	// RecencyWeight weighs recency.
	RecencyWeight = 0.3
	// RecencyWindowMillis is the age at which recency reaches 0: 30 days.
	RecencyWindowMillis = 30 * 24 * 60 * 60 * 1000
)

// LocalFTS is the contract's default provider: FTS5 bm25 over observations
// and summaries, blended with recency:
//
//	score    = clamp01(0.7 × bm25Norm + 0.3 × recency)
//	bm25Norm = (maxRank − rank) / (maxRank − minRank), or 0.5 when all ranks are equal
//	recency  = max(0, 1 − age / 30 days)
//
// rank is FTS5's bm25 (negative, lower is better) over the whole index; min
// and max are taken over the rows fetched, which are the best MaxResults
// observations and the best MaxResults summaries after scope, redaction and
// exclusion filters. The merged list is sorted by score (ties by id) and cut
// to MaxResults. A record dated after now has recency above 1; the clamp
// keeps its score at most 1.
type LocalFTS struct{}

// Name implements Provider.
func (LocalFTS) Name() string { return LocalFTSName }

// Search implements Provider.
func (LocalFTS) Search(ctx context.Context, src memory.Reader, opts SearchOptions) (Ranking, error) {
	r := Ranking{Candidates: []Candidate{}, Scoring: Scoring{Formula: localFTSFormula,
		Params: map[string]float64{"lexicalWeight": LexicalWeight, "recencyWeight": RecencyWeight, "recencyWindowDays": 30}}}
	if opts.MaxResults <= 0 {
		return r, nil
	}
	res, err := src.SearchText(ctx, memory.TextSearch{
		Query: opts.Query, Scope: opts.Scope, Exclude: opts.Exclude, Limit: opts.MaxResults,
	})
	if err != nil {
		return Ranking{}, err
	}
	hits := append(res.Observations, res.Summaries...)
	if len(hits) == 0 {
		return r, nil
	}
	minRank, maxRank := hits[0].Rank, hits[0].Rank
	for _, h := range hits[1:] {
		minRank = min(minRank, h.Rank)
		maxRank = max(maxRank, h.Rank)
	}
	r.Scoring.Params["minRank"], r.Scoring.Params["maxRank"] = minRank, maxRank
	r.Scoring.Params["fetched"] = float64(len(hits))
	out := make([]Candidate, len(hits))
	for i, h := range hits {
		norm := 0.5
		if maxRank != minRank {
			norm = (maxRank - h.Rank) / (maxRank - minRank)
		}
		rec, recDetail := Recency(h.Entity.Time(), opts.Now)
		score := Round10(clamp01(LexicalWeight*norm + RecencyWeight*rec))
		out[i] = Candidate{
			EntityType:   h.Entity.Type(),
			Entity:       h.Entity,
			Score:        score,
			MatchContext: content.MatchContext(h.Entity.Content()),
			Explanation: memory.Explanation{
				Name: "score", Value: score,
				Children: []memory.Explanation{
					{Name: "bm25", Value: h.Rank},
					{Name: "bm25Norm", Value: norm},
					{Name: "recency", Value: rec, Detail: recDetail},
				},
			},
		}
	}
	SortCandidates(out)
	if len(out) > opts.MaxResults {
		out = out[:opts.MaxResults]
	}
	r.Candidates = out
	return r, nil
}

// localFTSFormula is the local-fts scoring, stated once per result.
const localFTSFormula = "score = clamp01(lexicalWeight × bm25Norm + recencyWeight × recency); " +
	"bm25 is FTS5's rank over the whole index (negative, lower is better); " +
	"bm25Norm = (maxRank − bm25) / (maxRank − minRank) over the fetched rows, or 0.5 when they all rank the same; " +
	"recency = min(1, max(0, 1 − age / recencyWindowDays))"

// Recency is min(1, max(0, 1 − age / 30 days)) for a record dated t (Unix
// ms) read at now, with a sentence saying so. A record dated after now
// counts as written now: a timestamp in the future earns no more than the
// newest record, as in hybrid.
func Recency(t, now int64) (float64, string) {
	age := float64(now) - float64(t) // in float: t may be near either end of int64
	if age < 0 {
		return 1, fmt.Sprintf("dated %.2f days after now: counted as now", -age/(24*60*60*1000))
	}
	rec := math.Max(0, 1-age/RecencyWindowMillis)
	return rec, fmt.Sprintf("age %.2f days", age/(24*60*60*1000))
}

func clamp01(x float64) float64 { return math.Min(1, math.Max(0, x)) }

// Round10 rounds to 10 decimal places.
func Round10(x float64) float64 { return math.Round(x*1e10) / 1e10 }
