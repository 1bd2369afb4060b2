package cairn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
	"github.com/cairnhq/cairn/sqlite"
)

// The parity test replays requests recorded from the reference
// implementation of the tiered retrieval contract (Kindling v0.1.2) and
// checks cairn returns the same pins, current summary, candidates (scores
// within 1e-9, order equal up to runs of equal scores) and provenance.
//
// Where the reference falls short of the contract, cairn departs on
// purpose; each case that hits a departure is counted under the rule it
// follows, and each rule has its own test elsewhere:
//
//   - malformed-fts: the reference swallowed FTS5 syntax errors into an
//     empty candidate list or threw an untyped engine error; cairn's fts
//     syntax returns a typed invalid_params error (TestFTSSyntaxErrors).
//   - empty-query: a blank query is invalid_params, not an empty list
//     (TestRetrieveBadInput).
//   - empty-scope-value: a scope key with an empty value is invalid_params;
//     the reference filtered candidates on it but ignored it for pins
//     (TestRetrieveBadInput).
//   - token-budget: the reference ignored tokenBudget; cairn applies the
//     contract's algorithm. The untruncated list is checked for parity and
//     the cut for the algorithm (TestTokenBudget).
//
// Every other difference fails the test. Requests without maxCandidates
// are sent with the reference's default of 10: cairn's own default is the
// contract's 50 (TestDefaultMaxCandidates).

const parityDataset = "testdata/kindling-parity/dataset.json"

type parityCase struct {
	ID        string `json:"id"`
	Group     string `json:"group"`
	QueryForm string `json:"queryForm"`
	Note      string `json:"note"`
	Source    *struct {
		SampleID string   `json:"sampleId"`
		Question string   `json:"question"`
		Category int      `json:"category"`
		Evidence []string `json:"evidence"`
	} `json:"source"`
	Now      int64           `json:"now"`
	Input    json.RawMessage `json:"input"`
	Expected struct {
		Error *struct {
			Name    string `json:"name"`
			Message string `json:"message"`
		} `json:"error"`
		Pins []struct {
			Pin        memory.Pin      `json:"pin"`
			TargetType string          `json:"targetType"`
			Target     json.RawMessage `json:"target"`
		} `json:"pins"`
		CurrentSummary *memory.Summary `json:"currentSummary"`
		Candidates     []struct {
			ID           string  `json:"id"`
			EntityType   string  `json:"entityType"`
			Score        float64 `json:"score"`
			MatchContext string  `json:"matchContext"`
		} `json:"candidates"`
		Provenance struct {
			Query                     string          `json:"query"`
			ScopeIDs                  json.RawMessage `json:"scopeIds"`
			TotalCandidates           int             `json:"totalCandidates"`
			ReturnedCandidates        int             `json:"returnedCandidates"`
			TruncatedDueToTokenBudget bool            `json:"truncatedDueToTokenBudget"`
			ProviderUsed              string          `json:"providerUsed"`
		} `json:"provenance"`
	} `json:"expected"`
}

type parityInput struct {
	Query           string          `json:"query"`
	ScopeIDs        json.RawMessage `json:"scopeIds"`
	TokenBudget     *int            `json:"tokenBudget"`
	MaxCandidates   *int            `json:"maxCandidates"`
	IncludeRedacted bool            `json:"includeRedacted"`
}

// parityEnv is a database loaded with the parity dataset, a clock the
// cases set, and a second handle on the store for checking tie rules.
type parityEnv struct {
	eng   *cairn.Engine
	store memory.TextSearcher
	now   time.Time
	// tied lists the cases whose id sets differed only by an unspecified tie.
	tied []string
}

func loadParity(t testing.TB) *parityEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "parity.db")
	return loadParityAt(t, path, "", func() (memory.Store, error) { return sqlite.Open(path, nil) })
}

// loadParityAt loads the dataset into the database at path (a file or a
// PostgreSQL URL), with the retrieval index in indexDir ("": the
// default); second opens another handle on the same store.
func loadParityAt(t testing.TB, path, indexDir string, second func() (memory.Store, error)) *parityEnv {
	t.Helper()
	env := &parityEnv{}
	eng, err := cairn.Open(path, &cairn.Options{Now: func() time.Time { return env.now }, IndexDir: indexDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	f, err := os.Open(parityDataset)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env.now = time.UnixMilli(1706918400000)
	rep, err := eng.Import(context.Background(), f, cairn.ImportOptions{})
	if err != nil {
		t.Fatalf("importing the parity dataset: %v", err)
	}
	if rep.Format != cairn.FormatParity || rep.Observations != 2080 || rep.Capsules != 99 || rep.Summaries != 97 || rep.Pins != 9 || len(rep.Skipped) != 1 {
		t.Fatalf("import report = %+v; want 2080 observations, 99 capsules, 97 summaries, 9 pins and the dangling pin skipped", rep)
	}
	store, err := second()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	env.eng, env.store = eng, store
	return env
}

func parityCasesPath() string {
	if p := os.Getenv("KINDLING_PARITY_CASES"); p != "" {
		return p
	}
	return "testdata/kindling-parity/cases.json"
}

func loadCases(t *testing.T) []parityCase {
	t.Helper()
	path := parityCasesPath()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading parity cases: %v", err)
	}
	var file struct {
		Format string       `json:"format"`
		Count  int          `json:"count"`
		Cases  []parityCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	if file.Format != "kindling-parity-cases/v1" || len(file.Cases) == 0 || (file.Count != 0 && file.Count != len(file.Cases)) {
		t.Fatalf("%s: format %q with %d cases (count %d)", path, file.Format, len(file.Cases), file.Count)
	}
	return file.Cases
}

func TestKindlingParity(t *testing.T) { runParity(t, loadParity(t)) }

// runParity runs every case against env and reports the departures.
func runParity(t *testing.T, env *parityEnv) {
	cases := loadCases(t)
	passed := 0
	departures := map[string][]string{}
	var failures []string
	for _, c := range cases {
		rule, err := env.check(c)
		switch {
		case err != nil:
			failures = append(failures, fmt.Sprintf("%s (%s): %v", c.ID, c.Note, err))
		case rule != "":
			departures[rule] = append(departures[rule], c.ID)
		default:
			passed++
		}
	}
	var rules []string
	for r := range departures {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	nDep := 0
	report := fmt.Sprintf("kindling parity on %s: %d cases, %d passed", parityCasesPath(), len(cases), passed)
	for _, r := range rules {
		nDep += len(departures[r])
		report += fmt.Sprintf("\n  departure %-18s %3d: %s", r, len(departures[r]), strings.Join(departures[r], " "))
	}
	report += fmt.Sprintf("\n  departures %d, failures %d; cases differing only within an unspecified tie: %v", nDep, len(failures), env.tied)
	t.Log(report)
	for _, f := range failures {
		t.Error(f)
	}
}

// check runs one case in fts syntax and reports the departure rule it
// follows ("" for plain parity) or why it fails.
func (env *parityEnv) check(c parityCase) (string, error) {
	ctx := context.Background()
	env.now = time.UnixMilli(c.Now)
	var in parityInput
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return "", fmt.Errorf("decoding input: %v", err)
	}
	req := cairn.RetrieveRequest{Query: in.Query, Syntax: memory.SyntaxFTS, TokenBudget: in.TokenBudget,
		MaxCandidates: in.MaxCandidates, IncludeRedacted: in.IncludeRedacted}
	if req.MaxCandidates == nil {
		ten := 10
		req.MaxCandidates = &ten
	}
	scopeErr := json.Unmarshal(in.ScopeIDs, &req.ScopeIDs)
	exp := c.Expected

	var res cairn.RetrieveResult
	err := scopeErr
	if err == nil {
		res, err = env.eng.Retrieve(ctx, req)
	}
	if err != nil {
		if memory.CodeOf(err) != memory.CodeInvalidParams {
			return "", fmt.Errorf("error %v is not invalid_params", err)
		}
		if exp.Error == nil && len(exp.Candidates) > 0 {
			return "", fmt.Errorf("cairn refused a request the reference answered with %d candidates: %v", len(exp.Candidates), err)
		}
		switch {
		case scopeErr != nil:
			return "empty-scope-value", nil
		case strings.TrimSpace(in.Query) == "":
			return "empty-query", nil
		case strings.Contains(err.Error(), "malformed FTS query"):
			return "malformed-fts", nil
		}
		return "", fmt.Errorf("unexpected invalid_params: %v", err)
	}
	if exp.Error != nil {
		return "", fmt.Errorf("the reference threw %s (%s) but cairn answered", exp.Error.Name, exp.Error.Message)
	}
	if err := comparePins(exp.Pins, res.Pins); err != nil {
		return "", err
	}
	if err := compareSummary(exp.CurrentSummary, res.CurrentSummary); err != nil {
		return "", err
	}
	p := res.Provenance
	var wantScope, gotScope any
	json.Unmarshal(exp.Provenance.ScopeIDs, &wantScope)
	b, _ := json.Marshal(p.ScopeIDs)
	json.Unmarshal(b, &gotScope)
	if p.Query != exp.Provenance.Query || fmt.Sprint(wantScope) != fmt.Sprint(gotScope) || p.ProviderUsed != exp.Provenance.ProviderUsed {
		return "", fmt.Errorf("provenance %+v; want query %q scope %s provider %s", p, exp.Provenance.Query, exp.Provenance.ScopeIDs, exp.Provenance.ProviderUsed)
	}

	full := res
	rule := ""
	if req.TokenBudget != nil {
		// Check the untruncated list for parity, and the cut against the
		// contract's algorithm.
		req.TokenBudget = nil
		if full, err = env.eng.Retrieve(ctx, req); err != nil {
			return "", err
		}
		kept, _, truncated := retrieve.ApplyTokenBudget(full, in.TokenBudget, func(s string) int { return (len([]rune(s)) + 3) / 4 })
		if !sameIDs(kept, res.Candidates) || truncated != p.TruncatedDueToTokenBudget || p.TotalCandidates != len(full.Candidates) || p.ReturnedCandidates != len(res.Candidates) {
			return "", fmt.Errorf("token budget %d: kept %d of %d (truncated %v, total %d); the contract's algorithm keeps %d (truncated %v)",
				*in.TokenBudget, len(res.Candidates), len(full.Candidates), p.TruncatedDueToTokenBudget, p.TotalCandidates, len(kept), truncated)
		}
		if truncated {
			rule = "token-budget"
		}
	} else if p.TruncatedDueToTokenBudget || p.TotalCandidates != exp.Provenance.TotalCandidates || p.ReturnedCandidates != exp.Provenance.ReturnedCandidates {
		return "", fmt.Errorf("provenance counts total %d returned %d truncated %v; want %d %d %v", p.TotalCandidates, p.ReturnedCandidates,
			p.TruncatedDueToTokenBudget, exp.Provenance.TotalCandidates, exp.Provenance.ReturnedCandidates, exp.Provenance.TruncatedDueToTokenBudget)
	}
	if err := env.compareCandidates(c, req, full); err != nil {
		if ok, ferr := env.futureRecency(c, full); ok {
			return "future-recency", nil
		} else if ferr != nil {
			return "", fmt.Errorf("%v; as the future-recency departure: %v", err, ferr)
		}
		return "", err
	}
	return rule, nil
}

// futureRecency checks the departure for records dated after the request's
// clock: the reference gives them a recency over 1 (1 − a negative age / 30
// days), so a timestamp in the future outranks what matches the query;
// cairn counts them as written now (recency 1). Each such record's score
// must be the reference's less recencyWeight × (its recency − 1) (where
// the reference's was clamped at 1, the reference's recency must clamp
// cairn's lexical part too), every other score the reference's; a
// reference candidate cairn left out must be one of these, now scoring
// under cairn's last, and one cairn added must score under the
// reference's last. It reports whether the case is this departure.
func (env *parityEnv) futureRecency(c parityCase, got cairn.RetrieveResult) (bool, error) {
	gotBy := map[string]retrieve.Candidate{}
	for _, g := range got.Candidates {
		gotBy[g.Entity.ID()] = g
	}
	exp := c.Expected.Candidates
	if len(exp) == 0 || len(got.Candidates) == 0 {
		return false, nil
	}
	lastGot := got.Candidates[len(got.Candidates)-1].Score
	future := false
	inRef := map[string]bool{}
	for _, e := range exp {
		inRef[e.ID] = true
		ts, err := env.recordTime(e.ID, e.EntityType)
		if err != nil {
			return false, err
		}
		g, ok := gotBy[e.ID]
		if ts <= c.Now {
			if !ok {
				return false, fmt.Errorf("the reference's %s, dated before the clock, is not among cairn's candidates", e.ID)
			}
			if math.Abs(g.Score-e.Score) > 1e-9 {
				return false, fmt.Errorf("%s, dated before the clock: score %.10f, want the reference's %.10f", e.ID, g.Score, e.Score)
			}
			continue
		}
		future = true
		rec := 1 - float64(c.Now-ts)/retrieve.RecencyWindowMillis
		want := retrieve.Round10(e.Score - retrieve.RecencyWeight*(rec-1))
		switch {
		case !ok && want > lastGot+1e-9:
			return false, fmt.Errorf("%s, dated after the clock, scores %.10f counted as now, above cairn's last %.10f, but cairn left it out", e.ID, want, lastGot)
		case !ok:
		case e.Score >= 1-1e-12:
			if g.Score-retrieve.RecencyWeight+retrieve.RecencyWeight*rec < 1-1e-9 {
				return false, fmt.Errorf("%s: the reference's clamped 1 is not explained by cairn's score %.10f", e.ID, g.Score)
			}
		case math.Abs(g.Score-want) > 1e-9:
			return false, fmt.Errorf("%s, dated after the clock: score %.10f, want %.10f (counted as now)", e.ID, g.Score, want)
		}
	}
	lastRef := exp[len(exp)-1].Score
	for _, g := range got.Candidates {
		if !inRef[g.Entity.ID()] && g.Score > lastRef+1e-9 {
			return false, fmt.Errorf("cairn's %s scores %.10f, above the reference's last %.10f, but the reference left it out", g.Entity.ID(), g.Score, lastRef)
		}
	}
	return future, nil
}

// recordTime is when the record id of entityType (observation or summary)
// is dated, in Unix ms.
func (env *parityEnv) recordTime(id, entityType string) (int64, error) {
	tool, arg := "observation_get", "observationId"
	if entityType == "summary" {
		tool, arg = "summary_get", "summaryId"
	}
	v, err := env.eng.CallJSON(context.Background(), tool, []byte(fmt.Sprintf(`{%q:%q}`, arg, id)))
	if err != nil {
		return 0, fmt.Errorf("reading %s: %v", id, err)
	}
	switch r := v.(type) {
	case memory.Observation:
		return r.TS, nil
	case *memory.Observation:
		return r.TS, nil
	case memory.Summary:
		return r.CreatedAt, nil
	case *memory.Summary:
		return r.CreatedAt, nil
	}
	return 0, fmt.Errorf("reading %s: a %T", id, v)
}

func sameIDs(a, b []retrieve.Candidate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Entity.ID() != b[i].Entity.ID() {
			return false
		}
	}
	return true
}

func comparePins(exp []struct {
	Pin        memory.Pin      `json:"pin"`
	TargetType string          `json:"targetType"`
	Target     json.RawMessage `json:"target"`
}, got []memory.PinnedTarget) error {
	if len(exp) != len(got) {
		return fmt.Errorf("%d pins; want %d", len(got), len(exp))
	}
	for i := range exp {
		want, have := exp[i].Pin, got[i].Pin
		wj, _ := json.Marshal(want)
		hj, _ := json.Marshal(have)
		if string(wj) != string(hj) {
			return fmt.Errorf("pin %d = %s; want %s", i, hj, wj)
		}
		var target memory.Entity
		if err := json.Unmarshal(exp[i].Target, &target); err != nil {
			return err
		}
		g := got[i].Target
		if string(got[i].TargetType) != exp[i].TargetType || g.ID() != target.ID() || g.Content() != target.Content() ||
			g.Redacted() != target.Redacted() || g.Time() != target.Time() {
			return fmt.Errorf("pin %s target = %s %q; want %s %q", want.ID, g.ID(), g.Content(), target.ID(), target.Content())
		}
	}
	return nil
}

func compareSummary(exp, got *memory.Summary) error {
	switch {
	case exp == nil && got == nil:
		return nil
	case exp == nil || got == nil:
		return fmt.Errorf("currentSummary = %v; want %v", got, exp)
	}
	if exp.ID != got.ID || exp.CapsuleID != got.CapsuleID || exp.Content != got.Content || exp.Confidence != got.Confidence || exp.CreatedAt != got.CreatedAt {
		return fmt.Errorf("currentSummary = %+v; want %+v", *got, *exp)
	}
	return nil
}

// compareCandidates checks cairn's untruncated candidates against the
// reference's: same length, equal scores (within 1e-9) and match contexts
// for the ids both hold, and every id only one side holds excused by one of
// the two ties the reference leaves unspecified: a run of equal scores at
// the maxCandidates cut, or rows of equal bm25 rank straddling a table's
// fetch limit (their recency, so their scores, can differ).
func (env *parityEnv) compareCandidates(c parityCase, req cairn.RetrieveRequest, res cairn.RetrieveResult) error {
	exp := c.Expected.Candidates
	got := res.Candidates
	if len(exp) != len(got) {
		return fmt.Errorf("%d candidates; want %d", len(got), len(exp))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			return fmt.Errorf("candidates not sorted by score at %d", i)
		}
	}
	gotBy := map[string]retrieve.Candidate{}
	for _, g := range got {
		gotBy[g.Entity.ID()] = g
	}
	expBy := map[string]float64{}
	var onlyExp, onlyGot []string
	for _, e := range exp {
		expBy[e.ID] = e.Score
		g, ok := gotBy[e.ID]
		if !ok {
			onlyExp = append(onlyExp, e.ID)
			continue
		}
		if math.Abs(g.Score-e.Score) > 1e-9 || g.MatchContext != e.MatchContext || string(g.EntityType) != e.EntityType {
			return fmt.Errorf("candidate %s: score %.10f type %s context %q; want %.10f %s %q", e.ID, g.Score, g.EntityType, g.MatchContext, e.Score, e.EntityType, e.MatchContext)
		}
	}
	for _, g := range got {
		if _, ok := expBy[g.Entity.ID()]; !ok {
			onlyGot = append(onlyGot, g.Entity.ID())
		}
	}
	if len(onlyExp) > 0 {
		env.tied = append(env.tied, c.ID)
	}
	if len(onlyExp) == 0 {
		for i := range exp {
			if math.Abs(got[i].Score-exp[i].Score) > 1e-9 {
				return fmt.Errorf("position %d: score %.10f; want %.10f", i, got[i].Score, exp[i].Score)
			}
		}
		return nil
	}
	// Ties at the maxCandidates cut: rows scoring the same as the last row.
	last := exp[len(exp)-1].Score
	cut := len(exp) == *req.MaxCandidates
	ties, err := env.tableCutTies(req, res)
	if err != nil {
		return err
	}
	for _, id := range onlyExp {
		if cut && math.Abs(expBy[id]-last) <= 1e-9 {
			continue
		}
		want, ok := ties[id]
		if !ok {
			return fmt.Errorf("the reference returned %s (score %.10f), cairn did not, and no tie explains it", id, expBy[id])
		}
		if math.Abs(want-expBy[id]) > 1e-9 {
			return fmt.Errorf("%s ties at a table limit but its score %.10f is not the %.10f cairn's ranks give", id, expBy[id], want)
		}
	}
	for _, id := range onlyGot {
		if cut && math.Abs(gotBy[id].Score-last) <= 1e-9 {
			continue
		}
		if _, ok := ties[id]; !ok {
			return fmt.Errorf("cairn returned %s (score %.10f), the reference did not, and no tie explains it", id, gotBy[id].Score)
		}
	}
	return nil
}

// tableCutTies finds, for each table whose fetch hit its limit, every row
// whose bm25 rank equals the rank of the last row fetched, and returns the
// score each would get in place of a tied row.
func (env *parityEnv) tableCutTies(req cairn.RetrieveRequest, res cairn.RetrieveResult) (map[string]float64, error) {
	ctx := context.Background()
	tq, err := retrieve.ParseQuery(req.Query, req.Syntax)
	if err != nil {
		return nil, err
	}
	var exclude []string
	for _, p := range res.Pins {
		exclude = append(exclude, p.Target.ID())
	}
	if res.CurrentSummary != nil {
		exclude = append(exclude, res.CurrentSummary.ID)
	}
	search := memory.TextSearch{Query: tq, Scope: req.ScopeIDs, Exclude: exclude, Limit: *req.MaxCandidates}
	fetched, err := env.store.SearchText(ctx, search)
	if err != nil {
		return nil, err
	}
	search.Limit = 1 << 20
	all, err := env.store.SearchText(ctx, search)
	if err != nil {
		return nil, err
	}
	hits := append(slices.Clone(fetched.Observations), fetched.Summaries...)
	if len(hits) == 0 {
		return nil, nil
	}
	minR, maxR := hits[0].Rank, hits[0].Rank
	for _, h := range hits {
		minR, maxR = min(minR, h.Rank), max(maxR, h.Rank)
	}
	ties := map[string]float64{}
	for _, pair := range [][2][]memory.TextHit{{fetched.Observations, all.Observations}, {fetched.Summaries, all.Summaries}} {
		f, a := pair[0], pair[1]
		if len(f) < search.Limit && len(f) < *req.MaxCandidates || len(f) == 0 {
			continue
		}
		edge := f[len(f)-1].Rank
		for _, h := range a {
			if h.Rank != edge {
				continue
			}
			norm := 0.5
			if maxR != minR {
				norm = (maxR - h.Rank) / (maxR - minR)
			}
			rec, _ := retrieve.Recency(h.Entity.Time(), env.now.UnixMilli())
			ties[h.Entity.ID()] = retrieve.Round10(math.Min(1, math.Max(0, 0.7*norm+0.3*rec)))
		}
	}
	return ties, nil
}

// TestKindlingParityNaturalLanguage runs the reference's natural-language
// questions in cairn's default text syntax, where the reference returned
// nothing: cairn must return ranked, scoped candidates for every one.
func TestKindlingParityNaturalLanguage(t *testing.T) {
	env := loadParity(t)
	ctx := context.Background()
	n, hits := 0, 0
	for _, c := range loadCases(t) {
		if c.QueryForm != "raw" || c.Source == nil {
			continue
		}
		n++
		env.now = time.UnixMilli(c.Now)
		var in parityInput
		if err := json.Unmarshal(c.Input, &in); err != nil {
			t.Fatal(err)
		}
		req := cairn.RetrieveRequest{Query: c.Source.Question, MaxCandidates: in.MaxCandidates}
		if err := json.Unmarshal(in.ScopeIDs, &req.ScopeIDs); err != nil {
			t.Fatal(err)
		}
		// Search the whole conversation, as a user asking about it would.
		req.ScopeIDs = memory.Scope{RepoID: c.Source.SampleID}
		res, err := env.eng.Retrieve(ctx, req)
		if err != nil {
			t.Errorf("%s %q: %v", c.ID, c.Source.Question, err)
			continue
		}
		if len(res.Candidates) == 0 {
			t.Errorf("%s %q: no candidates", c.ID, c.Source.Question)
			continue
		}
		for i, cand := range res.Candidates {
			if !req.ScopeIDs.Matches(cand.Entity.Scope()) || cand.Score < 0 || cand.Score > 1 || (i > 0 && cand.Score > res.Candidates[i-1].Score) {
				t.Errorf("%s: candidate %d (%s, %.4f) out of scope, out of range or out of order", c.ID, i, cand.Entity.ID(), cand.Score)
			}
		}
		found := false
		for _, cand := range res.Candidates[:min(10, len(res.Candidates))] {
			if o := cand.Entity.Observation; o != nil && slices.Contains(c.Source.Evidence, diaID(o)) {
				found = true
			}
		}
		if found {
			hits++
		}
	}
	if n == 0 {
		t.Skip("the case file holds no natural-language (raw) cases")
	}
	t.Logf("natural-language questions in text syntax: %d, all answered; evidence turn in the top 10 for %d (%.0f%%)", n, hits, 100*float64(hits)/float64(n))
}

func diaID(o *memory.Observation) string {
	var p struct {
		DiaID string `json:"dia_id"`
	}
	json.Unmarshal(o.Provenance, &p)
	return p.DiaID
}
