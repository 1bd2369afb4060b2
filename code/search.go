package code

import (
	"context"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
)

// Code search reads the retrieval index (package index), where every live
// code entity (PROPOSED or AUTHORITATIVE, its artifact not forgotten) is
// a document of kind code_entity: its symbol, path and the head of its
// code, analysed into code terms, and its vector in the code group. The
// index follows the store's change log, so a fresh process opens the
// entities as retrieve opens memories, and no process builds an index of
// its own.

// liveStates are the states of the entities hydration returns.
var liveStates = []memory.CodeState{memory.StateProposed, memory.StateAuthoritative}

// catalog holds the entities one hydration deals with: those its query
// names, those the search ranks and those tracked from earlier episodes,
// each loaded from the store once, by position.
type catalog struct {
	repo     string
	ents     []memory.CodeEntity
	byKey    map[string]int
	byFile   map[string][]int // full path and base name -> entities
	bySymbol map[string][]int // full symbol and its last segment -> entities
	// semantic is "on", or why semantic candidates are off.
	semantic string
}

func newCatalog(repo string) *catalog {
	return &catalog{repo: repo, byKey: map[string]int{}, byFile: map[string][]int{}, bySymbol: map[string][]int{}, semantic: "on"}
}

// add adds e (once) and files it under its names.
func (c *catalog) add(e memory.CodeEntity) int {
	if i, ok := c.byKey[e.Key]; ok {
		return i
	}
	i := len(c.ents)
	c.ents = append(c.ents, e)
	c.byKey[e.Key] = i
	c.byFile[e.Path] = append(c.byFile[e.Path], i)
	if base := baseName(e.Path); base != e.Path {
		c.byFile[base] = append(c.byFile[base], i)
	}
	c.bySymbol[e.Symbol] = append(c.bySymbol[e.Symbol], i)
	if dot := strings.LastIndexByte(e.Symbol, '.'); dot >= 0 {
		c.bySymbol[e.Symbol[dot+1:]] = append(c.bySymbol[e.Symbol[dot+1:]], i)
	}
	return i
}

// loadNamed adds the live entities that words may name: by symbol or its
// last segment, by path or a path ending in the word.
func (m *Memory) loadNamed(ctx context.Context, c *catalog, words []string) error {
	if len(words) == 0 {
		return nil
	}
	ents, err := m.store.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: c.repo, States: liveStates, Names: words, Readable: true})
	for _, e := range ents {
		c.add(e)
	}
	return err
}

// loadKeys adds the live entities of keys not in c yet.
func (m *Memory) loadKeys(ctx context.Context, c *catalog, keys []string) error {
	var missing []string
	for _, k := range keys {
		if _, ok := c.byKey[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// A forgotten artifact is reported stale when its entity is filled.
	ents, err := m.store.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: c.repo, States: liveStates, Keys: missing})
	for _, e := range ents {
		c.add(e)
	}
	return err
}

// Ranking weighs what ranks a retrieved candidate. Its lexical score is
// the weighted sum of the BM25 scores of three fields (the symbol's
// words, the path and declaration line, the entity's code), normalised by
// the best candidate's; its score is Lexical times that plus Semantic
// times the cosine similarity of the query's and the entity's embeddings.
type Ranking struct {
	Name, Signature, Body float64
	Lexical, Semantic     float64
}

// DefaultRanking is the ranking measured best on the tune half of the
// code-search benchmark (docs/BENCHMARKS.md).
var DefaultRanking = Ranking{Name: 1, Signature: 1, Body: 1, Lexical: 0.9, Semantic: 0.1}

// maxRetrieved bounds the candidates a search returns.
const maxRetrieved = 100

// scored is a retrieval candidate.
type scored struct {
	i        int
	key      string
	score    float64
	bm25     float64
	sim      float64
	semantic bool
}

// search ranks the repository's entities for query: BM25 over their code
// terms (normalised by the best), plus the cosine similarity of the
// query's embedding, each candidate's score a weighted sum; ties go by
// key. The candidates are loaded into c.
func (m *Memory) search(ctx context.Context, c *catalog, query string) ([]scored, error) {
	qv := m.queryVector(ctx, c, query)
	var top []scored
	err := m.read(ctx, func(v *index.View) error {
		top = m.rank(v, c.repo, query, qv)
		return nil
	})
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(top))
	for k, s := range top {
		keys[k] = s.key
	}
	if err := m.loadKeys(ctx, c, keys); err != nil {
		return nil, err
	}
	out := top[:0]
	for _, s := range top {
		if i, ok := c.byKey[s.key]; ok { // else changed since the index was read
			s.i = i
			out = append(out, s)
		}
	}
	return out, nil
}

// queryVector embeds the query, or says in c why semantic candidates are
// off.
func (m *Memory) queryVector(ctx context.Context, c *catalog, query string) []float32 {
	if m.embedder == nil {
		c.semantic = "off: no embedder"
		return nil
	}
	vs, err := m.embedder.Embed(ctx, []string{splitIdent(query)})
	if err != nil || len(vs) != 1 {
		c.semantic = "off: the embedder failed (" + message(err) + "); lexical candidates only"
		m.log.Warn("code hydration without semantic candidates", "repo", c.repo, "err", err)
		return nil
	}
	return vs[0]
}

// rank scores the repository's entities in v.
func (m *Memory) rank(v *index.View, repo, query string, qv []float32) []scored {
	r := m.ranking
	f := v.CodeFilter(repo)
	scores := make([]float32, v.Docs())
	touched := v.CodeScores(query, index.CodeWeights{Name: r.Name, Signature: r.Signature, Body: r.Body}, f, scores, nil)
	var best float32
	for _, d := range touched {
		best = max(best, scores[d])
	}
	sims := map[uint32]float64{}
	if qv != nil {
		for _, h := range v.CodeNearest(qv, maxRetrieved, f) {
			if h.Score > 0 {
				sims[h.ID] = float64(h.Score)
			}
		}
	}
	// The best maxRetrieved, kept sorted as they come (score, then id:
	// documents compared without building their ids); only theirs are
	// read.
	type cand struct {
		d uint32
		c scored
	}
	better := func(a, b cand) int {
		switch {
		case a.c.score > b.c.score:
			return -1
		case a.c.score < b.c.score:
			return 1
		}
		return v.CompareIDs(a.d, b.d)
	}
	top := make([]cand, 0, maxRetrieved+1)
	consider := func(d uint32, c scored) {
		c.score = r.Lexical*c.bm25 + r.Semantic*c.sim
		x := cand{d, c}
		if len(top) == maxRetrieved && better(x, top[len(top)-1]) >= 0 {
			return
		}
		at, _ := slices.BinarySearchFunc(top, x, better)
		top = slices.Insert(top, at, x)
		if len(top) > maxRetrieved {
			top = top[:maxRetrieved]
		}
	}
	if best > 0 {
		for _, d := range touched {
			c := scored{bm25: float64(scores[d] / best)}
			if sim, ok := sims[d]; ok {
				c.sim, c.semantic = sim, true
				delete(sims, d)
			}
			consider(d, c)
		}
	}
	for d, sim := range sims {
		consider(d, scored{sim: sim, semantic: true})
	}
	prefix := memory.CodeEntityID(repo, "")
	out := make([]scored, len(top))
	for k, x := range top {
		out[k] = x.c
		out[k].key = strings.TrimPrefix(v.ID(x.d), prefix)
	}
	return out
}

// read calls fn with a view of the retrieval index brought up to the
// store; a damaged index is rebuilt from the store first.
func (m *Memory) read(ctx context.Context, fn func(v *index.View) error) error {
	if m.snap == nil {
		return memory.Errorf(memory.CodeInternal, "code search needs a store that takes snapshots")
	}
	return m.snap.Snapshot(ctx, func(r memory.Reader) error {
		if err := m.index.Sync(ctx, r); err != nil {
			return err
		}
		err := m.index.Read(fn)
		if index.IsCorrupt(err) {
			if err := m.index.Repair(ctx, r); err != nil {
				return err
			}
			err = m.index.Read(fn)
		}
		return err
	})
}

// tokensOf is the token estimate of an entity's text.
func tokensOf(text string) int { return content.EstimateTokens(text) }

// splitIdent breaks identifiers into words (lexical.SplitIdent).
func splitIdent(s string) string { return lexical.SplitIdent(s) }

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
