package retrieve

import (
	"context"
	"strings"
	"time"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/memory"
)

// Defaults and bounds of a tiered retrieval request.
const (
	// DefaultMaxCandidates is the contract's default candidate cap.
	DefaultMaxCandidates = 50
	// MaxCandidatesLimit is the largest maxCandidates accepted.
	MaxCandidatesLimit = 1000
	// MaxTokenBudget is the largest tokenBudget accepted.
	MaxTokenBudget = 10_000_000
)

// Request is a tiered retrieval request, as the contract names its fields.
type Request struct {
	// Query is user text by default; see Syntax.
	Query string `json:"query" jsonschema:"what to remember, in plain words (or FTS5 syntax when syntax is fts)"`
	// ScopeIDs restricts every tier (AND over the dimensions given).
	ScopeIDs memory.Scope `json:"scopeIds,omitzero" jsonschema:"restricts every tier: each key given (sessionId, repoId, agentId, userId) must match exactly"`
	// TokenBudget, when set, cuts candidates so that pins, the current
	// summary and the candidates kept fit in it (pins and the summary are
	// never cut). Between 1 and MaxTokenBudget.
	TokenBudget *int `json:"tokenBudget,omitempty" jsonschema:"optional budget in tokens (ceil(chars/4)) for everything returned; pins and the current summary are never cut"`
	// MaxCandidates caps the candidates (default DefaultMaxCandidates,
	// between 0 and MaxCandidatesLimit).
	MaxCandidates *int `json:"maxCandidates,omitempty" jsonschema:"most candidates to return, 0 to 1000; default 50"`
	// IncludeRedacted returns pins whose target was forgotten (its content
	// reads "[redacted]"). Forgotten observations are never candidates: their
	// text is gone from the index.
	IncludeRedacted bool `json:"includeRedacted,omitempty" jsonschema:"also return pins whose target was forgotten (content [redacted])"`
	// Syntax is "text" (default: any string, words OR'ed) or "fts" (FTS5
	// query syntax; a malformed query is invalid_params).
	Syntax memory.Syntax `json:"syntax,omitempty" jsonschema:"text (default: any string, words OR'ed) or fts (FTS5 query syntax)"`
	// Provider names the ranking provider: hybrid (the default: BM25 with
	// neighbour and capsule context, semantic similarity and recency) or
	// local-fts (the contract's FTS5 bm25 and recency; the one fts syntax
	// uses).
	Provider string `json:"provider,omitempty" jsonschema:"ranking provider: hybrid (default) or local-fts (FTS5 bm25 + recency; used for fts syntax)"`
}

// Result is the contract's three tiers and their provenance.
type Result struct {
	Pins           []memory.PinnedTarget `json:"pins"`
	CurrentSummary *memory.Summary       `json:"currentSummary"`
	Candidates     []Candidate           `json:"candidates"`
	Provenance     Provenance            `json:"provenance"`
}

// Provenance explains how a result was produced. The first six fields are
// the contract's; the rest are cairn's additions.
type Provenance struct {
	Query                     string       `json:"query"`
	ScopeIDs                  memory.Scope `json:"scopeIds"`
	TotalCandidates           int          `json:"totalCandidates"`
	ReturnedCandidates        int          `json:"returnedCandidates"`
	TruncatedDueToTokenBudget bool         `json:"truncatedDueToTokenBudget"`
	ProviderUsed              string       `json:"providerUsed"`

	// Syntax is how the query was read.
	Syntax memory.Syntax `json:"syntax"`
	// SearchTerms are the words searched for (text syntax).
	SearchTerms []string `json:"searchTerms,omitempty"`
	// MaxCandidates is the cap applied.
	MaxCandidates int `json:"maxCandidates"`
	// TokenBudget is the budget applied, if any, and TokensUsed the
	// estimated tokens of everything returned.
	TokenBudget *int `json:"tokenBudget,omitempty" jsonschema:"optional budget in tokens (ceil(chars/4)) for everything returned; pins and the current summary are never cut"`
	TokensUsed  int  `json:"tokensUsed"`
	// Now is the clock reading the request used (Unix ms): pin expiry and
	// recency are computed against it.
	Now int64 `json:"now"`
	// Scoring states how the candidates' scores were computed; each
	// candidate's explanation holds its own components.
	Scoring Scoring `json:"scoring"`
	// Degraded, when set, says the answer was computed without a signal
	// the provider normally uses, and why, as an error code:
	// embedder_unavailable when the hybrid provider could not embed the
	// query and ranked by words and recency alone. Each candidate's
	// explanation says the same. Empty (and left out) for a full answer.
	Degraded memory.Code `json:"degraded,omitempty"`
}

// Retriever implements the tiered retrieval contract over a store and a
// Provider. Each retrieval reads one snapshot of the store, so its tiers
// agree with each other even while others write.
type Retriever struct {
	Store memory.Snapshotter
	// Provider ranks candidates when a request names none; Providers are
	// the others a request may name.
	Provider  Provider
	Providers []Provider
	// Now is the clock (default time.Now).
	Now func() time.Time
	// EstimateTokens estimates a text's tokens (default
	// content.EstimateTokens: ceil(chars / 4)).
	EstimateTokens func(string) int
	// DefaultMaxCandidates applies when a request sets none (default
	// DefaultMaxCandidates).
	DefaultMaxCandidates int
	// OnDegraded, when set, is called with the reason of every degraded
	// answer (Provenance.Degraded), for counting and logging.
	OnDegraded func(reason error)
}

// Validate checks a request's bounds and returns its parsed query.
func (r Request) Validate() (memory.TextQuery, error) {
	if r.MaxCandidates != nil && (*r.MaxCandidates < 0 || *r.MaxCandidates > MaxCandidatesLimit) {
		return memory.TextQuery{}, memory.Errorf(memory.CodeInvalidParams, "maxCandidates %d is out of range [0, %d]", *r.MaxCandidates, MaxCandidatesLimit)
	}
	if r.TokenBudget != nil && (*r.TokenBudget < 1 || *r.TokenBudget > MaxTokenBudget) {
		return memory.TextQuery{}, memory.Errorf(memory.CodeInvalidParams, "tokenBudget %d is out of range [1, %d]", *r.TokenBudget, MaxTokenBudget)
	}
	if err := r.ScopeIDs.Validate(); err != nil {
		return memory.TextQuery{}, err
	}
	return ParseQuery(r.Query, r.Syntax)
}

// Retrieve runs the tiered retrieval: active pins in scope (newest first),
// the summary of the session's open capsule, then the provider's candidates
// with pinned targets and the current summary excluded, cut to the token
// budget. Invalid requests are invalid_params errors and read nothing.
func (rt *Retriever) Retrieve(ctx context.Context, req Request) (Result, error) {
	tq, err := req.Validate()
	if err != nil {
		return Result{}, err
	}
	provider, err := rt.provider(req.Provider, tq.Syntax)
	if err != nil {
		return Result{}, err
	}
	now := time.Now
	if rt.Now != nil {
		now = rt.Now
	}
	nowMs := now().UnixMilli()
	maxC := rt.DefaultMaxCandidates
	if maxC <= 0 {
		maxC = DefaultMaxCandidates
	}
	if req.MaxCandidates != nil {
		maxC = *req.MaxCandidates
	}

	var pins []memory.PinnedTarget
	var summary *memory.Summary
	var ranking Ranking
	err = rt.Store.Snapshot(ctx, func(r memory.Reader) error {
		var err error
		if pins, err = r.ActivePins(ctx, memory.PinQuery{Scope: req.ScopeIDs, Now: nowMs, IncludeRedacted: req.IncludeRedacted}); err != nil {
			return err
		}
		if summary, err = r.CurrentSummary(ctx, req.ScopeIDs); err != nil {
			return err
		}
		var exclude []string
		for _, p := range pins {
			exclude = append(exclude, p.Target.ID())
		}
		if summary != nil {
			exclude = append(exclude, summary.ID)
		}
		ranking, err = provider.Search(ctx, r, SearchOptions{
			Query: tq, Text: req.Query, Scope: req.ScopeIDs, MaxResults: maxC, Exclude: exclude,
			IncludeRedacted: req.IncludeRedacted, Now: nowMs,
		})
		return err
	})
	if err != nil {
		return Result{}, err
	}
	if pins == nil {
		pins = []memory.PinnedTarget{}
	}
	res := Result{
		Pins:           pins,
		CurrentSummary: summary,
		Candidates:     ranking.Candidates,
		Provenance: Provenance{
			Query: req.Query, ScopeIDs: req.ScopeIDs,
			TotalCandidates: len(ranking.Candidates), ProviderUsed: provider.Name(), Scoring: ranking.Scoring,
			Syntax: tq.Syntax, SearchTerms: tq.Terms, MaxCandidates: maxC,
			TokenBudget: req.TokenBudget, Now: nowMs,
		},
	}
	if ranking.Degraded != nil {
		res.Provenance.Degraded = memory.Public(ranking.Degraded).Code
		if rt.OnDegraded != nil {
			rt.OnDegraded(ranking.Degraded)
		}
	}
	estimate := rt.EstimateTokens
	if estimate == nil {
		estimate = content.EstimateTokens
	}
	res.Candidates, res.Provenance.TokensUsed, res.Provenance.TruncatedDueToTokenBudget = ApplyTokenBudget(res, req.TokenBudget, estimate)
	res.Provenance.ReturnedCandidates = len(res.Candidates)
	return res, nil
}

// provider picks the provider a request names. With none named, an
// fts-syntax query goes to local-fts, the provider that reads FTS5 syntax.
func (rt *Retriever) provider(name string, syntax memory.Syntax) (Provider, error) {
	if name == "" && syntax == memory.SyntaxFTS {
		name = LocalFTSName
	}
	if name == "" || name == rt.Provider.Name() {
		return rt.Provider, nil
	}
	names := []string{rt.Provider.Name()}
	for _, p := range rt.Providers {
		if p.Name() == name {
			return p, nil
		}
		names = append(names, p.Name())
	}
	return nil, memory.Errorf(memory.CodeInvalidParams, "unknown provider %q (providers: %s)", name, strings.Join(names, ", "))
}

// ApplyTokenBudget is the contract's truncation: pins and the current
// summary always count and are never cut; candidates are kept in order while
// they fit, and the first that does not fit ends the list. With no budget
// nothing is cut. It returns the candidates kept, the tokens used by
// everything kept, and whether any candidate was cut.
func ApplyTokenBudget(r Result, budget *int, estimate func(string) int) ([]Candidate, int, bool) {
	used := 0
	for _, p := range r.Pins {
		used += estimate(p.Target.Content())
	}
	if r.CurrentSummary != nil {
		used += estimate(r.CurrentSummary.Content)
	}
	kept := r.Candidates
	for i, c := range r.Candidates {
		t := estimate(c.Entity.Content())
		if budget != nil && used+t > *budget {
			kept = r.Candidates[:i]
			break
		}
		used += t
	}
	return kept, used, len(kept) < len(r.Candidates)
}
