package webui

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// searchForm is the search page's form, as typed.
type searchForm struct {
	Query, Session, Repo, Agent, User string
	Provider, Syntax                  string
	Budget, Max                       string
	Redacted                          bool
	// Why is the rank of a candidate whose breakdown to show open.
	Why int
}

// inlineExplanations is how many of the first candidates carry their
// breakdown in the page; the others link to the page with theirs (a
// breakdown is most of a page's size and drawing time).
const inlineExplanations = 10

// scope is the form's scope.
func (f searchForm) scope() memory.Scope {
	return memory.Scope{SessionID: f.Session, RepoID: f.Repo, AgentID: f.Agent, UserID: f.User}
}

// searchView is the search page.
type searchView struct {
	Form   searchForm
	Scopes memory.ScopeValues
	// Ran says a query was asked; Problem explains a request retrieval
	// refused.
	Ran     bool
	Problem string
	Result  cairn.RetrieveResult
	Pins    []recordView
	Current *recordView
	Cands   []candidateView
	// Elapsed is the retrieval's time; Permalink the page's address.
	Elapsed   string
	Permalink string
	Formula   string
	Params    []param
	// Legend says what each signal of the breakdowns measures.
	Legend []partView
}

type param struct {
	Name  string
	Value string
}

// recordView is an observation or a summary as lists show it.
type recordView struct {
	ID, Type, Kind string
	Link           string
	Content        []segment
	Redacted       bool
	TS             int64
	Scope          memory.Scope
	// PinReason and PinID describe the pin that brought it (pins tier).
	PinReason, PinID string
}

// candidateView is one ranked candidate with its score explained.
type candidateView struct {
	Rank  int
	Score float64
	recordView
	Parts []partView
	// Other are the explanation's values that are not weighted terms of
	// the score (the raw BM25).
	Other []partView
	// Sum is the weighted parts' total, which equals Score.
	Sum       float64
	ScoreText string
	// Inline says the page holds the breakdown, Open that it shows it
	// unfolded; otherwise WhyLink leads to the page with it.
	Inline, Open bool
	WhyLink      string
	Degraded     bool
}

// partView is one term of a score. The numbers are formatted here, once,
// rather than by the template (a page holds fifty tables).
type partView struct {
	Name, Label, Help, Detail string
	Value, Weight, Share      float64
	ValueText, WeightText     string
	ShareText                 string
	// Width is Share as a percentage of the whole score bar; ValueWidth
	// the value's, for its own bar.
	Width, ValueWidth string
	// X is where its segment starts on the score bar.
	X     string
	Class string
}

// signal describes a named value of an explanation: its label, what it
// measures, and the weight parameter that multiplies it.
type signal struct {
	label, help, weight, class string
}

var signals = map[string]signal{
	"lexical":   {"Words", "BM25 of the query's words in the record, with its neighbours in the capsule as weighted context, relative to the best candidate", "lexicalWeight", "lex"},
	"bm25Norm":  {"Words", "FTS5 bm25 of the query's words, normalised over the rows fetched (1 = best)", "lexicalWeight", "lex"},
	"semantic":  {"Meaning", "cosine similarity of the query's and the record's embeddings, relative to the nearest record in scope", "semanticWeight", "sem"},
	"recency":   {"Recency", "1 for a record written now, falling linearly to 0 at 30 days old", "recencyWeight", "rec"},
	"soft":      {"Related words", "cue: query words matched by words with similar vectors, weighted by rarity", "soft", "cue"},
	"period":    {"Named period", "cue: 1 when the query names a day, month or year and the record is from it", "time", "flag"},
	"tellsTime": {"Tells a time", "cue: 1 when the query asks when and the record holds a time word", "when", "flag"},
	"labelled":  {"Speaker or subject", "cue: 1 when the words before the record's opening colon hold a query word", "label", "flag"},
	"stated":    {"A statement", "cue: 1 when the record asks no question", "statement", "flag"},
	"bm25":      {"BM25 (raw)", "the record's own BM25 for the query's words before normalisation; not a term of the score", "", ""},
}

// explain turns a candidate's explanation into weighted parts whose
// shares add up to its score: each part's share is weight × value divided
// by the sum of the weights that apply to the search.
func explain(ex memory.Explanation, params map[string]float64) (parts, other []partView, sum float64) {
	var total float64
	for _, c := range ex.Children {
		s, ok := signals[c.Name]
		if !ok || s.weight == "" || (c.Name == "semantic" && ex.Degraded != "") {
			continue
		}
		total += params[s.weight]
	}
	if total == 0 {
		total = 1
	}
	for _, c := range ex.Children {
		s, ok := signals[c.Name]
		if !ok {
			s = signal{label: c.Name, help: "a value the provider reported"}
		}
		p := partView{Name: c.Name, Label: s.label, Help: s.help, Detail: c.Detail, Value: c.Value, Class: s.class, ValueText: f3(c.Value)}
		if s.weight == "" || (c.Name == "semantic" && ex.Degraded != "") {
			other = append(other, p)
			continue
		}
		p.Weight = params[s.weight]
		p.Share = p.Weight * c.Value / total
		p.X = pct(sum)
		sum += p.Share
		p.Width = pct(p.Share)
		p.ValueWidth = pct(c.Value)
		p.ValueText, p.WeightText, p.ShareText = f3(c.Value), f3(p.Weight), f3(p.Share)
		parts = append(parts, p)
	}
	return parts, other, sum
}

func f3(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

// pct renders a fraction in [0, 1] as an SVG percentage.
func pct(f float64) string {
	f = math.Max(0, math.Min(1, f))
	return strconv.FormatFloat(f*100, 'f', 2, 64) + "%"
}

func entityView(e memory.Entity, terms []string) recordView {
	v := recordView{ID: e.ID(), Type: string(e.Type()), Content: highlight(e.Content(), terms), Scope: e.Scope()}
	if o := e.Observation; o != nil {
		v.Kind, v.Link, v.TS, v.Redacted = string(o.Kind), recordPath("observation", o.ID), o.TS, o.Redacted
	}
	if s := e.Summary; s != nil {
		v.Kind, v.Link, v.TS, v.Redacted = "summary", recordPath("summary", s.ID), s.CreatedAt, s.Redacted
	}
	return v
}

func (u *UI) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := searchForm{Query: q.Get("q"), Session: q.Get("session"), Repo: q.Get("repo"), Agent: q.Get("agent"), User: q.Get("user"),
		Provider: q.Get("provider"), Syntax: q.Get("syntax"), Budget: q.Get("budget"), Max: q.Get("max"), Redacted: q.Get("redacted") == "on"}
	f.Why, _ = strconv.Atoi(q.Get("why"))
	v := searchView{Form: f}
	v.Scopes = u.scopes(r.Context())
	status := http.StatusOK
	if strings.TrimSpace(f.Query) != "" {
		v.Ran = true
		req, err := f.request()
		var res cairn.RetrieveResult
		if err == nil {
			start := time.Now()
			res, err = u.eng.Retrieve(r.Context(), req)
			el := time.Since(start)
			v.Elapsed = strconv.FormatFloat(float64(el.Microseconds())/1000, 'f', 1, 64) + " ms"
			w.Header().Set("Server-Timing", "retrieve;dur="+strconv.FormatFloat(float64(el.Microseconds())/1000, 'f', 3, 64))
		}
		if err != nil {
			pub := memory.Public(err)
			if pub.Code != memory.CodeInvalidParams {
				u.fail(w, r, err)
				return
			}
			v.Problem, status = pub.Message, http.StatusBadRequest
		}
		v.Permalink = link("/search", "q", f.Query, "session", f.Session, "repo", f.Repo, "agent", f.Agent, "user", f.User,
			"provider", f.Provider, "syntax", f.Syntax, "budget", f.Budget, "max", f.Max, "redacted", map[bool]string{true: "on"}[f.Redacted])
		if err == nil {
			v.Result = res
			u.fillResult(&v, res)
		}
	}
	title := "Search"
	if v.Ran {
		title = f.Query + " · Search"
	}
	u.render(w, r, status, "search", title, "search", v)
}

// request turns the form into a retrieval request.
func (f searchForm) request() (cairn.RetrieveRequest, error) {
	req := cairn.RetrieveRequest{Query: f.Query, ScopeIDs: f.scope(), Provider: f.Provider, Syntax: memory.Syntax(f.Syntax), IncludeRedacted: f.Redacted}
	for _, n := range []struct {
		name, v string
		into    **int
	}{{"token budget", f.Budget, &req.TokenBudget}, {"most candidates", f.Max, &req.MaxCandidates}} {
		if strings.TrimSpace(n.v) == "" {
			continue
		}
		x, err := strconv.Atoi(strings.TrimSpace(n.v))
		if err != nil {
			return req, memory.Errorf(memory.CodeInvalidParams, "%s %q is not a whole number", n.name, n.v)
		}
		*n.into = &x
	}
	return req, nil
}

func (u *UI) fillResult(v *searchView, res cairn.RetrieveResult) {
	terms := res.Provenance.SearchTerms
	for _, p := range res.Pins {
		rv := entityView(p.Target, terms)
		rv.PinReason, rv.PinID = p.Pin.Reason, p.Pin.ID
		v.Pins = append(v.Pins, rv)
	}
	if s := res.CurrentSummary; s != nil {
		rv := entityView(memory.SummaryEntity(*s), terms)
		v.Current = &rv
	}
	params := res.Provenance.Scoring.Params
	for i, c := range res.Candidates {
		cv := candidateView{Rank: i + 1, Score: c.Score, recordView: entityView(c.Entity, terms), Degraded: c.Explanation.Degraded != ""}
		cv.Parts, cv.Other, cv.Sum = explain(c.Explanation, params)
		cv.ScoreText = f3(c.Score)
		cv.Inline = cv.Rank <= inlineExplanations || cv.Rank == v.Form.Why
		cv.Open = cv.Rank == v.Form.Why
		if !cv.Inline {
			cv.WhyLink = v.Permalink + "&why=" + strconv.Itoa(cv.Rank) + "#c" + strconv.Itoa(cv.Rank)
		}
		v.Cands = append(v.Cands, cv)
	}
	seen := map[string]bool{}
	for _, c := range v.Cands {
		for _, p := range append(slices.Clone(c.Parts), c.Other...) {
			if !seen[p.Name] {
				seen[p.Name] = true
				v.Legend = append(v.Legend, partView{Name: p.Name, Label: p.Label, Help: p.Help, Class: p.Class})
			}
		}
	}
	v.Formula = res.Provenance.Scoring.Formula
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v.Params = append(v.Params, param{Name: k, Value: strconv.FormatFloat(params[k], 'g', 6, 64)})
	}
}
