package code

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// HydrateRequest asks for the code a query needs, in an episode of a
// session, within a budget.
type HydrateRequest struct {
	Query     string
	EpisodeID string
	// SessionID is required when the episode is new.
	SessionID string
	RepoID    string
	// BudgetTokens and BudgetEntities are hard limits (defaults 8000 and
	// 50; at most 1,000,000 and 10,000).
	BudgetTokens, BudgetEntities int
}

// Block is one hydrated entity: its text, why it was included, by which
// method, and its token count.
type Block struct {
	EntityKey    string `json:"entity_key"`
	ArtifactHash string `json:"artifact_hash"`
	// Reason: ast_resolved / regex_resolved (the query named its file or
	// symbol), previously_hydrated, or retrieved.
	Reason string `json:"reason"`
	// Method: ast or regex for named entities, tracking for previously
	// hydrated ones, lexical, semantic or hybrid for retrieved ones.
	Method      string  `json:"method"`
	TriggeredBy string  `json:"triggered_by"`
	TokenCount  int     `json:"token_count"`
	HydratedAt  string  `json:"hydrated_at"`
	Filepath    string  `json:"filepath"`
	StartLine   int     `json:"start_line"`
	EndLine     int     `json:"end_line"`
	Score       float64 `json:"score,omitempty"`
	Content     string  `json:"content"`
	// Redactions counts the secrets the redactor replaced in Content.
	Redactions int `json:"redactions,omitempty"`
}

// Left is an entity left out of a hydration, and why.
type Left struct {
	EntityKey  string `json:"entity_key"`
	Reason     string `json:"reason"`
	TokenCount int    `json:"token_count,omitempty"`
}

// HydrateResult is a hydration: the blocks in priority order, what the
// budget pruned, what was stale, and whether the session's tracking
// history verified.
type HydrateResult struct {
	EpisodeID      string   `json:"episode_id"`
	SessionID      string   `json:"session_id"`
	RepoID         string   `json:"repo_id"`
	Seq            int64    `json:"episode_seq"`
	Blocks         []Block  `json:"hydration_blocks"`
	TotalTokens    int      `json:"total_tokens"`
	BudgetTokens   int      `json:"budget_tokens"`
	BudgetEntities int      `json:"budget_entities"`
	BudgetUsed     string   `json:"budget_used"`
	Exhausted      bool     `json:"budget_exhausted"`
	Pruned         []Left   `json:"pruned"`
	Stale          []Left   `json:"stale"`
	Tracking       Tracking `json:"tracking"`
	// Semantic says whether semantic candidates took part.
	Semantic string `json:"semantic"`
	// Redactions counts the secrets replaced in the blocks' text.
	Redactions int `json:"redactions"`
}

// pick is a candidate block before the budget.
type pick struct {
	i                    int
	reason, method, trig string
	score                float64
}

// Hydrate returns the entities a query needs, in priority order: the
// entities of files the query names, then symbols it names, then every
// entity hydrated in an earlier episode of the session (invariant 1), then
// lexical and semantic candidates. Stale entities (the disk no longer
// holds their artifact) are left out and reported. The budget is hard:
// lower-priority blocks that do not fit are pruned and reported, and the
// exhaustion is logged (invariant 5). The blocks are recorded as the
// episode's hydration, sealed by checksums.
func (m *Memory) Hydrate(ctx context.Context, in HydrateRequest) (HydrateResult, error) {
	res, err := retryEpisode(ctx, func() (HydrateResult, error) { return m.hydrateOnce(ctx, in) })
	return res, timedOut(ctx, err)
}

// hydrateOnce is one attempt at Hydrate; it reads the episode afresh.
func (m *Memory) hydrateOnce(ctx context.Context, in HydrateRequest) (HydrateResult, error) {
	if err := checkHydrate(&in); err != nil {
		return HydrateResult{}, err
	}
	repo, err := m.repo(ctx, in.RepoID)
	if err != nil {
		return HydrateResult{}, err
	}
	ep, err := m.episode(ctx, in.EpisodeID, in.SessionID, repo.ID)
	if err != nil {
		return HydrateResult{}, err
	}
	x := newCatalog(repo.ID)
	if err := m.loadNamed(ctx, x, queryWords(in.Query)); err != nil {
		return HydrateResult{}, err
	}
	found, err := m.search(ctx, x, in.Query)
	if err != nil {
		return HydrateResult{}, err
	}
	eps, track, byEp, err := m.sessionTracking(ctx, ep.SessionID)
	if err != nil {
		return HydrateResult{}, err
	}
	if !track.OK {
		m.log.Warn("hydration tracking damaged: previously hydrated entities may be missing", "session", ep.SessionID, "episode", ep.ID, "problems", len(track.Problems))
	}
	res := HydrateResult{
		EpisodeID: ep.ID, SessionID: ep.SessionID, RepoID: repo.ID, BudgetTokens: in.BudgetTokens, BudgetEntities: in.BudgetEntities,
		Blocks: []Block{}, Pruned: []Left{}, Stale: []Left{}, Tracking: track, Semantic: x.semantic,
	}
	relevance := make(map[int]float64, len(found))
	for _, c := range found {
		relevance[c.i] = c.score
	}
	picks := m.anchors(x, in.Query, relevance)
	nAnchors := len(picks)
	seq := ep.Seq
	if seq > 0 {
		seq++ // this episode's own earlier hydrations count too
	}
	ts := tracked(eps, byEp, seq)
	if err := m.loadKeys(ctx, x, trackedKeys(ts, repo.ID)); err != nil {
		return HydrateResult{}, err
	}
	picks = trackedPicks(picks, x, ts, repo.ID, &res)
	nTracked := len(picks) - nAnchors
	picks = retrievedPicks(picks, found)

	at := m.now()
	f := &filling{m: m, x: x, repo: repo, ep: &ep, in: in, at: at, stamp: at.UTC().Format(time.RFC3339), res: &res, seen: map[int]bool{}}
	if f.arts, err = m.store.Artifacts(ctx, artifactsOf(x, picks)); err != nil {
		return HydrateResult{}, err
	}
	for _, p := range picks {
		if err := f.add(ctx, p); err != nil {
			return HydrateResult{}, err
		}
	}
	ep.Query = in.Query
	ep.RepoID = repo.ID
	ep.BudgetToken, ep.BudgetCount, ep.TotalTokens = in.BudgetTokens, in.BudgetEntities, res.TotalTokens
	ep.UpdatedAt = at.UnixMilli()
	seal(&ep, f.rows)
	stored, err := m.store.ApplyEpisode(ctx, memory.EpisodeChange{Episode: ep, Rows: f.rows})
	if err != nil {
		return HydrateResult{}, err
	}
	res.Seq = stored.Seq
	res.BudgetUsed = fmt.Sprintf("%d / %d tokens, %d / %d entities", res.TotalTokens, in.BudgetTokens, len(res.Blocks), in.BudgetEntities)
	m.log.Info("hydration", "episode", ep.ID, "session", ep.SessionID, "anchored", nAnchors, "previously_hydrated", nTracked,
		"blocks", len(res.Blocks), "tokens", res.TotalTokens, "pruned", len(res.Pruned), "stale", len(res.Stale), "tracking_ok", track.OK)
	m.log.Debug("hydration query", "episode", ep.ID, "query", head(in.Query, 100))
	for _, b := range res.Blocks {
		m.log.Debug("hydrated", "entity", b.EntityKey, "method", b.Method, "tokens", b.TokenCount)
	}
	return res, nil
}

// checkHydrate checks a request's query and budgets and sets the default
// budgets.
func checkHydrate(in *HydrateRequest) error {
	switch {
	case strings.TrimSpace(in.Query) == "":
		return memory.Errorf(memory.CodeInvalidParams, "query is required")
	case len(in.Query) > 16<<10:
		return memory.Errorf(memory.CodeInvalidParams, "query is %d bytes; at most 16384", len(in.Query))
	case in.BudgetTokens < 0 || in.BudgetTokens > MaxBudgetTokens:
		return memory.Errorf(memory.CodeInvalidParams, "budget_tokens must be 1 to %d (default %d)", MaxBudgetTokens, DefaultBudgetTokens)
	case in.BudgetEntities < 0 || in.BudgetEntities > MaxBudgetEntities:
		return memory.Errorf(memory.CodeInvalidParams, "budget_entities must be 1 to %d (default %d)", MaxBudgetEntities, DefaultBudgetEntities)
	}
	if in.BudgetTokens == 0 {
		in.BudgetTokens = DefaultBudgetTokens
	}
	if in.BudgetEntities == 0 {
		in.BudgetEntities = DefaultBudgetEntities
	}
	return nil
}

// trackedKeys are the keys of repo's entities among ts.
func trackedKeys(ts []Tracked, repo string) []string {
	var keys []string
	for _, t := range ts {
		if t.RepoID == repo {
			keys = append(keys, t.Key)
		}
	}
	return keys
}

// trackedPicks appends the entities of repo hydrated in earlier episodes
// of the session (invariant 1); those no longer live are reported stale.
func trackedPicks(picks []pick, x *catalog, ts []Tracked, repo string, res *HydrateResult) []pick {
	for _, t := range ts {
		if t.RepoID != repo {
			continue
		}
		i, ok := x.byKey[t.Key]
		if !ok {
			res.Stale = append(res.Stale, Left{EntityKey: t.Key, Reason: "hydrated in episode " + t.EpisodeID + " but no longer live (superseded, removed or forgotten)"})
			continue
		}
		trig := "hydrated in episode " + t.EpisodeID
		if t.LastEpisodeID != t.EpisodeID {
			trig += " (most recently " + t.LastEpisodeID + ")"
		}
		picks = append(picks, pick{i: i, reason: "previously_hydrated", method: "tracking", trig: trig})
	}
	return picks
}

// retrievedPicks appends the search's candidates.
func retrievedPicks(picks []pick, found []scored) []pick {
	for _, c := range found {
		method := "lexical"
		switch {
		case c.semantic && c.bm25 > 0:
			method = "hybrid"
		case c.semantic:
			method = "semantic"
		}
		picks = append(picks, pick{i: c.i, reason: "retrieved", method: method, score: c.score,
			trig: fmt.Sprintf("bm25 %.3f, similarity %.3f", c.bm25, c.sim)})
	}
	return picks
}

// filling fills a hydration's blocks within its budget, pick by pick, and
// collects the episode's new rows.
type filling struct {
	m     *Memory
	x     *catalog
	repo  memory.CodeRepo
	ep    *memory.Episode
	in    HydrateRequest
	at    time.Time
	stamp string // at, as blocks show it
	res   *HydrateResult
	seen  map[int]bool
	rows  []memory.HydrationRow
	arts  map[string]memory.Artifact // the picks' artifacts, read at once
}

// artifactsOf lists the artifact hashes of picks' entities, once each.
func artifactsOf(x *catalog, picks []pick) []string {
	seen := map[string]bool{}
	var hs []string
	for _, p := range picks {
		if h := x.ents[p.i].ArtifactHash; !seen[h] {
			seen[h] = true
			hs = append(hs, h)
		}
	}
	return hs
}

// add adds pick p's entity as a block, unless it was added already, is
// over the budget (pruned) or is stale.
func (f *filling) add(ctx context.Context, p pick) error {
	if f.seen[p.i] {
		return nil
	}
	f.seen[p.i] = true
	res, x := f.res, f.x
	e := x.ents[p.i]
	art, ok := f.arts[e.ArtifactHash]
	if !ok {
		var err error
		if art, err = f.m.store.Artifact(ctx, e.ArtifactHash); err != nil {
			return err
		}
	}
	if art.Redacted { // forgotten since the entity was read
		res.Stale = append(res.Stale, Left{EntityKey: e.Key, Reason: "its artifact was forgotten"})
		return nil
	}
	tokens := tokensOf(art.Content)
	if len(res.Blocks) >= f.in.BudgetEntities || res.TotalTokens+tokens > f.in.BudgetTokens {
		f.prune(p, e.Key, tokens)
		return nil
	}
	if etv := f.m.verifier.Check(f.repo.Root, e, f.m.maxBytes); etv.IsStale {
		res.Stale = append(res.Stale, Left{EntityKey: e.Key, Reason: etv.Reason})
		return nil
	}
	text, redactions := art.Content, 0
	if f.m.redact != nil {
		text, redactions = f.m.redact(text)
	}
	res.Redactions += redactions
	res.Blocks = append(res.Blocks, Block{
		EntityKey: e.Key, ArtifactHash: e.ArtifactHash, Reason: p.reason, Method: p.method, TriggeredBy: p.trig,
		TokenCount: tokens, HydratedAt: f.stamp, Filepath: e.Path, StartLine: e.StartLine, EndLine: e.EndLine,
		Score: p.score, Content: text, Redactions: redactions,
	})
	res.TotalTokens += tokens
	f.rows = append(f.rows, memory.HydrationRow{
		EpisodeID: f.ep.ID, SessionID: f.ep.SessionID, Seq: f.ep.Rows + len(f.rows) + 1, RepoID: f.repo.ID, Key: e.Key,
		ArtifactHash: e.ArtifactHash, Reason: p.reason, Method: p.method, TriggeredBy: p.trig, TokenCount: tokens,
		HydratedAt: f.at.UnixMilli(),
	})
	return nil
}

// prune reports a pick over the budget (the first one logs the
// exhaustion); retrieved candidates are reported up to listCap.
func (f *filling) prune(p pick, key string, tokens int) {
	res := f.res
	if !res.Exhausted {
		res.Exhausted = true
		f.m.log.Warn("hydration budget exhausted", "episode", f.ep.ID, "tokens", res.TotalTokens, "budget_tokens", f.in.BudgetTokens,
			"entities", len(res.Blocks), "budget_entities", f.in.BudgetEntities)
	}
	why := "over the token budget"
	if len(res.Blocks) >= f.in.BudgetEntities {
		why = "over the entity budget"
	}
	if p.reason != "retrieved" || len(res.Pruned) < listCap {
		res.Pruned = append(res.Pruned, Left{EntityKey: key, Reason: why + " (" + p.reason + ")", TokenCount: tokens})
	}
}

// anchors finds the entities a query names: every entity of each file it
// mentions (the file at that exact path, or else every file ending in it),
// then the entities whose symbol it mentions, in query order. Within a
// file, named symbols come first, then the most relevant to the query
// (relevance: the search scores), then source order.
func (m *Memory) anchors(x *catalog, query string, relevance map[int]float64) []pick {
	fileToks, mentions := queryMentions(query, x)
	byRelevance := func(hits []int) []int {
		hits = slices.Clone(hits)
		slices.SortStableFunc(hits, func(a, b int) int {
			if relevance[a] != relevance[b] {
				if relevance[a] > relevance[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(x.ents[a].Key, x.ents[b].Key)
		})
		return hits
	}
	named := map[int]bool{}
	var syms []pick
	for _, mn := range mentions {
		tok := mn.tok
		hits := byRelevance(x.bySymbol[tok])
		for _, i := range hits[:min(len(hits), mn.limit)] {
			named[i] = true
			syms = append(syms, pick{i: i, reason: x.ents[i].Method + "_resolved", method: x.ents[i].Method, trig: "query mention of symbol '" + tok + "'"})
		}
	}
	var files []pick
	for _, tok := range fileToks {
		// The file at exactly that path wins; only without one do files
		// ending in it ("server.go" for net/http/server.go) count.
		var exact, suffix []int
		for _, i := range x.byFile[baseName(tok)] {
			switch p := x.ents[i].Path; {
			case p == tok:
				exact = append(exact, i)
			case strings.HasSuffix(p, "/"+tok):
				suffix = append(suffix, i)
			}
		}
		if len(exact) == 0 {
			exact = suffix
		}
		// Within a named file: the symbols the query names, then what the
		// query is most about, then source order, so a tight budget keeps
		// the entities that matter.
		slices.SortStableFunc(exact, func(a, b int) int {
			switch {
			case named[a] != named[b]:
				if named[a] {
					return -1
				}
				return 1
			case relevance[a] != relevance[b]:
				if relevance[a] > relevance[b] {
					return -1
				}
				return 1
			case x.ents[a].Path != x.ents[b].Path:
				return strings.Compare(x.ents[a].Path, x.ents[b].Path)
			}
			return x.ents[a].StartLine - x.ents[b].StartLine
		})
		for _, i := range exact {
			files = append(files, pick{i: i, reason: x.ents[i].Method + "_resolved", method: x.ents[i].Method, trig: "query mention: '" + tok + "'"})
		}
	}
	return append(files, syms...)
}

// budgetText formats a budget for introspection.
func budgetText(used, budget int) string {
	if budget <= 0 {
		return strconv.Itoa(used) + " / unlimited"
	}
	return strconv.Itoa(used) + " / " + strconv.Itoa(budget)
}
