package postgres

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"github.com/jackc/pgx/v5"
)

// The local-fts contract on PostgreSQL. Records carry their terms as FTS5
// would index them (ftsDoc); a query is parsed as FTS5 parses it
// (parseFTS); a GIN index on the terms finds the candidates; and each is
// ranked by FTS5's bm25, computed from the same statistics FTS5 keeps (the
// number of indexed rows and of their tokens, per table, in fts_stats; the
// rows holding each phrase, counted at query time), so ranks agree with
// the SQLite store's to the last few bits. Queries whose every phrase is a
// single term, in shapes where every occurrence of a term counts, are
// ranked in SQL (the bm25 function of the schema); the others (phrases,
// NEAR, ^, and NOT or AND below an OR) are matched and ranked in cairn
// from the candidates' term positions.

// The bm25 constants of FTS5.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// parseTextQuery parses a query of either syntax; malformed FTS syntax is
// invalid_params quoting FTS5's reason.
func parseTextQuery(q memory.TextQuery) (*ftsQuery, error) {
	expr, err := sqlstore.MatchExpr(q)
	if err != nil {
		return nil, err
	}
	pq, err := parseFTS(expr)
	var se *ftsSyntaxError
	switch {
	case errors.As(err, &se) && q.Syntax == memory.SyntaxFTS:
		reason := strings.TrimPrefix(se.reason, "fts5: ")
		if col, ok := strings.CutPrefix(reason, "no such column: "); ok {
			reason = "unknown column " + `"` + col + `" (the only column is content; quote words that contain ':' or '-')`
		}
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "malformed FTS query: %s", reason)
	case err != nil:
		return nil, memory.Wrap(memory.CodeInternal, err, "the full-text engine rejected a text query")
	}
	return pq, nil
}

// searchText runs a full-text search: each table's best matches by
// FTS5's bm25, in scope, without the excluded ids.
func searchText(ctx context.Context, tx queryer, ts memory.TextSearch) (memory.TextResult, error) {
	var res memory.TextResult
	q, err := parseTextQuery(ts.Query)
	if err != nil || ts.Limit <= 0 {
		return res, err
	}
	plan := planSearch(q)
	if plan.filter == "" {
		return res, nil // the query matches nothing
	}
	if res.Observations, err = searchTable(ctx, tx, plan, ts, obsTable); err == nil {
		res.Summaries, err = searchTable(ctx, tx, plan, ts, sumTable)
	}
	if err != nil {
		return memory.TextResult{}, dbError(err, "searching")
	}
	return res, nil
}

// searchPlan is how a parsed query runs.
type searchPlan struct {
	q *ftsQuery
	// filter is a tsquery every matching row meets ("" when no row can
	// match); exact says it is met by exactly the matching rows.
	filter string
	exact  bool
	// simple says the query is ranked in SQL: every phrase is one term
	// (no ^, no NEAR group) and every occurrence of a term in a matching
	// row counts.
	simple bool
	// phraseTS is each phrase's tsquery ("" for an empty phrase).
	phraseTS []string
	// lexemes and prefixes are the query's exact and prefix terms.
	lexemes, prefixes []string
}

func planSearch(q *ftsQuery) searchPlan {
	p := searchPlan{q: q}
	for _, ph := range q.phrases {
		p.phraseTS = append(p.phraseTS, phraseTSQuery(ph))
		for _, t := range ph.terms {
			if t.prefix {
				p.prefixes = append(p.prefixes, t.text)
			} else {
				p.lexemes = append(p.lexemes, t.text)
			}
		}
	}
	p.filter, p.exact = tsFilter(q.root)
	p.simple = p.exact && simpleRoot(q.root)
	return p
}

// phraseTSQuery is a phrase as a tsquery: its terms in sequence.
func phraseTSQuery(ph *ftsPhrase) string {
	var b strings.Builder
	for i, t := range ph.terms {
		if i > 0 {
			b.WriteString(" <-> ")
		}
		writeLexeme(&b, t.text)
		if t.prefix {
			b.WriteString(":*")
		}
	}
	return b.String()
}

// tsFilter renders a node as a tsquery that every row it matches meets
// ("" when it matches nothing), and whether exactly those rows meet it.
func tsFilter(n *ftsNode) (string, bool) {
	switch n.op {
	case opEOF:
		return "", true
	case opNear:
		if n.none {
			return "", true
		}
		var parts []string
		for _, ph := range n.phrases {
			parts = append(parts, "("+phraseTSQuery(ph)+")")
		}
		exact := len(n.phrases) == 1 && !n.phrases[0].first
		return strings.Join(parts, " & "), exact
	case opAnd:
		var parts []string
		exact := true
		for _, k := range n.kids {
			f, e := tsFilter(k)
			if f == "" {
				return "", true
			}
			parts = append(parts, "("+f+")")
			exact = exact && e
		}
		return strings.Join(parts, " & "), exact
	case opOr:
		var parts []string
		exact := true
		for _, k := range n.kids {
			f, e := tsFilter(k)
			if f == "" {
				continue
			}
			parts = append(parts, "("+f+")")
			exact = exact && e
		}
		if len(parts) == 0 {
			return "", true
		}
		return strings.Join(parts, " | "), exact
	case opNot:
		l, le := tsFilter(n.kids[0])
		if l == "" {
			return "", true
		}
		r, re := tsFilter(n.kids[1])
		if r == "" {
			return l, le
		}
		if !re {
			return l, false // the right side is only approximated: keep every row of the left
		}
		return "(" + l + ") & !(" + r + ")", le
	}
	return "", true
}

// simpleRoot reports whether every occurrence of a query term in a
// matching row counts for bm25: the root is a term, an OR of terms, a
// NOT whose right side is a term or an OR of terms, or an AND of those.
func simpleRoot(n *ftsNode) bool {
	if n.op == opAnd {
		for _, k := range n.kids {
			if !simpleAndKid(k) {
				return false
			}
		}
		return true
	}
	return simpleAndKid(n)
}

func simpleAndKid(n *ftsNode) bool {
	if n.op == opNot {
		return simpleAndKid(n.kids[0]) && (isTerm(n.kids[1]) || isOrOfTerms(n.kids[1]))
	}
	return isTerm(n) || isOrOfTerms(n)
}

func isTerm(n *ftsNode) bool {
	return n.op == opNear && !n.none && len(n.phrases) == 1 && len(n.phrases[0].terms) == 1 && !n.phrases[0].first
}

func isOrOfTerms(n *ftsNode) bool {
	if n.op != opOr {
		return false
	}
	for _, k := range n.kids {
		if !isTerm(k) {
			return false
		}
	}
	return true
}

// ftsTable describes a full-text table and how to read its hits.
type ftsTable struct {
	name, alias, columns string
	scan                 func(s sqlstore.Scanner, rank *float64) (memory.Entity, error)
}

var obsTable = ftsTable{"observations", "o", sqlstore.ObsColumns, func(s sqlstore.Scanner, rank *float64) (memory.Entity, error) {
	o, err := sqlstore.ScanObservation(s, rank)
	return memory.ObservationEntity(o), err
}}

var sumTable = ftsTable{"summaries", "s", sqlstore.SumColumns, func(s sqlstore.Scanner, rank *float64) (memory.Entity, error) {
	m, err := sqlstore.ScanSummary(s, rank)
	return memory.SummaryEntity(m), err
}}

// corpus is what bm25 needs of a table: its indexed rows, their tokens,
// and the rows holding each phrase.
type corpus struct {
	rows, tokens int64
	hits         []int64
}

func (c corpus) avgdl() float64 { return float64(c.tokens) / float64(c.rows) }

// idf is FTS5's: log((N − n + 0.5) / (n + 0.5)), at least 1e-6.
func (c corpus) idf(i int) float64 {
	idf := math.Log((float64(c.rows-c.hits[i]) + 0.5) / (float64(c.hits[i]) + 0.5))
	if idf <= 0 {
		idf = 1e-6
	}
	return idf
}

// readCorpus reads a table's statistics and counts the rows holding each
// phrase, in one round trip.
func readCorpus(ctx context.Context, tx queryer, t ftsTable, p searchPlan) (corpus, error) {
	c := corpus{hits: make([]int64, len(p.q.phrases))}
	b := &pgx.Batch{}
	b.Queue("SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM fts_stats WHERE tbl = $1", t.name).QueryRow(func(r pgx.Row) error {
		return r.Scan(&c.rows, &c.tokens)
	})
	for i, ph := range p.q.phrases {
		if len(ph.terms) == 0 {
			continue
		}
		q := "SELECT count(*) FROM " + t.name + " x WHERE x.fts @@ $1::tsquery"
		args := []any{p.phraseTS[i]}
		if ph.first {
			// A ^phrase counts the rows it starts.
			terms, pre := phraseArrays(ph)
			q += ` AND (SELECT count(DISTINCT t.i) FROM unnest($2::text[], $3::boolean[]) WITH ORDINALITY t(term, pre, i)
				JOIN unnest(x.fts) u ON u.lexeme = t.term OR (t.pre AND starts_with(u.lexeme, t.term))
				WHERE t.i::smallint = ANY(u.positions)) = cardinality($2::text[])`
			args = append(args, terms, pre)
		}
		b.Queue(q, args...).QueryRow(func(r pgx.Row) error { return r.Scan(&c.hits[i]) })
	}
	err := tx.SendBatch(ctx, b).Close()
	return c, err
}

func phraseArrays(ph *ftsPhrase) ([]string, []bool) {
	terms, pre := make([]string, len(ph.terms)), make([]bool, len(ph.terms))
	for i, t := range ph.terms {
		terms[i], pre[i] = t.text, t.prefix
	}
	return terms, pre
}

// searchTable returns a table's best ts.Limit hits, best bm25 first (ties
// by id).
func searchTable(ctx context.Context, tx queryer, p searchPlan, ts memory.TextSearch, t ftsTable) ([]memory.TextHit, error) {
	c, err := readCorpus(ctx, tx, t, p)
	if err != nil || c.rows == 0 {
		return nil, err
	}
	if p.simple {
		return rankInSQL(ctx, tx, p, c, ts, t)
	}
	return rankInGo(ctx, tx, p, c, ts, t)
}

// rankInSQL ranks with the schema's bm25 function.
func rankInSQL(ctx context.Context, tx queryer, p searchPlan, c corpus, ts memory.TextSearch, t ftsTable) ([]memory.TextHit, error) {
	n := len(p.q.phrases)
	terms, pre, idf := make([]string, n), make([]bool, n), make([]float64, n)
	for i, ph := range p.q.phrases {
		if len(ph.terms) == 1 {
			terms[i], pre[i] = ph.terms[0].text, ph.terms[0].prefix
		}
		idf[i] = c.idf(i)
	}
	q := newQuery("")
	a := t.alias
	q.add("SELECT " + t.columns + ", bm25(" + a + ".fts, " + a + ".fts_len, " + q.arg(terms) + "::text[], " + q.arg(pre) + "::boolean[], " +
		q.arg(idf) + "::float8[], " + q.arg(c.avgdl()) + "::float8) AS r FROM " + t.name + " " + a +
		" WHERE " + a + ".fts @@ " + q.arg(p.filter) + "::tsquery AND NOT " + a + ".redacted")
	q.scope(a, ts.Scope)
	q.notIn(a+".id", ts.Exclude)
	q.add(" ORDER BY r, " + a + ".id LIMIT " + q.arg(ts.Limit))
	var hits []memory.TextHit
	err := sqlstore.EachRow(ctx, querier{tx}, q.sql.String(), q.args, func(s sqlstore.Scanner) error {
		var h memory.TextHit
		var err error
		h.Entity, err = t.scan(s, &h.Rank)
		hits = append(hits, h)
		return err
	})
	return hits, err
}

// candidate is a row that may match, with the positions of the query's
// terms in it.
type candidate struct {
	seq  int64
	id   string
	len  int
	rank float64
}

// rankInGo matches the candidates against the query exactly (phrases,
// NEAR, ^) and ranks them in cairn.
func rankInGo(ctx context.Context, tx queryer, p searchPlan, c corpus, ts memory.TextSearch, t ftsTable) ([]memory.TextHit, error) {
	q := newQuery("")
	a := t.alias
	q.add("SELECT " + a + ".seq, " + a + ".id, " + a + ".fts_len, (SELECT coalesce(string_agg(u.lexeme || ':' || array_to_string(u.positions, ','), ' '), '')" +
		" FROM unnest(" + a + ".fts) u WHERE u.lexeme = ANY(" + q.arg(p.lexemes) + "::text[]) OR EXISTS (SELECT 1 FROM unnest(" +
		q.arg(p.prefixes) + "::text[]) pre WHERE starts_with(u.lexeme, pre))) FROM " + t.name + " " + a +
		" WHERE " + a + ".fts @@ " + q.arg(p.filter) + "::tsquery AND NOT " + a + ".redacted")
	q.scope(a, ts.Scope)
	q.notIn(a+".id", ts.Exclude)
	idf := make([]float64, len(p.q.phrases))
	for i := range idf {
		idf[i] = c.idf(i)
	}
	avgdl := c.avgdl()
	var cands []candidate
	err := sqlstore.EachRow(ctx, querier{tx}, q.sql.String(), q.args, func(s sqlstore.Scanner) error {
		var cd candidate
		var pos string
		if err := s.Scan(&cd.seq, &cd.id, &cd.len, &pos); err != nil {
			return err
		}
		tf, ok := p.q.match(parsePositions(pos))
		if !ok {
			return nil
		}
		cd.rank = bm25(idf, tf, float64(cd.len), avgdl)
		cands = append(cands, cd)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cands, func(x, y candidate) int {
		if x.rank != y.rank {
			if x.rank < y.rank {
				return -1
			}
			return 1
		}
		return strings.Compare(x.id, y.id)
	})
	cands = cands[:min(len(cands), ts.Limit)]
	if len(cands) == 0 {
		return nil, nil
	}
	seqs := make([]int64, len(cands))
	for i, cd := range cands {
		seqs[i] = cd.seq
	}
	bySeq := map[int64]memory.Entity{}
	err = sqlstore.EachRow(ctx, querier{tx}, "SELECT "+a+".seq, "+t.columns+" FROM "+t.name+" "+a+" WHERE "+a+".seq = ANY($1)", []any{seqs}, func(s sqlstore.Scanner) error {
		var seq int64
		e, err := t.scan(seqFirst{s, &seq}, nil)
		bySeq[seq] = e
		return err
	})
	if err != nil {
		return nil, err
	}
	hits := make([]memory.TextHit, len(cands))
	for i, cd := range cands {
		hits[i] = memory.TextHit{Entity: bySeq[cd.seq], Rank: cd.rank}
	}
	return hits, nil
}

// seqFirst scans a leading seq column, then the rest.
type seqFirst struct {
	s   sqlstore.Scanner
	seq *int64
}

func (f seqFirst) Scan(dest ...any) error {
	if len(dest) > 0 {
		if p, ok := dest[len(dest)-1].(*float64); ok && p == nil {
			dest = dest[:len(dest)-1]
		}
	}
	return f.s.Scan(append([]any{f.seq}, dest...)...)
}

// bm25 is FTS5's bm25 for a row of length dl whose phrase i occurs tf[i]
// times: the same operations in the same order, so the same double.
// (The conversions keep the compiler from fusing a multiply and an add,
// which would round once where C rounds twice.)
func bm25(idf, tf []float64, dl, avgdl float64) float64 {
	k1, b, one := bm25K1, bm25B, 1.0
	score := 0.0
	for i := range idf {
		num := float64(tf[i] * float64(k1+one))
		den := tf[i] + float64(k1*float64(float64(one-b)+float64(float64(b*dl)/avgdl)))
		score += float64(float64(idf[i]*num) / den)
	}
	return -1.0 * score
}

// parsePositions reads "lexeme:1,5 other:2" into 0-based token offsets.
func parsePositions(s string) map[string][]int {
	out := map[string][]int{}
	for _, f := range strings.Fields(s) {
		i := strings.LastIndexByte(f, ':')
		if i < 0 {
			continue
		}
		var ps []int
		for _, n := range strings.Split(f[i+1:], ",") {
			if v, err := strconv.Atoi(n); err == nil {
				ps = append(ps, v-1)
			}
		}
		out[f[:i]] = ps
	}
	return out
}
