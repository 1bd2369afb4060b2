package retrieve

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
)

// HybridName is the hybrid provider's name in provenance.
const HybridName = "hybrid"

// HybridWeights set how the hybrid provider fuses its signals.
type HybridWeights struct {
	// Lexical, Semantic and Recency weigh the normalised signals.
	Lexical  float64 `json:"lexical"`
	Semantic float64 `json:"semantic"`
	Recency  float64 `json:"recency"`
	// Before, BeforeOther, After and Far are how much of a neighbouring
	// record's text a record takes: Before from the record right before it
	// in its capsule when that one asks a question (holds a "?": an answer
	// takes from its question), BeforeOther from it when it does not,
	// After from the one right after it, Far from the ones two away. A
	// turn's meaning often lives next to it ("Yes, last Tuesday" answers
	// the turn before).
	Before      float64 `json:"before"`
	BeforeOther float64 `json:"beforeOther"`
	After       float64 `json:"after"`
	Far         float64 `json:"far"`
	// Capsule is how much of the best match in its capsule a record takes:
	// records of the session a query is about rise together.
	Capsule float64 `json:"capsule"`
	// Soft weighs the soft word match of the best softCandidates: each
	// query word matched to the closest word of the record by word vectors
	// ("kids" finds "children"), weighted by the word's idf. It applies
	// with an embedder that has word vectors (the built-in one).
	Soft float64 `json:"soft"`
	// Time weighs whether a record is from the period the query names (a
	// day, a month or a year: "on May 3, 2023", "in July 2023";
	// QueryPeriod) or up to PeriodSlack after it. It applies when the
	// query names one.
	Time float64 `json:"time"`
	// When weighs whether a record tells a time (a relative or absolute
	// time word: "yesterday", "last week", "in May", "2022"; TimeTerms)
	// when the query asks for one ("when ...", "what year ...", "how
	// long ...";
	// AsksWhen): the answer to a when-question is a statement placed in
	// time. It applies when the query asks for a time.
	When float64 `json:"when"`
	// Label weighs whether a record's label (the words before a colon it
	// opens with: who speaks in "Alice: I moved", what it is about in
	// "build: failed"; lexical.Label) holds a word of the query: a
	// question about Alice is answered by what Alice said. It applies
	// when a candidate's label holds a query word.
	Label float64 `json:"label"`
	// Statement weighs whether a record states rather than asks (holds
	// no "?"): a question seldom holds the answer to one.
	Statement float64 `json:"statement"`
}

// DefaultHybridWeights are the defaults, chosen by measurement on LoCoMo
// (docs/BENCHMARKS.md has the figures and what each weight adds).
var DefaultHybridWeights = HybridWeights{Lexical: 0.6, Semantic: 0.5, Recency: 0.1, Before: 0.5, BeforeOther: 0.1, After: 0.5, Far: 0.2, Capsule: 0.5, Soft: 0.35, Time: 0.25, When: 0.2, Label: 0.15, Statement: 0.06}

// semKeep is how many of the most similar records may join the
// candidates without a lexical match, and semJoin how close to the best
// similarity they must come: a record that shares no word with the query
// enters only when its meaning is close. softCandidates is how many of
// the best candidates get the soft word match.
const (
	semKeep        = 100
	semJoin        = 0.75
	softCandidates = 50
)

// Hybrid ranks by BM25 over the retrieval index (package index) with
// neighbour and capsule context, fused with semantic similarity and
// recency:
//
//	context  = BM25F of the record with its neighbours' text as a field:
//	           each term's tf' = tf + Before·tf(previous) + After·tf(next) + Far·tf(±2)
//	           (BeforeOther instead of Before when the previous record asks no question),
//	           saturated once (index.View.ContextScores)
//	lexical  = (context + Capsule·best context in the capsule) / the best candidate's
//	semantic = cosine(query, record) / the nearest record's, at most 1 (negative counts as 0)
//	recency  = min(1, max(0, 1 − age / 30 days))
//	period   = 1 when the record is from the period the query names (QueryPeriod) or up to PeriodSlack after it, else 0
//	soft     = Σ_q idf(q)·max(0, max_w cosine(q, w)) / Σ_q idf(q), q a query word, w a word of the record
//	when     = 1 when the query asks for a time (AsksWhen) and the record holds a time word (TimeTerms), else 0
//	label    = 1 when the record's label (lexical.Label: "Alice: ...") holds a query word, else 0
//	stated   = 1 when the record asks no question (holds no "?"), else 0
//	score    = (Lexical·lexical + Semantic·semantic + Recency·recency + Time·period + Soft·soft
//	            + When·when + Label·label + Statement·stated) / (sum of the weights that apply)
//
// Time applies when the query names a period, Soft when the embedder has
// word vectors, When when the query asks for a time, Label when some
// candidate's label holds a query word; soft is computed for the best
// softCandidates by the other signals only (0 for the rest), a re-ranking
// of the head.
//
// Candidates are every record in scope that shares a word with the query
// (or neighbours one), plus up to semKeep records whose similarity comes
// within semJoin of the best. It reads plain text only.
//
// When the query cannot be embedded (embedder_unavailable: the embedder is
// down, times out, answers garbage, or takes more than half the time a
// request with a deadline has) the answer degrades instead of failing: no
// record joins by similarity, semantic is 0 and its weight leaves the sum
// of weights, and the ranking, every candidate's explanation and the
// provenance say degraded: "embedder_unavailable".
type Hybrid struct {
	Index   *index.Index
	Weights HybridWeights
}

// Name implements Provider.
func (*Hybrid) Name() string { return HybridName }

var scorePool = sync.Pool{New: func() any { return new(scoreBuf) }}

// scoreBuf holds per-document scores for one search; it is all zero
// between searches.
type scoreBuf struct {
	base, ctx, tf  []float32
	ctxTF          []float64
	touched, cands []uint32
	// timed and labelled are the candidates marked by the when and label
	// cues, sorted.
	timed, labelled []uint32
}

func (b *scoreBuf) reset(n int) {
	if cap(b.base) < n {
		b.base, b.ctx, b.tf = make([]float32, n), make([]float32, n), make([]float32, n)
	}
	if cap(b.ctxTF) < n {
		b.ctxTF = make([]float64, n)
	}
	b.base, b.ctx, b.tf, b.ctxTF = b.base[:n], b.ctx[:n], b.tf[:n], b.ctxTF[:n]
	b.touched, b.cands, b.timed, b.labelled = b.touched[:0], b.cands[:0], b.timed[:0], b.labelled[:0]
}

// clear zeroes the entries a search set.
func (b *scoreBuf) clear() {
	for _, d := range b.touched {
		b.base[d] = 0
	}
	for _, d := range b.cands {
		b.ctx[d] = 0
	}
}

type scored struct {
	doc                                                                    uint32
	score, bm25, lex, sem, rec, soft, period, capsule, when, label, stated float64
}

// Search implements Provider.
func (h *Hybrid) Search(ctx context.Context, r memory.Reader, opts SearchOptions) (Ranking, error) {
	out := Ranking{Candidates: []Candidate{}, Scoring: h.scoring()}
	if opts.Query.Syntax == memory.SyntaxFTS {
		return Ranking{}, memory.Errorf(memory.CodeInvalidParams, "the fts syntax is served by the local-fts provider; the hybrid provider reads plain text")
	}
	if opts.MaxResults <= 0 {
		return out, nil
	}
	if err := h.Index.Sync(ctx, r); err != nil {
		return Ranking{}, err
	}
	qv, degraded, err := h.queryVector(ctx, opts.Text)
	if err != nil {
		return Ranking{}, err
	}
	out.Degraded = degraded
	var ranked []scored
	var refs []memory.EntityRef
	var stats rankStats
	read := func(v *index.View) error {
		ranked, refs, stats = h.rank(v, opts, qv, out.Degraded == nil)
		return nil
	}
	err = h.Index.Read(read)
	if index.IsCorrupt(err) {
		// Never answer from a damaged index: rebuild it, then rank again.
		if err := h.Index.Repair(ctx, r); err != nil {
			return Ranking{}, err
		}
		err = h.Index.Read(read)
	}
	if err != nil {
		return Ranking{}, err
	}
	stats.params(out.Scoring.Params)
	ents, err := r.Entities(ctx, refs)
	if err != nil {
		return Ranking{}, err
	}
	byRef := make(map[memory.EntityRef]memory.Entity, len(ents))
	for _, e := range ents {
		byRef[memory.EntityRef{Type: e.Type(), ID: e.ID()}] = e
	}
	soft := h.Weights.Soft > 0 && h.Index.WordVectors() != nil
	for i, s := range ranked {
		e, ok := byRef[refs[i]]
		if !ok {
			continue // forgotten since the index last synced
		}
		out.Candidates = append(out.Candidates, Candidate{
			EntityType: e.Type(), Entity: e, Score: s.score, MatchContext: content.MatchContext(e.Content()),
			Explanation: h.explain(s, stats, soft, out.Degraded != nil),
		})
	}
	return out, nil
}

// scoring is the hybrid formula with its parameters.
func (h *Hybrid) scoring() Scoring {
	w := h.Weights
	return Scoring{Formula: hybridFormula, Params: map[string]float64{
		"lexicalWeight": w.Lexical, "semanticWeight": w.Semantic, "recencyWeight": w.Recency,
		"before": w.Before, "beforeOther": w.BeforeOther, "after": w.After, "far": w.Far, "capsule": w.Capsule,
		"soft": w.Soft, "softCandidates": softCandidates, "time": w.Time, "when": w.When, "label": w.Label, "statement": w.Statement,
		"bm25K1": lexical.K1, "bm25B": lexical.B}}
}

// queryVector embeds the query when the semantic signal applies. An
// unavailable embedder degrades the search (returned as degraded)
// rather than failing it.
func (h *Hybrid) queryVector(ctx context.Context, text string) (qv []float32, degraded, err error) {
	e := h.Index.Embedder()
	if h.Weights.Semantic <= 0 || e == nil {
		return nil, nil, nil
	}
	// A request with a deadline leaves half of its time to the embedder,
	// so that a slow one still leaves time to answer.
	ectx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ectx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(dl)/2))
		defer cancel()
	}
	v, err := embedQuery(ectx, e, text)
	switch {
	case err == nil:
		return v, nil, nil
	case memory.IsCode(err, memory.CodeEmbedderUnavailable) && ctx.Err() == nil:
		// Degrade, don't fail: rank by the other signals and say so.
		return nil, err, nil
	default:
		return nil, nil, err
	}
}

// explain is a candidate's explanation: its score and the signals that
// applied (soft: the soft word match; degraded: the query could not be
// embedded).
func (h *Hybrid) explain(s scored, stats rankStats, soft, degraded bool) memory.Explanation {
	parts := []memory.Explanation{
		{Name: "bm25", Value: s.bm25},
		{Name: "lexical", Value: s.lex},
		{Name: "semantic", Value: s.sem},
		{Name: "recency", Value: s.rec},
	}
	var code memory.Code
	if degraded {
		code = memory.CodeEmbedderUnavailable
		parts[2].Detail = "not computed: the embedder is unavailable; semanticWeight left out of the sum of weights"
	}
	if soft {
		parts = append(parts, memory.Explanation{Name: "soft", Value: s.soft})
	}
	if stats.period {
		parts = append(parts, memory.Explanation{Name: "period", Value: s.period})
	}
	if stats.when {
		parts = append(parts, memory.Explanation{Name: "tellsTime", Value: s.when})
	}
	if stats.label {
		parts = append(parts, memory.Explanation{Name: "labelled", Value: s.label})
	}
	if h.Weights.Statement > 0 {
		parts = append(parts, memory.Explanation{Name: "stated", Value: s.stated})
	}
	return memory.Explanation{Name: "score", Value: s.score, Children: parts, Degraded: code}
}

// params adds what the ranking found to the scoring's parameters.
func (st rankStats) params(p map[string]float64) {
	p["candidates"] = float64(st.candidates)
	if st.period {
		p["periodFrom"] = float64(st.from)
		p["periodTo"] = float64(st.to)
	}
	if st.pendingVectors > 0 {
		// Candidates with no vector in the active space (pending, or
		// embedded in another space only) rank on words and time alone.
		p["candidatesWithoutVector"] = float64(st.pendingVectors)
	}
}

type rankStats struct {
	candidates, pendingVectors int
	// period says the query names a period, [from, to) in Unix
	// milliseconds with the slack added.
	period   bool
	from, to int64
	// when says the query asks for a time; label that a candidate's
	// label holds a query word.
	when, label bool
}

// rank scores the index's view and returns the best MaxResults with the
// records to read back. semantic says whether the semantic signal applies
// (false when the query could not be embedded: its weight then leaves the
// sum of weights, so scores still span [0, 1]).
func (h *Hybrid) rank(v *index.View, opts SearchOptions, qv []float32, semantic bool) ([]scored, []memory.EntityRef, rankStats) {
	var st rankStats
	filter := v.Filter(opts.Scope)
	if filter.Empty {
		return nil, nil, st
	}
	for _, id := range opts.Exclude {
		for _, t := range []memory.TargetType{memory.TargetObservation, memory.TargetSummary} {
			if d, ok := v.DocOf(memory.EntityRef{Type: t, ID: id}); ok {
				filter.Exclude(d)
			}
		}
	}
	// The buffer goes back to the pool, cleared, only when ranking ends
	// normally: a read stopped by a damaged segment leaves it half set.
	buf := scorePool.Get().(*scoreBuf)
	buf.reset(v.Docs())
	ranked, refs := h.rankInto(v, opts, qv, semantic, filter, buf, &st)
	buf.clear()
	scorePool.Put(buf)
	return ranked, refs, st
}

// rankInto is rank's work, with its scratch buffer.
func (h *Hybrid) rankInto(v *index.View, opts SearchOptions, qv []float32, semantic bool, filter *index.Filter, buf *scoreBuf, stp *rankStats) ([]scored, []memory.EntityRef) {
	rp := &rankPass{w: h.Weights, v: v, opts: opts, filter: filter, buf: buf, st: stp}
	rp.gather(qv)
	wv := h.Index.WordVectors()
	rp.weigh(semantic, wv != nil)
	ranked := rp.signals()
	w := rp.w
	keep := max(softCandidates, opts.MaxResults)
	ranked = h.semantic(v, ranked, qv, rp.bestSim, rp.total, keep)
	byScore := func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return v.CompareIDs(a.doc, b.doc)
	}
	// Only the best keep are softened and returned: select them, then sort.
	ranked = best(ranked, keep, byScore)
	if wv != nil && w.Soft > 0 {
		top := ranked[:min(softCandidates, len(ranked))]
		soften(v, wv, top, opts.Query.Terms, w.Soft/rp.total)
		slices.SortFunc(top, byScore)
	}
	if len(ranked) > opts.MaxResults {
		ranked = ranked[:opts.MaxResults]
	}
	refs := make([]memory.EntityRef, len(ranked))
	for i, s := range ranked {
		refs[i] = v.Ref(s.doc)
	}
	return ranked, refs
}

// rankPass is one ranking's state: the view, the query and its scratch
// buffer, the signals that apply and their sum of weights.
type rankPass struct {
	w      HybridWeights
	v      *index.View
	opts   SearchOptions
	filter *index.Filter
	buf    *scoreBuf
	st     *rankStats
	// capBest is each capsule's best context score.
	capBest []float32
	// bestSim is the nearest record's similarity, bestLex the best
	// candidate's lexical score.
	bestSim, bestLex float64
	// total is the sum of the weights of the signals that apply.
	total float64
	// tells and labelled say whether a candidate tells a time and whether
	// its label holds a query word (nil: the signal does not apply).
	tells, labelled func(uint32) bool
}

// gather finds the candidates: the records in scope that share a word
// with the query or neighbour one (with their context scores), then the
// most similar records.
func (rp *rankPass) gather(qv []float32) {
	w, v, buf := rp.w, rp.v, rp.buf
	// The record after a match takes Before of its text (BeforeOther when
	// the match asks no question); the one before it, After; the ones two
	// away, Far.
	shares := index.Shares{Before: float32(w.Before), BeforeOther: float32(w.BeforeOther), After: float32(w.After), Far: float32(w.Far)}
	buf.touched, buf.cands = v.ContextScores(lexical.Analyze(rp.opts.Query.Terms), rp.filter, shares,
		buf.base, buf.ctx, buf.ctxTF, buf.touched, buf.cands)
	rp.capBest = make([]float32, v.Capsules()+1)
	if w.Capsule > 0 {
		for _, d := range buf.cands {
			if c := v.Capsule(d); c != 0 {
				rp.capBest[c] = max(rp.capBest[c], buf.ctx[d])
			}
		}
	}
	// Semantic: the most similar records may join the candidates; every
	// candidate gets its similarity.
	for _, hit := range v.Nearest(index.GroupSearchable, qv, semKeep, rp.filter, nil) {
		s := roundSim(float64(hit.Score))
		if rp.bestSim == 0 {
			rp.bestSim = max(0, s)
		}
		if s <= 0 || s < semJoin*rp.bestSim {
			break
		}
		if buf.ctx[hit.ID] == 0 {
			buf.ctx[hit.ID] = math.SmallestNonzeroFloat32 // a candidate with no lexical match
			buf.cands = append(buf.cands, hit.ID)
		}
	}
	if qv != nil {
		for _, d := range buf.cands {
			if !v.HasVector(d) {
				rp.st.pendingVectors++
			}
		}
	}
	for _, d := range buf.cands {
		rp.bestLex = max(rp.bestLex, rp.lexOf(d))
	}
	rp.st.candidates = len(buf.cands)
}

// lexOf is a candidate's context score with its capsule's share.
func (rp *rankPass) lexOf(d uint32) float64 {
	x := float64(rp.buf.ctx[d])
	if c := rp.v.Capsule(d); c != 0 {
		x += rp.w.Capsule * float64(rp.capBest[c])
	}
	return x
}

// weigh decides which signals apply to this search, marking the
// candidates the when and label cues find, and sums their weights
// (semantic: the query has a vector; soft: the embedder has word
// vectors), so that scores stay in [0, 1].
func (rp *rankPass) weigh(semantic, soft bool) {
	w, st, buf := rp.w, rp.st, rp.buf
	total := w.Lexical + w.Recency
	if semantic {
		total += w.Semantic
	}
	if w.When > 0 && AsksWhen(rp.opts.Text) {
		buf.timed, rp.tells = rp.mark(TimeTerms, buf.timed)
		total += w.When
		st.when = true
	}
	if w.Label > 0 {
		terms := lexical.Analyze(rp.opts.Query.Terms)
		labels := make([]string, len(terms))
		for i, t := range terms {
			labels[i] = lexical.LabelTerm(t)
		}
		if buf.labelled, rp.labelled = rp.mark(labels, buf.labelled); len(buf.labelled) > 0 {
			total += w.Label
			st.label = true
		}
	}
	total += w.Statement
	if w.Time > 0 {
		if from, to, ok := QueryPeriod(rp.opts.Text); ok {
			st.period, st.from, st.to = true, from, to+PeriodSlack.Milliseconds()
			total += w.Time
		}
	}
	if soft && w.Soft > 0 {
		total += w.Soft
	}
	if total == 0 {
		total = 1
	}
	rp.total = total
}

// mark appends to into the candidates that hold one of terms (given a
// BM25 over them in the scratch tf, zeroed again at once), sorted, and
// returns them with whether a candidate is among them.
func (rp *rankPass) mark(terms []string, into []uint32) ([]uint32, func(uint32) bool) {
	buf := rp.buf
	into = rp.v.Scores(terms, rp.filter, func(d uint32) bool { return buf.ctx[d] != 0 }, buf.tf, into)
	for _, d := range into {
		buf.tf[d] = 0
	}
	slices.Sort(into)
	return into, func(d uint32) bool {
		_, ok := slices.BinarySearch(into, d)
		return ok
	}
}

// signals computes every signal but the semantic one, per candidate.
func (rp *rankPass) signals() []scored {
	v, st, buf := rp.v, rp.st, rp.buf
	ranked := make([]scored, 0, len(buf.cands))
	for _, d := range buf.cands {
		var lex float64
		if rp.bestLex > 0 {
			lex = rp.lexOf(d) / rp.bestLex
		}
		ts := v.TS(d)
		rec := math.Min(1, math.Max(0, 1-float64(rp.opts.Now-ts)/RecencyWindowMillis))
		var period float64
		if st.period && ts >= st.from && ts < st.to {
			period = 1
		}
		var when float64
		if rp.tells != nil && rp.tells(d) {
			when = 1
		}
		var label, statement float64
		if rp.labelled != nil && rp.labelled(d) {
			label = 1
		}
		if !v.Asks(d) {
			statement = 1
		}
		ranked = append(ranked, scored{doc: d, bm25: float64(buf.base[d]), lex: lex, rec: rec, period: period, when: when, label: label, stated: statement})
	}
	return ranked
}

// semantic gives the candidates their semantic signal and scores, and
// returns those that can be among the best keep; the others are left out
// unscored. A record's similarity is read only when its score could reach
// the best keep: every candidate's score lies between its score with
// semantic 0 (lb) and with semantic 1 (ub), so once keep candidates score
// at least L, a candidate whose ub is below L cannot be among them. On a
// large memory this reads a few hundred vectors instead of every
// candidate's, with the same result.
func (h *Hybrid) semantic(v *index.View, cs []scored, qv []float32, bestSim, total float64, keep int) []scored {
	w := h.Weights
	// score sums the signals in one fixed order, so that equal inputs give
	// equal scores and a larger sem never a smaller one.
	score := func(c *scored, sem float64) float64 {
		return Round10((w.Lexical*c.lex + w.Semantic*sem + w.Recency*c.rec + w.Time*c.period + w.When*c.when + w.Label*c.label + w.Statement*c.stated) / total)
	}
	if qv == nil || bestSim <= 0 || w.Semantic == 0 {
		for i := range cs {
			cs[i].score = score(&cs[i], 0)
		}
		return cs
	}
	floor := math.Inf(-1)
	if len(cs) > keep {
		lbs := make([]float64, len(cs))
		for i := range cs {
			lbs[i] = score(&cs[i], 0)
		}
		floor = best(lbs, keep, func(a, b float64) int { return cmp.Compare(b, a) })[keep-1]
	}
	out := cs[:0]
	for i := range cs {
		c := cs[i]
		if score(&c, 1) < floor {
			continue
		}
		if s, ok := v.Similarity(qv, c.doc); ok {
			c.sem = math.Min(1, max(0, roundSim(s))/bestSim)
		}
		c.score = score(&c, c.sem)
		out = append(out, c)
	}
	return out
}

// best returns the k first of xs in the order cmp gives, sorted (all of
// them when there are fewer), reordering xs: a bounded heap keeps the k
// best seen, so picking the best of many costs n·log k, not a full sort.
func best[T any](xs []T, k int, cmp func(a, b T) int) []T {
	if len(xs) <= k {
		slices.SortFunc(xs, cmp)
		return xs
	}
	h := xs[:0:0]
	h = make([]T, 0, k)
	// h is a heap with the worst kept at the root.
	worse := func(i, j int) bool { return cmp(h[i], h[j]) > 0 }
	down := func(i int) {
		for {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && worse(l, m) {
				m = l
			}
			if r < len(h) && worse(r, m) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for _, x := range xs {
		if len(h) < k {
			h = append(h, x)
			for i := len(h) - 1; i > 0 && worse(i, (i-1)/2); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
			continue
		}
		if cmp(x, h[0]) < 0 {
			h[0] = x
			down(0)
		}
	}
	slices.SortFunc(h, cmp)
	return h
}

// roundSim rounds a cosine similarity to 6 decimals: float32 dot products
// summed in a different order (SIMD or not, another CPU) differ in the 8th
// digit, and results must be the same everywhere.
func roundSim(s float64) float64 { return math.Round(s*1e6) / 1e6 }

const hybridFormula = "score = (lexicalWeight × lexical + semanticWeight × semantic + recencyWeight × recency + time × period + soft × softMatch + when × tellsTime + label × labelled + statement × stated) / " +
	"the sum of the weights that apply (time when the query names a period, soft with word vectors, when when the query asks for a time, label when a candidate's label holds a query word); " +
	"bm25 is the record's own BM25 (Porter2 stems, stopwords dropped, k1 bm25K1, b bm25B); " +
	"context is the BM25 of the record with its neighbours' text as a weighted field: each term's frequency adds before × its frequency in the record before it in its capsule (beforeOther when that record asks no question), after × in the record after it and far × in the records two away; " +
	"lexical = (context + capsule × the best context in its capsule) / the best candidate's; " +
	"semantic = cosine(query, record) / the best similarity in scope (the nearest record's), at most 1; recency = min(1, max(0, 1 − age / 30 days)); " +
	"period = 1 when the query names a day, month or year (periodFrom to periodTo, a week of slack included) and the record is from it, else 0; " +
	"softMatch (the best softCandidates only, with word vectors) = Σ over query words of idf × the best cosine with a word of the record, / Σ idf; " +
	"tellsTime = 1 when the query asks when (when, what year, how long, how often) and the record holds a time word (yesterday, last, week, a month or day name, a year), else 0; " +
	"labelled = 1 when the words before a colon the record opens with (a speaker, a subject: \"Alice: ...\") hold a query word, else 0; stated = 1 when the record holds no \"?\", else 0"

// ParseHybridWeights reads "lexical=0.6,semantic=0.5,recency=0.1,before=0.5,beforeOther=0.1,after=0.5,far=0.2,capsule=0.5,soft=0.35,time=0.25,when=0.2,label=0.15,statement=0.06"
// over the defaults; keys left out keep their default.
func ParseHybridWeights(s string) (HybridWeights, error) {
	w := DefaultHybridWeights
	if strings.TrimSpace(s) == "" {
		return w, nil
	}
	fields := map[string]*float64{"lexical": &w.Lexical, "semantic": &w.Semantic, "recency": &w.Recency,
		"before": &w.Before, "beforeOther": &w.BeforeOther, "after": &w.After, "far": &w.Far, "capsule": &w.Capsule,
		"soft": &w.Soft, "time": &w.Time, "when": &w.When, "label": &w.Label, "statement": &w.Statement}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		p := fields[strings.TrimSpace(k)]
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || p == nil || err != nil || f < 0 || f > 10 || math.IsNaN(f) {
			return w, memory.Errorf(memory.CodeInvalidParams,
				"hybrid weights %q: want key=value pairs (lexical, semantic, recency, before, beforeOther, after, far, capsule, soft, time, when, label, statement) with values from 0 to 10", s)
		}
		*p = f
	}
	return w, nil
}

// soften adds weight times the soft word match to the candidates' scores:
// each query word is matched to the closest known word of the record by
// cosine of word vectors (an exact match is 1), the matches weighted by
// the query words' idf. A query word the memory never saw weighs as the
// rarest word.
func soften(v *index.View, wv embed.WordVectors, cands []scored, words []string, weight float64) {
	var q []int32
	var qw []float64
	var total float64
	rarest := math.Log(1 + float64(v.Live()))
	for _, w := range words {
		ids := wv.WordIDs(w, nil)
		if len(ids) == 0 {
			continue
		}
		idf := rarest
		if t := lexical.Analyze([]string{w}); len(t) == 1 {
			if x := v.IDF(t[0]); x > 0 {
				idf = x
			}
		}
		q, qw = append(q, ids[0]), append(qw, idf)
		total += idf
	}
	if total == 0 {
		return
	}
	for i := range cands {
		var s float64
		ws := v.Words(cands[i].doc)
		for j, qi := range q {
			var best float32
			for _, d := range ws {
				best = max(best, wv.WordCosine(qi, d))
			}
			s += qw[j] * float64(best)
		}
		cands[i].soft = roundSim(s / total)
		cands[i].score = Round10(cands[i].score + weight*cands[i].soft)
	}
}
