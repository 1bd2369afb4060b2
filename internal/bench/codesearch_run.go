package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// CodeSearchOptions configures the code-search benchmark.
type CodeSearchOptions struct {
	// Corpora are the source trees to draw questions from.
	Corpora []CodeCorpus
	// Dir holds the stripped trees and the databases; it must exist. A
	// Dir kept from an earlier run is reused: only what changed is
	// written and indexed again.
	Dir string
	// Split is "test" (the reported half), "tune" or "all".
	Split string
	// Max caps the questions asked per corpus (0: every one), taken in
	// the order of a hash of their ids so the sample does not depend on
	// the tree's layout.
	Max int
	// Ranking replaces code memory's default ranking (for tuning).
	Ranking code.Ranking
	// Progress, when set, receives a line per stage.
	Progress func(format string, args ...any)
}

// CodeSearchReport is the benchmark's outcome per corpus.
type CodeSearchReport struct {
	Split   string               `json:"split"`
	Corpora []CodeSearchCorpusRe `json:"corpora"`
	Seconds float64              `json:"seconds"`
}

// CodeSearchCorpusRe is one corpus's figures: its size, and the ranking
// quality of cairn's hydration and of the BM25 anchor.
type CodeSearchCorpusRe struct {
	Corpus    string `json:"corpus"`
	Files     int    `json:"files"`
	Entities  int    `json:"entities"`
	Questions int    `json:"questions"` // in the whole corpus, both halves
	Asked     int    `json:"asked"`     // in this split, after Max
	// Hydrate ranks by code_hydrate's blocks (a fresh session per
	// question, budget 10 entities); BM25 by plain BM25 over each
	// entity's text (the lexical analyser: words, stems, stop words).
	Hydrate CodeSearchScores `json:"hydrate"`
	BM25    CodeSearchScores `json:"bm25"`
	// IndexSeconds is the time code_index took over the stripped tree.
	IndexSeconds float64 `json:"index_seconds"`
	// Misses lists up to 20 questions hydration missed (for reading).
	Misses []CodeSearchMiss `json:"misses,omitempty"`
}

// CodeSearchScores are recall@1, @5 and @10 and MRR (over the first 10).
type CodeSearchScores struct {
	R1  float64 `json:"recall_at_1"`
	R5  float64 `json:"recall_at_5"`
	R10 float64 `json:"recall_at_10"`
	MRR float64 `json:"mrr"`
}

// CodeSearchMiss is a question whose answer was not in the first 10.
type CodeSearchMiss struct {
	Question string   `json:"question"`
	Key      string   `json:"key"`
	Got      []string `json:"got"`
}

// rankTally accumulates ranks (1-based, 0 for not in the first 10).
type rankTally struct {
	n, r1, r5, r10 int
	rr             float64
}

func (t *rankTally) add(rank int) {
	t.n++
	if rank == 0 {
		return
	}
	if rank == 1 {
		t.r1++
	}
	if rank <= 5 {
		t.r5++
	}
	if rank <= 10 {
		t.r10++
	}
	t.rr += 1 / float64(rank)
}

func (t rankTally) scores() CodeSearchScores {
	if t.n == 0 {
		return CodeSearchScores{}
	}
	n := float64(t.n)
	return CodeSearchScores{R1: float64(t.r1) / n, R5: float64(t.r5) / n, R10: float64(t.r10) / n, MRR: t.rr / n}
}

// RunCodeSearch builds each corpus's stripped tree, indexes it with code
// memory, and asks every question of the split through code_hydrate and
// through the BM25 anchor.
func RunCodeSearch(ctx context.Context, o CodeSearchOptions) (CodeSearchReport, error) {
	switch o.Split {
	case "":
		o.Split = "test"
	case "test", "tune", "all":
	default:
		return CodeSearchReport{}, memory.Errorf(memory.CodeInvalidParams, "split %q is not test, tune or all", o.Split)
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
	start := time.Now()
	rep := CodeSearchReport{Split: o.Split}
	for _, c := range o.Corpora {
		r, err := runCodeCorpus(ctx, o, c)
		if err != nil {
			return CodeSearchReport{}, err
		}
		rep.Corpora = append(rep.Corpora, r)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// CodeQuestions loads a corpus and returns its questions (both halves),
// in id order.
func CodeQuestions(c CodeCorpus) ([]CodeQuestion, error) {
	files, err := loadCorpus(c)
	if err != nil {
		return nil, err
	}
	var qs []CodeQuestion
	for _, f := range files {
		qs = append(qs, f.questions...)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].ID < qs[j].ID })
	return qs, nil
}

// pickQuestions keeps the split's questions, the first max by hash.
func pickQuestions(all []CodeQuestion, split string, max int) []CodeQuestion {
	var qs []CodeQuestion
	for _, q := range all {
		if split == "all" || q.Split == split {
			qs = append(qs, q)
		}
	}
	sort.Slice(qs, func(i, j int) bool { return hashOf("pick:"+qs[i].ID) < hashOf("pick:"+qs[j].ID) })
	if max > 0 && len(qs) > max {
		qs = qs[:max]
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].ID < qs[j].ID })
	return qs
}

func runCodeCorpus(ctx context.Context, o CodeSearchOptions, c CodeCorpus) (CodeSearchCorpusRe, error) {
	o.Progress("%s: reading and stripping %s", c.Name, c.Root)
	files, err := loadCorpus(c)
	if err != nil {
		return CodeSearchCorpusRe{}, err
	}
	tree := filepath.Join(o.Dir, c.Name)
	var all []CodeQuestion
	for _, f := range files {
		p := filepath.Join(tree, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return CodeSearchCorpusRe{}, memory.Wrap(memory.CodeInternal, err, "writing the stripped tree: %v", err)
		}
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, f.stripped) {
			all = append(all, f.questions...)
			continue // kept from an earlier run: a re-index skips it
		}
		if err := os.WriteFile(p, f.stripped, 0o644); err != nil {
			return CodeSearchCorpusRe{}, memory.Wrap(memory.CodeInternal, err, "writing the stripped tree: %v", err)
		}
		all = append(all, f.questions...)
	}
	db, err := sqlite.Open(filepath.Join(o.Dir, c.Name+".db"), nil)
	if err != nil {
		return CodeSearchCorpusRe{}, err
	}
	defer db.Close()
	g, err := embed.NewGloVe()
	if err != nil {
		return CodeSearchCorpusRe{}, err
	}
	n := 0
	m := code.New(db, code.Options{ETVTTL: time.Hour, Embedder: g, Ranking: o.Ranking, NewID: func(p string) string { n++; return fmt.Sprintf("%s_%d", p, n) }})
	o.Progress("%s: indexing %d files", c.Name, len(files))
	t0 := time.Now()
	idx, err := m.Index(ctx, code.IndexRequest{Root: tree, RepoID: c.Name})
	if err != nil {
		return CodeSearchCorpusRe{}, err
	}
	r := CodeSearchCorpusRe{Corpus: c.Name, Files: idx.Files, Questions: len(all), IndexSeconds: time.Since(t0).Seconds()}
	bm, keys, err := bm25Anchor(ctx, db, c.Name)
	if err != nil {
		return CodeSearchCorpusRe{}, err
	}
	r.Entities = len(keys)
	qs := pickQuestions(all, o.Split, o.Max)
	o.Progress("%s: %d entities, %d questions, asking %d (%s)", c.Name, r.Entities, len(all), len(qs), o.Split)
	var hy, b rankTally
	run := time.Now().UnixNano() // a kept database holds earlier runs' sessions
	for i, q := range qs {
		res, err := m.Hydrate(ctx, code.HydrateRequest{Query: q.Question, EpisodeID: fmt.Sprintf("q%d-%d", run, i), SessionID: fmt.Sprintf("s%d-%d", run, i),
			RepoID: c.Name, BudgetTokens: code.MaxBudgetTokens, BudgetEntities: 10})
		if err != nil {
			return CodeSearchCorpusRe{}, err
		}
		got := make([]string, 0, len(res.Blocks))
		for _, blk := range res.Blocks {
			got = append(got, blk.EntityKey)
		}
		rank := rankOf(got, q.Key)
		hy.add(rank)
		if rank == 0 && len(r.Misses) < 20 {
			r.Misses = append(r.Misses, CodeSearchMiss{Question: q.Question, Key: q.Key, Got: got[:min(len(got), 5)]})
		}
		b.add(rankOf(bm(q.Question), q.Key))
	}
	r.Asked = len(qs)
	r.Hydrate, r.BM25 = hy.scores(), b.scores()
	return r, nil
}

func rankOf(got []string, key string) int {
	for i, k := range got {
		if k == key {
			return i + 1
		}
	}
	return 0
}

// bm25Anchor indexes the text of each live entity of a repository with
// plain BM25 (lexical's analyser, no identifier splitting, no field
// weights) and returns a function giving a query's first 10 keys.
func bm25Anchor(ctx context.Context, db memory.CodeStore, repo string) (func(string) []string, []string, error) {
	ents, err := db.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: repo, States: []memory.CodeState{memory.StateProposed, memory.StateAuthoritative}})
	if err != nil {
		return nil, nil, err
	}
	lex := lexical.New()
	keys := make([]string, len(ents))
	for i, e := range ents {
		art, err := db.Artifact(ctx, e.ArtifactHash)
		if err != nil {
			return nil, nil, err
		}
		keys[i] = e.Key
		lex.Add(uint32(i), art.Content)
	}
	scores := make([]float32, lex.Cap())
	return func(q string) []string {
		clear(scores)
		touched := lex.Scores(lexical.QueryTerms(q), nil, scores, nil)
		sort.Slice(touched, func(i, j int) bool {
			a, b := touched[i], touched[j]
			if scores[a] != scores[b] {
				return scores[a] > scores[b]
			}
			return keys[a] < keys[b]
		})
		out := make([]string, 0, 10)
		for _, d := range touched[:min(len(touched), 10)] {
			out = append(out, keys[d])
		}
		return out
	}, keys, nil
}

// ParseRanking reads name=1,signature=1,body=1,lexical=0.6,semantic=0.4;
// weights not given keep their default.
func ParseRanking(s string) (code.Ranking, error) {
	r := code.DefaultRanking
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		w, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || w < 0 || w > 100 {
			return r, memory.Errorf(memory.CodeInvalidParams, "weights %q: want name=W,signature=W,body=W,lexical=W,semantic=W with W from 0 to 100", kv)
		}
		switch k {
		case "name":
			r.Name = w
		case "signature":
			r.Signature = w
		case "body":
			r.Body = w
		case "lexical":
			r.Lexical = w
		case "semantic":
			r.Semantic = w
		default:
			return r, memory.Errorf(memory.CodeInvalidParams, "weights: unknown weight %q (name, signature, body, lexical, semantic)", k)
		}
	}
	return r, nil
}
