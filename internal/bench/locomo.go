package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// LoCoMo is the long-conversation memory benchmark (locomo10.json):
// conversations of dated sessions of turns, and questions whose evidence
// names the turns that answer them.
type LoCoMo struct {
	Samples []Sample
}

// Sample is one conversation and its questions.
type Sample struct {
	ID       string
	Sessions []Session
	Cases    []Case
}

// Session is one dated session of turns.
type Session struct {
	N     int
	Date  time.Time
	Turns []Turn
}

// Turn is one utterance.
type Turn struct {
	DiaID   string
	Speaker string
	Text    string
	// Caption describes an image the speaker shared, when there is one.
	Caption string
}

// Content is the turn as cairn stores it: "Speaker: text", with an image's
// caption appended.
func (t Turn) Content() string {
	s := t.Speaker + ": " + t.Text
	if t.Caption != "" {
		s += " [shared an image: " + t.Caption + "]"
	}
	return s
}

// Case is one question with its gold evidence turns.
type Case struct {
	// ID names the question: its conversation and its place in the
	// conversation's list of questions ("conv-26:12").
	ID       string   `json:"id,omitempty"`
	SampleID string   `json:"sample_id"`
	Query    string   `json:"query"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
	// Original, Rules and Split describe a reworded question: the
	// dataset's wording, the rules that changed it, and its half of the
	// set (SplitOf).
	Original string   `json:"original,omitempty"`
	Rules    []string `json:"rules,omitempty"`
	Split    string   `json:"split,omitempty"`
}

// The halves of a question set: rules and settings are tuned on SplitTune
// and reported on SplitTest.
const (
	SplitTune = "tune"
	SplitTest = "test"
)

// SplitOf is the half a question falls in, by a hash of its id (FNV-1a,
// odd: test), fixed before any tuning.
func SplitOf(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	if h.Sum32()%2 == 1 {
		return SplitTest
	}
	return SplitTune
}

// OnlySplit returns the cases of one half ("" or "all": every case).
func OnlySplit(cases []Case, split string) ([]Case, error) {
	switch split {
	case "", "all":
		return cases, nil
	case SplitTune, SplitTest:
	default:
		return nil, memory.Errorf(memory.CodeInvalidParams, "--split %q: want tune, test or all", split)
	}
	var out []Case
	for _, c := range cases {
		if c.ID == "" {
			return nil, memory.Errorf(memory.CodeInvalidParams, "--split needs questions with ids (case %q has none)", c.Query)
		}
		if SplitOf(c.ID) == split {
			out = append(out, c)
		}
	}
	return out, nil
}

// LoadLoCoMo reads locomo10.json. Evidence is cleaned as the protocol
// says: lists written in one string are split, "D:11:26" reads as
// "D11:26", and ids that name no turn are dropped; questions left without
// evidence and adversarial questions (category 5) are left out.
func LoadLoCoMo(path string) (*LoCoMo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "reading the LoCoMo dataset: %v", err)
	}
	var raw []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string          `json:"question"`
			Evidence []string        `json:"evidence"`
			Category int             `json:"category"`
			Answer   json.RawMessage `json:"answer"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "%s is not a LoCoMo dataset (a JSON list of samples)", path)
	}
	if len(raw) == 0 {
		return nil, memory.Errorf(memory.CodeInvalidParams, "%s holds no samples", path)
	}
	ds := &LoCoMo{}
	sessionKey := regexp.MustCompile(`^session_(\d+)$`)
	for _, r := range raw {
		s := Sample{ID: r.SampleID}
		known := map[string]bool{}
		for key, val := range r.Conversation {
			m := sessionKey.FindStringSubmatch(key)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			var turns []struct {
				Speaker string `json:"speaker"`
				DiaID   string `json:"dia_id"`
				Text    string `json:"text"`
				Caption string `json:"blip_caption"`
			}
			if err := json.Unmarshal(val, &turns); err != nil {
				return nil, memory.Errorf(memory.CodeInvalidParams, "%s %s: not a list of turns", r.SampleID, key)
			}
			sess := Session{N: n}
			var date string
			json.Unmarshal(r.Conversation[key+"_date_time"], &date)
			if t, err := time.Parse("3:04 pm on 2 January, 2006", date); err == nil {
				sess.Date = t
			}
			for _, t := range turns {
				sess.Turns = append(sess.Turns, Turn{DiaID: t.DiaID, Speaker: t.Speaker, Text: t.Text, Caption: t.Caption})
				known[t.DiaID] = true
			}
			s.Sessions = append(s.Sessions, sess)
		}
		sort.Slice(s.Sessions, func(i, j int) bool { return s.Sessions[i].N < s.Sessions[j].N })
		for qi, q := range r.QA {
			if q.Category == 5 {
				continue
			}
			ev := cleanEvidence(q.Evidence, known)
			if len(ev) == 0 {
				continue
			}
			s.Cases = append(s.Cases, Case{ID: fmt.Sprintf("%s:%d", r.SampleID, qi), SampleID: r.SampleID, Query: q.Question, Evidence: ev, Category: q.Category})
		}
		ds.Samples = append(ds.Samples, s)
	}
	return ds, nil
}

var diaID = regexp.MustCompile(`^D(\d+):(\d+)$`)

func cleanEvidence(in []string, known map[string]bool) []string {
	var out []string
	for _, e := range in {
		for _, part := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ' ' || r == ',' }) {
			part = strings.Replace(part, "D:", "D", 1)
			if diaID.MatchString(part) && known[part] && !slices.Contains(out, part) {
				out = append(out, part)
			}
		}
	}
	return out
}

// Cases returns every question of the dataset.
func (d *LoCoMo) Cases() []Case {
	var out []Case
	for _, s := range d.Samples {
		out = append(out, s.Cases...)
	}
	return out
}

// QuerySet is a file of questions that replaces the dataset's: the
// reworded set (testdata/locomo/reworded.json) is one.
type QuerySet struct {
	// About says what the set is, where it comes from and under what
	// licence.
	About []string `json:"about,omitempty"`
	Cases []Case   `json:"cases"`
}

// LoadQueries reads a file of the form {"cases": [{"sample_id", "query",
// "evidence", "category"}]} to replace the dataset's questions.
func LoadQueries(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "reading --queries: %v", err)
	}
	var f QuerySet
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "--queries %s: want {\"cases\": [{\"sample_id\", \"query\", \"evidence\", \"category\"}]}", path)
	}
	if len(f.Cases) == 0 {
		return nil, memory.Errorf(memory.CodeInvalidParams, "--queries %s holds no cases", path)
	}
	return f.Cases, nil
}

// Dump returns the dataset's turns as records: each conversation a
// repository, each session a capsule (closed a minute after its last turn)
// in its own sessionId, each turn an observation timed at its session's
// date plus a minute per turn, with provenance {"dia_id"}. Only the turns
// are indexed: LoCoMo's derived summaries and observations are not used.
func (d *LoCoMo) Dump() memory.Dump {
	var dump memory.Dump
	for _, s := range d.Samples {
		for _, sess := range s.Sessions {
			scope := memory.Scope{SessionID: fmt.Sprintf("%s-s%d", s.ID, sess.N), RepoID: s.ID}
			base := sess.Date.UnixMilli()
			c := memory.Capsule{ID: fmt.Sprintf("cap_%s_s%d", s.ID, sess.N), Type: "session", Status: memory.CapsuleClosed,
				OpenedAt: base, Scope: scope}
			for i, t := range sess.Turns {
				prov, _ := json.Marshal(map[string]string{"dia_id": t.DiaID})
				o := memory.Observation{ID: fmt.Sprintf("obs_%s_%s", s.ID, t.DiaID), Kind: memory.KindMessage, Content: t.Content(),
					Provenance: prov, TS: base + int64(i)*60_000, Scope: scope}
				dump.Observations = append(dump.Observations, o)
				c.ObservationIDs = append(c.ObservationIDs, o.ID)
			}
			closed := base + int64(len(sess.Turns))*60_000
			c.ClosedAt = &closed
			dump.Capsules = append(dump.Capsules, c)
		}
	}
	return dump
}

// Latest is the time of the dataset's last turn.
func (d *LoCoMo) Latest() time.Time {
	var t time.Time
	for _, s := range d.Samples {
		for _, sess := range s.Sessions {
			end := sess.Date.Add(time.Duration(len(sess.Turns)) * time.Minute)
			if end.After(t) {
				t = end
			}
		}
	}
	return t
}

// Ks are the cut-offs reported.
var Ks = []int{1, 5, 10, 20}

// Scores are retrieval-quality figures over a set of questions.
type Scores struct {
	Questions int                `json:"questions"`
	Recall    map[string]float64 `json:"-"`
	Hit       map[string]float64 `json:"-"`
	MRR       float64            `json:"mrr"`
}

// MarshalJSON writes recall@k and hit@k as flat keys ("recall@10").
func (s Scores) MarshalJSON() ([]byte, error) {
	m := map[string]any{"questions": s.Questions, "mrr": round4(s.MRR)}
	for k, v := range s.Recall {
		m["recall@"+k] = round4(v)
	}
	for k, v := range s.Hit {
		m["hit@"+k] = round4(v)
	}
	return json.Marshal(m)
}

func round4(x float64) float64 { return float64(int64(x*10000+0.5)) / 10000 }

// QualityReport is the LoCoMo result overall and per category.
type QualityReport struct {
	Provider   string            `json:"provider"`
	Embedder   string            `json:"embedder,omitempty"`
	Overall    Scores            `json:"overall"`
	ByCategory map[string]Scores `json:"categories"`
	Seconds    float64           `json:"seconds"`
}

// CategoryNames name LoCoMo's question categories.
var CategoryNames = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

// accum computes recall@k, hit@k and MRR over questions, at the cut-offs
// ks (nil: Ks).
type accum struct {
	ks          []int
	n           int
	recall, hit map[int]float64
	mrr         float64
}

func (a *accum) cutoffs() []int {
	if a.ks == nil {
		return Ks
	}
	return a.ks
}

func (a *accum) add(ranked []string, gold []string) {
	if a.recall == nil {
		a.recall, a.hit = map[int]float64{}, map[int]float64{}
	}
	a.n++
	first := 0
	for i, id := range ranked {
		if slices.Contains(gold, id) {
			first = i + 1
			break
		}
	}
	if first > 0 {
		a.mrr += 1 / float64(first)
	}
	for _, k := range a.cutoffs() {
		top := ranked[:min(k, len(ranked))]
		found := 0
		for _, g := range gold {
			if slices.Contains(top, g) {
				found++
			}
		}
		a.recall[k] += float64(found) / float64(len(gold))
		if found > 0 {
			a.hit[k]++
		}
	}
}

func (a *accum) scores() Scores {
	s := Scores{Questions: a.n, Recall: map[string]float64{}, Hit: map[string]float64{}}
	if a.n == 0 {
		return s
	}
	for _, k := range a.cutoffs() {
		s.Recall[strconv.Itoa(k)] = a.recall[k] / float64(a.n)
		s.Hit[strconv.Itoa(k)] = a.hit[k] / float64(a.n)
	}
	s.MRR = a.mrr / float64(a.n)
	return s
}

// LoCoMoOptions configure a LoCoMo run.
type LoCoMoOptions struct {
	// Engine holds the dataset (see Dump) and answers the questions.
	Engine *cairn.Engine
	// Provider names the retrieval provider ("" for the engine's default).
	Provider string
	// Cases are the questions; default the dataset's.
	Cases []Case
	// Progress receives a line every 200 questions.
	Progress io.Writer
}

// RunLoCoMo asks every question, scoped to its conversation, and scores
// the turns returned against the evidence.
func RunLoCoMo(ctx context.Context, o LoCoMoOptions) (QualityReport, error) {
	start := time.Now()
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	var all accum
	byCat := map[int]*accum{}
	maxK := Ks[len(Ks)-1]
	used := o.Provider
	for i, c := range o.Cases {
		req := cairn.RetrieveRequest{Query: c.Query, ScopeIDs: memory.Scope{RepoID: c.SampleID}, MaxCandidates: &maxK, Provider: o.Provider}
		res, err := o.Engine.Retrieve(ctx, req)
		var ranked []string
		switch {
		case memory.CodeOf(err) == memory.CodeInvalidParams:
			// A question with no searchable word ranks nothing.
		case err != nil:
			return QualityReport{}, err
		default:
			used = res.Provenance.ProviderUsed
			for _, cand := range res.Candidates {
				if ob := cand.Entity.Observation; ob != nil {
					var p struct {
						DiaID string `json:"dia_id"`
					}
					json.Unmarshal(ob.Provenance, &p)
					ranked = append(ranked, p.DiaID)
				}
			}
		}
		all.add(ranked, c.Evidence)
		if byCat[c.Category] == nil {
			byCat[c.Category] = &accum{}
		}
		byCat[c.Category].add(ranked, c.Evidence)
		if (i+1)%200 == 0 {
			fmt.Fprintf(o.Progress, "%d of %d questions\n", i+1, len(o.Cases))
		}
	}
	rep := QualityReport{Provider: used, Overall: all.scores(), ByCategory: map[string]Scores{}, Seconds: time.Since(start).Seconds()}
	for cat, a := range byCat {
		name := CategoryNames[cat]
		if name == "" {
			name = strconv.Itoa(cat)
		}
		rep.ByCategory[name] = a.scores()
	}
	return rep, nil
}

// RankStats renders a report as the golden rank_stats text: one line per
// category and overall, fixed order and precision, so a ranking change
// shows as a diff.
func RankStats(r QualityReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# LoCoMo retrieval, turns only, provider %s\n", r.Provider)
	fmt.Fprintf(&b, "# %-11s %9s %9s %9s %9s %9s %9s %7s\n", "category", "questions", "recall@1", "recall@5", "recall@10", "recall@20", "hit@10", "mrr")
	names := []string{"multi-hop", "temporal", "open-domain", "single-hop"}
	line := func(name string, s Scores) {
		fmt.Fprintf(&b, "%-13s %9d %9.4f %9.4f %9.4f %9.4f %9.4f %7.4f\n", name, s.Questions,
			s.Recall["1"], s.Recall["5"], s.Recall["10"], s.Recall["20"], s.Hit["10"], s.MRR)
	}
	for _, n := range names {
		if s, ok := r.ByCategory[n]; ok {
			line(n, s)
		}
	}
	line("overall", r.Overall)
	return b.String()
}
