package synth

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/synth/lexicon"
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
// support score, whether it is supported, the sources that support it,
// and for an unsupported claim the reason.
type ClaimCheck struct {
	Text      string   `json:"text"`
	Supported bool     `json:"supported"`
	Score     float64  `json:"score"`
	SourceIDs []string `json:"source_ids,omitempty"`
	// Reason says why an unsupported claim is not supported ("\"Priya\" is
	// not in the source", "who did what differs: ...").
	Reason string `json:"reason,omitempty"`
}

// GroundedResponse is the grounding contract: an answer, the citations it
// rests on, and figures cairn computed itself. An accepted answer holds
// only its supported claims: the sentences of unsupported ones are
// removed from Answer, listed in Claims and named in Notes. A refused
// response holds RefusalText, no sources and no claims (the ungrounded
// answer is never passed through); Notes says what was missing.
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
	// Claims are the per-claim verdicts of an answer that was not refused,
	// the unsupported claims included (their sentences are not in
	// Answer).
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
	// DefaultThreshold is the share of a claim's words a piece of a
	// source must hold (names and numbers always), chosen by measurement
	// on the tune half of testdata/grounding/claims.txt (docs/BENCHMARKS.md,
	// "Grounding verifier").
	DefaultThreshold = 0.75
	// DefaultSynonymRank is how many of each word's most frequent WordNet
	// senses two words may share to count as synonyms, chosen the same
	// way.
	DefaultSynonymRank = 1
)

// EmbedFunc embeds texts into unit vectors (an embed.Embedder's Embed).
type EmbedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// Verifier checks a Draft against the sources it was given and computes
// the grounding contract. The zero value uses the defaults and no
// embedder.
type Verifier struct {
	// MinCoverage is the least coverage ratio accepted (default 0.6).
	MinCoverage float64
	// MinSources is the least number of distinct sources that must support
	// the answer (default 2).
	MinSources int
	// Threshold is the share of a claim's words that a piece of a cited
	// source must hold for the claim to be supported (default
	// DefaultThreshold). Names and numbers are always needed.
	Threshold float64
	// SynonymRank is how many of each word's most frequent senses two
	// words may share to stand for each other (default
	// DefaultSynonymRank; negative: synonyms are not used).
	SynonymRank int
	// Embed, when set, adds a semantic score: a claim's score is
	// (1-SemanticWeight)·lexical + SemanticWeight·cosine of the claim and
	// the pieces that support it. When it fails, the check goes on
	// without it and says so in Notes.
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
	switch {
	case v.SynonymRank == 0:
		v.SynonymRank = DefaultSynonymRank
	case v.SynonymRank < 0:
		v.SynonymRank = 0
	}
	v.SemanticWeight = math.Min(1, math.Max(0, v.SemanticWeight))
	if v.Embed == nil {
		v.SemanticWeight = 0
	}
	return v
}

// validCitation is a citation that passed the checks.
type validCitation struct {
	Citation
	source int // index into the context
}

// Verify checks d against sources, the context the answer was made from,
// and returns the grounding contract. Citations of a source not in the
// context, or whose span does not occur in its source (compared with
// whitespace and case normalised), are dropped. The answer's sentences
// that say something about the world are its claims; each must rest on a
// piece of a cited source (see Check). The answer is refused when the
// coverage is below MinCoverage or fewer than MinSources sources support
// it; an accepted answer keeps only its supported claims.
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
	// Removed are the unsupported claims of an accepted answer, whose
	// sentences Response.Answer leaves out.
	Removed []ClaimCheck
}

// Check is Verify with its workings. A claim is supported when each of
// its parts (its clauses; a clause joining two sources is split at its
// conjunction) rests on one piece of a cited source (a sentence of it):
// the piece holds every name and number of the part and at least
// Threshold of its words (the same word, a form of it, or a synonym that
// is not its antonym), in one clause and in the same roles (who did what
// to whom, passives undone), with the same polarity, and a cause stated
// as the piece states it.
func (v Verifier) Check(ctx context.Context, d Draft, sources []Source) Verdict {
	return v.check(ctx, d, sources, nil, nil)
}

// check is Check with vetoes: veto[i], when set, withholds support from
// claim i with that reason (the judge's); notes are added to the
// response's.
func (v Verifier) check(ctx context.Context, d Draft, sources []Source, veto map[int]string, extra []string) Verdict {
	v = v.withDefaults()
	lex, err := lexicon.Load()
	if err != nil {
		lex = nil // the embedded data is broken: words are compared as written
	}
	valid, dropped := validCitations(d, sources)
	claims := answerClaims(d, sources, lex)
	pieces := citedPieces(valid, sources, lex)
	notes := slices.Clone(extra)
	if v.Embed != nil && v.SemanticWeight > 0 && len(claims) > 0 && len(pieces) > 0 {
		if err := v.embed(ctx, claims, pieces); err != nil {
			notes = append(notes, "the semantic check was unavailable; claims were matched by their words only")
		}
	}
	m := matcher{lex: lex, synonymRank: v.SynonymRank}
	checks := make([]ClaimCheck, len(claims))
	relevance := make([]float64, len(valid))
	for i, c := range claims {
		checks[i] = v.checkClaim(m, c, pieces, valid, relevance, veto[i])
	}
	return v.verdict(d, sources, claims, checks, valid, dropped, relevance, notes)
}

// validCitations keeps the citations that name a source of the context
// and quote a span of it, once each; dropped says why the others went.
func validCitations(d Draft, sources []Source) (valid []validCitation, dropped []string) {
	byID := map[string]int{}
	for i, s := range sources {
		if _, dup := byID[s.ID]; !dup && s.ID != "" {
			byID[s.ID] = i
		}
	}
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
	return valid, dropped
}

// citedPiece is a piece of a cited source and the citation credited when
// it supports a claim: the one whose span it holds or that holds it, or
// the source's first.
type citedPiece struct {
	srcPiece
	cite int
}

// citedPieces cuts every cited source into pieces, in citation order.
func citedPieces(valid []validCitation, sources []Source, lex *lexicon.Lexicon) []citedPiece {
	var out []citedPiece
	done := map[int]bool{}
	for k, c := range valid {
		if done[c.source] {
			continue
		}
		done[c.source] = true
		for _, p := range sourcePieces(sources[c.source].Text, c.source, lex) {
			cite := k
			for k2, c2 := range valid {
				if c2.source == c.source && (spanOccurs(c2.Span, p.text) || spanOccurs(p.text, c2.Span)) {
					cite = k2
					break
				}
			}
			out = append(out, citedPiece{srcPiece: p, cite: cite})
		}
	}
	return out
}

// checkClaim judges one claim: each part's best piece; supported when
// every part has one that supports it. The sources credited are those of
// the best pieces, and of every other source whose piece supports a part
// as well (two memories that say it word for word).
func (v Verifier) checkClaim(m matcher, c claim, pieces []citedPiece, valid []validCitation, relevance []float64, veto string) ClaimCheck {
	check := ClaimCheck{Text: c.text, Supported: len(c.parts) > 0}
	score := 1.0
	var credit []int
	if quoted := quotingPieces(c, pieces, valid); len(quoted) > 0 {
		// A sentence of a source, word for word, is what the source says.
		credit, c.parts = quoted, nil
	}
	for _, p := range c.parts {
		best, cr := v.bestSupport(m, p, pieces)
		if !best.ok && len(p.conjuncts) > 0 {
			// No piece holds the whole list: each member on its own.
			all, ccr := partSupport{ok: true, score: 1}, []int(nil)
			strict := m
			strict.strict = true // each member on its own must be said as the claim says it
			for _, q := range p.conjuncts {
				b, qcr := v.bestSupport(strict, q, pieces)
				if !b.ok {
					all = b
					break
				}
				all.score = math.Min(all.score, b.score)
				ccr = append(ccr, qcr...)
			}
			if all.ok {
				best, cr = all, ccr
			}
		}
		if !best.ok {
			check.Supported = false
			if check.Reason == "" {
				check.Reason = cmp.Or(best.why, "no cited source supports it")
			}
		}
		score = math.Min(score, math.Max(0, best.score))
		for _, k := range cr {
			if !slices.ContainsFunc(credit, func(k2 int) bool { return pieces[k2].src == pieces[k].src }) {
				credit = append(credit, k)
			}
		}
	}
	if c.vec != nil && v.SemanticWeight > 0 {
		score = (1-v.SemanticWeight)*score + v.SemanticWeight*bestCosine(c, pieces, credit)
		check.Supported = check.Supported && score >= v.Threshold*(1-v.SemanticWeight)
	}
	check.Score = round4(score)
	if check.Supported && veto != "" {
		check.Supported, check.Reason, check.Score = false, veto, round4(score*structurePenalty)
	}
	if !check.Supported {
		return check
	}
	check.Reason = ""
	for _, k := range credit {
		cite := valid[pieces[k].cite]
		relevance[pieces[k].cite] = math.Max(relevance[pieces[k].cite], check.Score)
		if !contains(check.SourceIDs, cite.SourceID) {
			check.SourceIDs = append(check.SourceIDs, cite.SourceID)
		}
	}
	return check
}

// bestSupport is a part's best support among the pieces, and the pieces
// to credit: its own, and every other source's that supports it as well
// (two memories that say it word for word).
func (v Verifier) bestSupport(m matcher, p claimPart, pieces []citedPiece) (partSupport, []int) {
	best := partSupport{piece: -1}
	var all []partSupport
	for i := range pieces {
		s := m.support(p, &pieces[i].srcPiece, v.Threshold)
		s.piece = i
		all = append(all, s)
		if best.piece < 0 || (s.ok && !best.ok) || (s.ok == best.ok && s.score > best.score) {
			best = s
		}
	}
	var credit []int
	for _, s := range all {
		if s.ok && s.score >= best.score-1e-9 && !slices.ContainsFunc(credit, func(k int) bool { return pieces[k].src == pieces[s.piece].src }) {
			credit = append(credit, s.piece)
		}
	}
	return best, credit
}

// quotingPieces are the pieces (one a source) a claim quotes word for
// word: a whole sentence of the source (its list item's label included or
// not), or, when the claim is exactly a span the answer cites, that span
// standing at the start of a sentence (an extract cut at its length
// limit). A quote from the middle of a sentence is not taken as said: "it
// is not true that the API runs on Nomad" does not say the API runs on
// Nomad.
func quotingPieces(c claim, pieces []citedPiece, valid []validCitation) []int {
	text := quoteKey(c.text)
	if text == "" {
		return nil
	}
	var out []int
	for i, p := range pieces {
		ok := slices.Contains(p.quotes, text)
		for _, v := range valid {
			if len(p.quotes) > 0 && v.source == p.src && quoteKey(v.Span) == text && strings.HasPrefix(p.quotes[0], text) {
				ok = true
			}
		}
		if ok && labelsHeld(c.labels, &p.srcPiece) && !slices.ContainsFunc(out, func(k int) bool { return pieces[k].src == p.src }) {
			out = append(out, i)
		}
	}
	return out
}

// labelsHeld reports whether a piece or its source's label holds every
// word of a claim's label.
func labelsHeld(labels []token, pc *srcPiece) bool {
	for _, l := range labels {
		same := func(t token) bool { return t.low == l.low }
		if !slices.ContainsFunc(pc.a.toks, same) && !slices.ContainsFunc(pc.extra, same) {
			return false
		}
	}
	return true
}

// quoteKey is a text as quotes are compared: normalised, without markers
// and end punctuation.
func quoteKey(s string) string {
	return strings.TrimRight(normalizeText(stripMarkers(s)), " .!?;:\"'")
}

// verdict computes the figures, decides refusal and writes the notes.
func (v Verifier) verdict(d Draft, sources []Source, claims []claim, checks []ClaimCheck, valid []validCitation, dropped []string,
	relevance []float64, notes []string) Verdict {
	out := GroundedResponse{Sources: []SourceCitation{}}
	supporting := map[string]bool{}
	var supported int
	var scoreSum float64
	var unsupported []string
	var removed []ClaimCheck
	for i, c := range checks {
		if c.Supported {
			supported++
			scoreSum += c.Score
			for _, id := range c.SourceIDs {
				supporting[id] = true
			}
			continue
		}
		unsupported = append(unsupported, fmt.Sprint(i+1))
		removed = append(removed, c)
	}
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
	notes = append(notes, unsupportedNote(unsupported, len(claims)))
	if len(dropped) > 0 {
		notes = append(notes, fmt.Sprintf("dropped %d %s: %s", len(dropped), plural(len(dropped), "citation"), strings.Join(dropped, "; ")))
	}
	for k, c := range valid {
		if relevance[k] == 0 {
			notes = append(notes, fmt.Sprintf("the span cited from %s supports no claim", quoteID(c.SourceID)))
		}
	}
	if len(why) > 0 {
		out.Answer, out.Refused = RefusalText, true
		out.Notes = joinNotes(append(why, notes...))
		return Verdict{Response: out, Claims: checks, Dropped: dropped}
	}
	out.Answer = keepSupported(d, claims, checks)
	if len(removed) > 0 {
		notes = append(notes, removedNote(removed))
	}
	out.Claims = checks
	out.Confidence = round4(out.CoverageRatio * scoreSum / float64(supported))
	for k, c := range valid {
		if relevance[k] > 0 {
			out.Sources = append(out.Sources, SourceCitation{SourceID: c.SourceID, SourceType: sources[c.source].Type,
				Span: c.Span, Relevance: round4(relevance[k])})
		}
	}
	out.Notes = joinNotes(notes)
	return Verdict{Response: out, Claims: checks, Dropped: dropped, Removed: removed}
}

func unsupportedNote(unsupported []string, n int) string {
	switch len(unsupported) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("unsupported: claim %s of %d", unsupported[0], n)
	}
	return fmt.Sprintf("unsupported: claims %s and %s of %d", strings.Join(unsupported[:len(unsupported)-1], ", "), unsupported[len(unsupported)-1], n)
}

// removedNote names the unsupported claims an accepted answer lost.
func removedNote(removed []ClaimCheck) string {
	var b strings.Builder
	fmt.Fprintf(&b, "removed from the answer as unsupported: ")
	for i, c := range removed {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%q", c.Text)
		if c.Reason != "" {
			fmt.Fprintf(&b, " (%s)", c.Reason)
		}
	}
	return b.String()
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// embed sets the vectors of claims and pieces.
func (v Verifier) embed(ctx context.Context, claims []claim, pieces []citedPiece) error {
	texts := make([]string, 0, len(claims)+len(pieces))
	for _, c := range claims {
		texts = append(texts, c.text)
	}
	for _, p := range pieces {
		texts = append(texts, p.text)
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
	for i := range pieces {
		pieces[i].vec = vecs[len(claims)+i]
	}
	return nil
}

// bestCosine is the best cosine of a claim and the pieces credited with
// it (all pieces when none is).
func bestCosine(c claim, pieces []citedPiece, credit []int) float64 {
	best := 0.0
	for i, p := range pieces {
		if len(credit) == 0 || slices.Contains(credit, i) {
			best = math.Max(best, cosine(c.vec, p.vec))
		}
	}
	return best
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
	var parts []string
	for _, n := range notes {
		if n != "" {
			parts = append(parts, strings.ToUpper(n[:1])+n[1:]+".")
		}
	}
	return strings.Join(parts, " ")
}
