package synth

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Source is one piece of context an answer may rest on: a thought, a
// graph entity or fact, a summary. Relevance is how well retrieval found
// it matches the question, in [0, 1]; it orders the sources in a prompt.
type Source struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	Text      string  `json:"text"`
	Relevance float64 `json:"relevance"`
}

// Citation is a model's statement that a span of a source supports its
// answer.
type Citation struct {
	SourceID string `json:"source_id"`
	Span     string `json:"span"`
}

// Draft is an answer with its citations as a model (or any synthesiser)
// gave it, before cairn checks it. Anything else a model says about
// itself (its coverage, its confidence) is not read.
type Draft struct {
	Answer  string     `json:"answer"`
	Sources []Citation `json:"sources"`
	// Claims, when set, are the answer's sentences as its synthesiser
	// made them (the extractive synthesiser knows where its quotes
	// begin and end; a model's prose is split by the verifier). They are
	// used only when, joined by spaces, they are the answer (compared
	// normalised); otherwise the answer is split as usual.
	Claims []string `json:"claims,omitempty"`
}

// SourceCitation is a citation that survived the checks: its source was
// in the context, its span occurs in the source, and it supports at least
// one claim of the answer. Relevance is how well it supports the answer:
// the best support score it lends a claim, in [0, 1].
type SourceCitation struct {
	SourceID   string  `json:"source_id"`
	SourceType string  `json:"source_type"`
	Span       string  `json:"span"`
	Relevance  float64 `json:"relevance"`
}

// ClaimCheck is the verdict on one claim (a sentence) of an answer: its
// support score, whether that clears the threshold, and the sources that
// support it.
type ClaimCheck struct {
	Text      string   `json:"text"`
	Supported bool     `json:"supported"`
	Score     float64  `json:"score"`
	SourceIDs []string `json:"source_ids,omitempty"`
}

// GroundedResponse is the grounding contract: an answer, the citations it
// rests on, and figures cairn computed itself. A refused response holds
// RefusalText, no sources and no claims (the ungrounded answer is never
// passed through); Notes says what was missing.
type GroundedResponse struct {
	Answer  string           `json:"answer"`
	Sources []SourceCitation `json:"sources"`
	// Confidence is CoverageRatio times the mean support score of the
	// supported claims (0 when refused).
	Confidence float64 `json:"confidence"`
	// CoverageRatio is supported claims / claims.
	CoverageRatio float64 `json:"coverage_ratio"`
	Refused       bool    `json:"refused"`
	Notes         string  `json:"notes,omitempty"`
	// Claims are the per-claim verdicts of an answer that was not refused.
	Claims []ClaimCheck `json:"claims,omitempty"`
}

// RefusalText is a refused response's answer, the seed's words.
const RefusalText = "Insufficient grounding in available sources."

// Grounding defaults.
const (
	// DefaultMinCoverage is SURR_INNER_VOICE_MIN_COVERAGE's default.
	DefaultMinCoverage = 0.6
	// DefaultMinSources is the seed's MIN_SOURCES_REQUIRED.
	DefaultMinSources = 2
	// DefaultThreshold is the support score a claim needs, chosen by
	// measurement on testdata/grounding/fixture.json (docs/BENCHMARKS.md,
	// "Grounding verifier").
	DefaultThreshold = 0.35
)

// EmbedFunc embeds texts into unit vectors (an embed.Embedder's Embed).
type EmbedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// Verifier checks a Draft against the sources it was given and computes
// the grounding contract. The zero value uses the defaults and lexical
// matching only.
type Verifier struct {
	// MinCoverage is the least coverage ratio accepted (default 0.6).
	MinCoverage float64
	// MinSources is the least number of distinct sources that must support
	// the answer (default 2).
	MinSources int
	// Threshold is the support score a claim needs (default
	// DefaultThreshold).
	Threshold float64
	// Embed, when set, adds a semantic score: a claim's support is
	// (1-SemanticWeight)·lexical + SemanticWeight·cosine. When it fails,
	// the check falls back to lexical matching and says so in Notes.
	Embed EmbedFunc
	// SemanticWeight is the semantic score's weight in [0, 1] (used only
	// with Embed).
	SemanticWeight float64
}

func (v Verifier) withDefaults() Verifier {
	if v.MinCoverage <= 0 {
		v.MinCoverage = DefaultMinCoverage
	}
	if v.MinSources <= 0 {
		v.MinSources = DefaultMinSources
	}
	if v.Threshold <= 0 {
		v.Threshold = DefaultThreshold
	}
	v.SemanticWeight = math.Min(1, math.Max(0, v.SemanticWeight))
	if v.Embed == nil {
		v.SemanticWeight = 0
	}
	return v
}

// Penalties on a support score when a claim and its support disagree in
// ways word overlap cannot see: a quarter of a perfect overlap is below
// any threshold worth using, so one such disagreement is enough to
// withhold support.
const (
	// hardPenalty: a number or a name of the claim is missing from the
	// support ("2019" for "2021", "Munich" for "Vienna").
	hardPenalty = 0.25
	// negationPenalty: one of them denies and the other does not.
	negationPenalty = 0.25
)

// validCitation is a citation that passed the checks.
type validCitation struct {
	Citation
	source int // index into the context
}

// window is a piece of a cited source a claim may match: a cited span, a
// sentence of the source, or the whole source.
type window struct {
	text    string
	cite    int // the valid citation credited when it supports a claim
	source  int
	terms   map[string]bool
	negated bool
	vec     []float32
}

// claim is a sentence of the answer and what it stands on.
type claim struct {
	text    string
	terms   []string
	hard    []string // names and numbers (hardTerms)
	negated bool
	vec     []float32
	// parts are the claim's clauses, when it has several.
	parts []claim
}

// Verify checks d against sources, the context the answer was made from,
// and returns the grounding contract. Citations of a source not in the
// context, or whose span does not occur in its source (compared with
// whitespace and case normalised), are dropped. The answer is split into
// sentences; each sentence that says something (not "Here is what I
// found.") is a claim, supported when some cited span or cited source
// matches it at least Threshold. The answer is refused when the coverage
// is below MinCoverage or fewer than MinSources sources support it.
func (v Verifier) Verify(ctx context.Context, d Draft, sources []Source) GroundedResponse {
	return v.Check(ctx, d, sources).Response
}

// Verdict is Verify's answer with its workings: the verdict on every
// claim and every dropped citation, refused or not. It is for tests,
// benchmarks and the operator's logs; a refused answer's claims hold the
// ungrounded text and must not reach a caller.
type Verdict struct {
	Response GroundedResponse
	Claims   []ClaimCheck
	Dropped  []string
}

// Check is Verify with its workings.
func (v Verifier) Check(ctx context.Context, d Draft, sources []Source) Verdict {
	v = v.withDefaults()
	var notes []string
	byID := map[string]int{}
	for i, s := range sources {
		if _, dup := byID[s.ID]; !dup && s.ID != "" {
			byID[s.ID] = i
		}
	}

	// Citations.
	var valid []validCitation
	var dropped []string
	seen := map[string]bool{}
	for _, c := range d.Sources {
		c.SourceID = strings.TrimSpace(c.SourceID)
		i, ok := byID[c.SourceID]
		switch {
		case !ok:
			dropped = append(dropped, fmt.Sprintf("%s is not in the context", quoteID(c.SourceID)))
		case len(terms(c.Span)) == 0:
			dropped = append(dropped, fmt.Sprintf("the span cited from %s says nothing", quoteID(c.SourceID)))
		case !spanOccurs(c.Span, sources[i].Text):
			dropped = append(dropped, fmt.Sprintf("the span cited from %s does not occur in it", quoteID(c.SourceID)))
		default:
			key := c.SourceID + "\x00" + normalizeText(c.Span)
			if !seen[key] {
				seen[key] = true
				valid = append(valid, validCitation{Citation: Citation{SourceID: c.SourceID, Span: strings.TrimSpace(c.Span)}, source: i})
			}
		}
	}

	// Claims.
	var claims []claim
	sentences := splitSentences(d.Answer)
	if len(d.Claims) > 0 && normalizeText(strings.Join(d.Claims, " ")) == normalizeText(d.Answer) {
		sentences = d.Claims
	}
	for _, s := range sentences {
		text := stripMarkers(s)
		if ts := claimTerms(text); len(ts) > 0 {
			c := claim{text: text, terms: ts, hard: hardTerms(text), negated: negated(text)}
			for _, p := range clauses(text) {
				if pt := claimTerms(p); len(pt) > 0 {
					c.parts = append(c.parts, claim{text: p, terms: pt, hard: hardTerms(p), negated: negated(p)})
				}
			}
			claims = append(claims, c)
		}
	}

	// Windows of the cited sources: the cited spans, then each source's
	// sentences and their clauses, and (for a source of several sentences)
	// its whole text.
	var windows []window
	var cited []int
	firstCite := map[int]int{}
	for k, c := range valid {
		if _, ok := firstCite[c.source]; !ok {
			firstCite[c.source] = k
			cited = append(cited, c.source)
		}
		windows = append(windows, newWindow(c.Span, k, c.source))
	}
	for _, src := range cited {
		text := sources[src].Text
		sentences := splitSentences(text)
		var parts []string
		for _, p := range sentences {
			// A sentence's clauses are windows too, so that the negation in
			// one clause ("and has no elevator") is not held against a claim
			// about another.
			parts = append(append(parts, p), clauses(p)...)
		}
		if len(sentences) > 1 {
			parts = append(parts, text)
		}
		for _, p := range parts {
			windows = append(windows, newWindow(p, creditedCitation(valid, src, p, firstCite[src]), src))
		}
	}

	if v.Embed != nil && v.SemanticWeight > 0 && len(claims) > 0 && len(windows) > 0 {
		if err := v.embed(ctx, claims, windows); err != nil {
			notes = append(notes, "the semantic check was unavailable; claims were matched by their words only")
		}
	}

	// Scores.
	checks := make([]ClaimCheck, len(claims))
	relevance := make([]float64, len(valid))
	supporting := map[string]bool{}
	var supported int
	var scoreSum float64
	var unsupported []string
	for i, c := range claims {
		score, credit := v.support(c, windows)
		check := ClaimCheck{Text: c.text, Score: round4(score)}
		if score >= v.Threshold {
			check.Supported = true
			supported++
			scoreSum += score
			for _, w := range credit {
				cite := valid[windows[w].cite]
				relevance[windows[w].cite] = math.Max(relevance[windows[w].cite], score)
				if !contains(check.SourceIDs, cite.SourceID) {
					check.SourceIDs = append(check.SourceIDs, cite.SourceID)
				}
				supporting[cite.SourceID] = true
			}
		} else {
			unsupported = append(unsupported, fmt.Sprint(i+1))
		}
		checks[i] = check
	}

	out := GroundedResponse{}
	if len(claims) > 0 {
		out.CoverageRatio = round4(float64(supported) / float64(len(claims)))
	}
	var why []string
	switch {
	case len(claims) == 0:
		why = append(why, "the answer makes no claim")
	case out.CoverageRatio < v.MinCoverage:
		why = append(why, fmt.Sprintf("required coverage %.2f, actual %.2f (%d of %d claims supported)", v.MinCoverage, out.CoverageRatio, supported, len(claims)))
	}
	if len(supporting) < v.MinSources {
		why = append(why, fmt.Sprintf("required sources %d, actual %d", v.MinSources, len(supporting)))
	}
	switch len(unsupported) {
	case 0:
	case 1:
		notes = append(notes, fmt.Sprintf("unsupported: claim %s of %d", unsupported[0], len(claims)))
	default:
		notes = append(notes, fmt.Sprintf("unsupported: claims %s and %s of %d", strings.Join(unsupported[:len(unsupported)-1], ", "),
			unsupported[len(unsupported)-1], len(claims)))
	}
	if len(dropped) > 0 {
		noun := "citation"
		if len(dropped) > 1 {
			noun = "citations"
		}
		notes = append(notes, fmt.Sprintf("dropped %d %s: %s", len(dropped), noun, strings.Join(dropped, "; ")))
	}
	for k, c := range valid {
		if relevance[k] == 0 {
			notes = append(notes, fmt.Sprintf("the span cited from %s supports no claim", quoteID(c.SourceID)))
		}
	}
	if len(why) > 0 {
		out.Answer, out.Refused = RefusalText, true
		out.Notes = joinNotes(append(why, notes...))
		out.Sources = []SourceCitation{}
		return Verdict{Response: out, Claims: checks, Dropped: dropped}
	}
	out.Answer = strings.TrimSpace(d.Answer)
	out.Claims = checks
	out.Confidence = round4(out.CoverageRatio * scoreSum / float64(supported))
	out.Sources = []SourceCitation{}
	for k, c := range valid {
		if relevance[k] > 0 {
			out.Sources = append(out.Sources, SourceCitation{SourceID: c.SourceID, SourceType: sources[c.source].Type,
				Span: c.Span, Relevance: round4(relevance[k])})
		}
	}
	out.Notes = joinNotes(notes)
	return Verdict{Response: out, Claims: checks, Dropped: dropped}
}

// minClauseTerms is how many terms a clause needs to be judged alone; a
// shorter one counts only when nothing cited holds any of its words ("but
// only after sunset").
const minClauseTerms = 3

// support is a claim's support score and the windows that give it: its
// best match among the windows, or its weakest clause's if lower.
func (v Verifier) support(c claim, windows []window) (float64, []int) {
	score, credit := v.match(c, windows)
	for _, p := range c.parts {
		s, _ := v.match(p, windows)
		if len(p.terms) < minClauseTerms && s > 0 {
			continue // too short to judge alone, and not new
		}
		score = math.Min(score, s)
	}
	return score, credit
}

// match is a claim's best support score among the windows, and the
// windows that give it: one window, or two of different sources when the
// claim joins what they say.
func (v Verifier) match(c claim, windows []window) (float64, []int) {
	best, at := 0.0, -1
	for i, w := range windows {
		if s := v.score(c, w); s > best {
			best, at = s, i
		}
	}
	if at < 0 {
		return 0, nil
	}
	if best >= v.Threshold {
		// Every other source that says it as well supports it too (a
		// sentence two memories hold word for word).
		credit := []int{at}
		for i, w := range windows {
			if w.source != windows[at].source && v.score(c, w) >= best-1e-9 &&
				!slices.ContainsFunc(credit, func(k int) bool { return windows[k].source == w.source }) {
				credit = append(credit, i)
			}
		}
		return best, credit
	}
	// A claim may join two sources ("Because Rosa is diabetic, Giulia
	// orders a sugar-free cake"): the union of two windows of different
	// sources, each holding a claim word the other lacks.
	pairBest, pair := best, []int{at}
	for i := range windows {
		for j := i + 1; j < len(windows); j++ {
			a, b := windows[i], windows[j]
			if a.source == b.source {
				continue
			}
			var matched int
			var onlyA, onlyB bool
			for _, t := range c.terms {
				inA, inB := a.terms[t], b.terms[t]
				if inA || inB {
					matched++
				}
				onlyA = onlyA || (inA && !inB)
				onlyB = onlyB || (inB && !inA)
			}
			if !onlyA || !onlyB {
				continue
			}
			s := float64(matched) / float64(len(c.terms))
			for _, h := range c.hard {
				if !a.terms[h] && !b.terms[h] {
					s *= hardPenalty
					break
				}
			}
			if c.negated != a.negated || c.negated != b.negated {
				s *= negationPenalty
			}
			if s > pairBest {
				pairBest, pair = s, []int{i, j}
			}
		}
	}
	return pairBest, pair
}

// score is how well one window supports a claim: the share of the claim's
// words it holds (blended with their cosine when embeddings are on), cut
// when a number of the claim is missing or one denies what the other
// does not.
func (v Verifier) score(c claim, w window) float64 {
	var matched int
	for _, t := range c.terms {
		if w.terms[t] {
			matched++
		}
	}
	s := float64(matched) / float64(len(c.terms))
	if v.SemanticWeight > 0 && c.vec != nil && w.vec != nil {
		s = (1-v.SemanticWeight)*s + v.SemanticWeight*math.Max(0, cosine(c.vec, w.vec))
	}
	for _, h := range c.hard {
		if !w.terms[h] {
			s *= hardPenalty
			break
		}
	}
	if c.negated != w.negated {
		s *= negationPenalty
	}
	return s
}

// embed sets the vectors of claims and windows.
func (v Verifier) embed(ctx context.Context, claims []claim, windows []window) error {
	texts := make([]string, 0, len(claims)+len(windows))
	for _, c := range claims {
		texts = append(texts, c.text)
	}
	for _, w := range windows {
		texts = append(texts, w.text)
	}
	vecs, err := v.Embed(ctx, texts)
	if err != nil || len(vecs) != len(texts) {
		if err == nil {
			err = fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
		}
		return err
	}
	for i := range claims {
		claims[i].vec = vecs[i]
	}
	for i := range windows {
		windows[i].vec = vecs[len(claims)+i]
	}
	return nil
}

func newWindow(text string, cite, source int) window {
	return window{text: text, cite: cite, source: source, terms: factTerms(text), negated: negated(text)}
}

// creditedCitation is the valid citation of source src credited when a
// sentence of it supports a claim: the one whose span the sentence holds,
// or the source's first.
func creditedCitation(valid []validCitation, src int, sentence string, first int) int {
	for k, c := range valid {
		if c.source == src && spanOccurs(c.Span, sentence) {
			return k
		}
	}
	return first
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quoteID is a cited id for a note: quoted, and cut if a model wrote a
// long one.
func quoteID(id string) string {
	if len(id) > 40 {
		id = id[:40] + "…"
	}
	return fmt.Sprintf("%q", id)
}

// joinNotes joins notes into sentences.
func joinNotes(notes []string) string {
	var b strings.Builder
	for i, n := range notes {
		if n == "" {
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.ToUpper(n[:1]) + n[1:] + ".")
	}
	return b.String()
}
