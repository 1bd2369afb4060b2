package retrieve

import (
	"context"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Provider ranks candidate records for a query. Implementations must
// respect the scope, leave out excluded ids and redacted observations, score
// in [0, 1], explain every score, and be deterministic: the same inputs give
// the same candidates in the same order (score descending, then id
// ascending; see SortCandidates).
type Provider interface {
	// Name identifies the provider in provenance ("local-fts").
	Name() string
	// Search returns at most opts.MaxResults candidates, best first, and
	// how they were scored, reading the store through r (one snapshot).
	Search(ctx context.Context, r memory.Reader, opts SearchOptions) (Ranking, error)
}

// Ranking is a provider's answer: the candidates, best first, and the
// scoring that ranked them.
type Ranking struct {
	Candidates []Candidate
	Scoring    Scoring
	// Degraded, when set, is why the ranking lacks a signal it normally
	// has: a typed error (embedder_unavailable) whose cause is for logs.
	// The ranking is still a valid answer from the signals that remain.
	Degraded error
}

// Scoring says once, for all candidates, how scores were computed: the
// formula and the values it shares across candidates. Each candidate's
// explanation holds its own component values.
type Scoring struct {
	Formula string `json:"formula"`
	// Params are the values every score shares (weights, normalisation
	// bounds), by name.
	Params map[string]float64 `json:"params,omitempty"`
}

// SearchOptions is what a provider is asked.
type SearchOptions struct {
	Query memory.TextQuery
	// Text is the query as the caller wrote it.
	Text            string
	Scope           memory.Scope
	MaxResults      int
	Exclude         []string
	IncludeRedacted bool
	// Now is the request's clock reading, in Unix milliseconds.
	Now int64
}

// Candidate is one ranked record.
type Candidate struct {
	EntityType memory.TargetType `json:"entityType"`
	Entity     memory.Entity     `json:"entity"`
	// Score is in [0, 1], rounded to 10 decimal places so that equal scores
	// compare equal on every platform.
	Score float64 `json:"score"`
	// MatchContext is the start of the record's text (at most 100 UTF-16
	// code units, then "...").
	MatchContext string `json:"matchContext"`
	// Explanation says how Score was computed.
	Explanation memory.Explanation `json:"explanation"`
}

// SortCandidates orders candidates by the documented tie rule: score
// descending, then entity id ascending.
func SortCandidates(c []Candidate) {
	slices.SortStableFunc(c, func(a, b Candidate) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.Entity.ID(), b.Entity.ID())
	})
}
