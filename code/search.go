package code

import (
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/vector"
)

// repoIndex is the in-memory search index over a repository's live
// entities (PROPOSED and AUTHORITATIVE, whose artifact is not forgotten),
// built lazily on the first hydration and rebuilt when the repository is
// indexed again (or one of its artifacts forgotten).
type repoIndex struct {
	indexedAt int64
	ents      []memory.CodeEntity
	tokens    []int
	byKey     map[string]int
	byFile    map[string][]int // full path and base name -> entities in file order
	bySymbol  map[string][]int // full symbol and its last segment -> entities
	name      *lexical.Index   // the symbol's words
	sig       *lexical.Index   // the path's words and the declaration's first line
	body      *lexical.Index   // the entity's text
	vec       *vector.Flat
	semantic  string // "on", or why semantic candidates are off
}

// invalidate drops a repository's index after a write.
func (m *Memory) invalidate(repoID string) {
	m.mu.Lock()
	delete(m.indexes, repoID)
	m.mu.Unlock()
}

// index returns the repository's search index, building it when missing
// or older than the repository's last index (another process may have
// written it).
func (m *Memory) index(ctx context.Context, repo memory.CodeRepo) (*repoIndex, error) {
	m.mu.Lock()
	x := m.indexes[repo.ID]
	m.mu.Unlock()
	if x != nil && x.indexedAt == repo.IndexedAt {
		return x, nil
	}
	all, err := m.store.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: repo.ID, States: []memory.CodeState{memory.StateProposed, memory.StateAuthoritative}})
	if err != nil {
		return nil, err
	}
	var ents []memory.CodeEntity
	var arts []memory.Artifact
	for _, e := range all {
		art, err := m.store.Artifact(ctx, e.ArtifactHash)
		if err != nil {
			return nil, err
		}
		if !art.Redacted {
			ents, arts = append(ents, e), append(arts, art)
		}
	}
	x = &repoIndex{
		indexedAt: repo.IndexedAt, ents: ents, tokens: make([]int, len(ents)),
		byKey: map[string]int{}, byFile: map[string][]int{}, bySymbol: map[string][]int{},
		name: lexical.New(), sig: lexical.New(), body: lexical.New(), semantic: "on",
	}
	var texts []string
	var need []int
	for i, e := range ents {
		x.byKey[e.Key] = i
		x.byFile[e.Path] = append(x.byFile[e.Path], i)
		if base := baseName(e.Path); base != e.Path {
			x.byFile[base] = append(x.byFile[base], i)
		}
		x.bySymbol[e.Symbol] = append(x.bySymbol[e.Symbol], i)
		if dot := strings.LastIndexByte(e.Symbol, '.'); dot >= 0 {
			x.bySymbol[e.Symbol[dot+1:]] = append(x.bySymbol[e.Symbol[dot+1:]], i)
		}
		art := arts[i]
		x.tokens[i] = content.EstimateTokens(art.Content)
		words := splitIdent(e.Symbol)
		x.name.Add(uint32(i), words)
		x.sig.Add(uint32(i), splitIdent(e.Path)+" "+splitIdent(signature(art.Content)))
		x.body.Add(uint32(i), splitIdent(head(art.Content, bodyBytes)))
		m.mu.Lock()
		_, ok := m.vecs[e.ArtifactHash]
		m.mu.Unlock()
		if !ok {
			texts = append(texts, words+" "+splitIdent(head(art.Content, 400)))
			need = append(need, i)
		}
	}
	if m.embedder == nil {
		x.semantic = "off: no embedder"
	} else {
		x.vec = vector.NewFlat(m.embedder.Space().Dim)
		for start := 0; start < len(texts); start += 512 {
			end := min(start+512, len(texts))
			vecs, err := m.embedder.Embed(ctx, texts[start:end])
			if err != nil {
				x.semantic = "off: the embedder failed (" + message(err) + "); lexical candidates only"
				x.vec = nil
				m.log.Warn("code hydration without semantic candidates", "repo", repo.ID, "err", err)
				break
			}
			m.mu.Lock()
			for j, v := range vecs {
				m.vecs[ents[need[start+j]].ArtifactHash] = v
			}
			m.mu.Unlock()
		}
		if x.vec != nil {
			m.mu.Lock()
			for i, e := range ents {
				if v := m.vecs[e.ArtifactHash]; v != nil {
					x.vec.Add(uint32(i), v)
				}
			}
			m.mu.Unlock()
		}
	}
	m.mu.Lock()
	m.indexes[repo.ID] = x
	m.mu.Unlock()
	return x, nil
}

// Ranking weighs what ranks a retrieved candidate. Its lexical score is
// the weighted sum of the BM25 scores of three fields (the symbol's
// words, the path and declaration line, the entity's text), normalised by
// the best candidate's; its score is Lexical times that plus Semantic
// times the cosine similarity of the query's and the entity's embeddings.
type Ranking struct {
	Name, Signature, Body float64
	Lexical, Semantic     float64
}

// DefaultRanking is the ranking measured best on the tune half of the
// code-search benchmark (docs/BENCHMARKS.md).
var DefaultRanking = Ranking{Name: 1, Signature: 1, Body: 1, Lexical: 0.9, Semantic: 0.1}

const (
	maxRetrieved = 100
	// bodyBytes is how much of an entity's text its body field holds.
	bodyBytes = 2000
)

// scored is a retrieval candidate.
type scored struct {
	i        int
	score    float64
	bm25     float64
	sim      float64
	semantic bool
}

// search ranks entities for query: BM25 over identifiers, paths and code
// (normalised by the best), plus cosine similarity of the query's
// embedding, each candidate's score a weighted sum. Ties go by key.
func (m *Memory) search(ctx context.Context, x *repoIndex, query string) []scored {
	r := m.ranking
	terms := lexical.QueryTerms(splitIdent(query))
	scores := make([]float32, x.body.Cap())
	field := make([]float32, len(scores))
	var touched []uint32
	for _, f := range []struct {
		x *lexical.Index
		w float64
	}{{x.name, r.Name}, {x.sig, r.Signature}, {x.body, r.Body}} {
		if f.w == 0 {
			continue
		}
		clear(field)
		for _, d := range f.x.Scores(terms, nil, field, nil) {
			if scores[d] == 0 {
				touched = append(touched, d)
			}
			scores[d] += float32(f.w) * field[d]
		}
	}
	var best float32
	for _, d := range touched {
		best = max(best, scores[d])
	}
	sims := map[int]float64{}
	if x.vec != nil {
		if q, err := m.embedder.Embed(ctx, []string{splitIdent(query)}); err == nil && len(q) == 1 {
			for _, h := range x.vec.Search(q[0], maxRetrieved, nil) {
				if h.Score > 0 {
					sims[int(h.ID)] = float64(h.Score)
				}
			}
		}
	}
	top := make([]scored, 0, maxRetrieved+1)
	consider := func(c scored) {
		c.score = r.Lexical*c.bm25 + r.Semantic*c.sim
		if len(top) == maxRetrieved && !better(x, c, top[len(top)-1]) {
			return
		}
		at, _ := slices.BinarySearchFunc(top, c, func(a, b scored) int {
			if better(x, a, b) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, at, c)
		if len(top) > maxRetrieved {
			top = top[:maxRetrieved]
		}
	}
	if best > 0 {
		for _, d := range touched {
			c := scored{i: int(d), bm25: float64(scores[d] / best)}
			if sim, ok := sims[int(d)]; ok {
				c.sim, c.semantic = sim, true
				delete(sims, int(d))
			}
			consider(c)
		}
	}
	for i, sim := range sims {
		consider(scored{i: i, sim: sim, semantic: true})
	}
	return top
}

// better orders candidates: higher score first, then by key.
func better(x *repoIndex, a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return x.ents[a.i].Key < x.ents[b.i].Key
}

// splitIdent breaks identifiers into words: "ValidateToken" reads
// "Validate Token", "max_file_bytes" reads "max file bytes", and a path's
// separators become spaces. The original text is kept as well.
func splitIdent(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 2)
	var prev rune
	for i, r := range s {
		switch {
		case r == '_' || r == '/' || r == '.' || r == '-':
			b.WriteByte(' ')
		case i > 0 && unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			b.WriteByte(' ')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// signature is an entity's declaration line: its first line that is not
// a comment, a decorator or blank, up to 300 bytes.
func signature(text string) string {
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '@' || t[0] == '#' || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || t[0] == '*' {
			continue
		}
		return head(t, 300)
	}
	return ""
}

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
