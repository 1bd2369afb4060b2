package synth

import (
	"slices"
	"strings"
	"unicode"

	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/synth/lexicon"
)

// The claims of an answer: its sentences that say something about the
// world, without the labels, ids and markers that came from the prompt,
// each cut into the parts that must each rest on a piece of a source.

// claim is a sentence of the answer that makes a claim.
type claim struct {
	text string // without markers and ids
	raw  string // as the answer has it
	line int    // the answer's line it stands on (-1: a declared claim)
	// labels are the words of the label the claim stands under: a
	// source it quotes must hold them too.
	labels []token
	parts  []claimPart
	vec    []float32
}

// claimPart is a clause of a claim (with the subject or verb it shares
// with the first clause when it has none of its own: "... and the batch
// jobs on Nomad"), or two clauses a causal connective joins.
type claimPart struct {
	a analysis
	// need are the tokens that must be found in the supporting piece.
	need []int
	// labels are the words of the label the claim stands under
	// ("payments-api:", a list's heading "Caroline:"): the supporting
	// piece or its source must hold them too.
	labels []token
	// cause, when hasCause, is what the part says caused what.
	cause    causal
	hasCause bool
	// conjuncts are the part once for each member of a list it names
	// ("fixes CVE-A, CVE-B and CVE-C"): when no piece holds the whole
	// list, each member may rest on its own.
	conjuncts []claimPart
}

// answerSentence is a sentence of an answer as written (raw), without
// its markers and ids (text), the heading of the list it stands in, and
// its line.
type answerSentence struct {
	raw, text, heading string
	line               int
}

// answerClaims splits an answer into its claims. A question claims
// nothing; a line that is only a label ("Caroline:", "payments-api:") makes no claim: it labels the list
// items below it, each of which then needs it. Markers ("[t-101]") and
// the ids of the context's sources are not part of a claim.
func answerClaims(d Draft, sources []Source, lex *lexicon.Lexicon) []claim {
	var sents []answerSentence
	if len(d.Claims) > 0 && normalizeText(strings.Join(d.Claims, " ")) == normalizeText(d.Answer) {
		for _, c := range d.Claims {
			sents = append(sents, answerSentence{raw: c, text: stripIDs(stripMarkers(c), sources), line: -1})
		}
	} else {
		sents = answerSentences(d.Answer, sources)
	}
	var context strings.Builder
	for _, src := range sources {
		context.WriteString(strings.ToLower(src.Text))
		context.WriteByte('\n')
	}
	names := contextNames(sources, lex)
	var out []claim
	for _, s := range sents {
		if strings.HasSuffix(strings.TrimRight(s.text, `"')”’ `), "?") {
			continue // a question asks; it claims nothing
		}
		if c, ok := makeClaim(s.text, s.heading, context.String(), names, lex); ok && len(c.parts) > 0 {
			c.raw, c.line = s.raw, s.line
			out = append(out, c)
		}
	}
	return out
}

// answerSentences splits an answer into sentences, keeping the label
// each stands under: a label line's ("Caroline:") over the list items or
// the lines below it (up to a blank line, a line after its list, or the
// next label), and a label opening a sentence ("payments-api: Orders are
// stored in postgres.") over that sentence. A label is no sentence of
// its own: it came from the prompt.
func answerSentences(answer string, sources []Source) []answerSentence {
	var out []answerSentence
	heading, inList := "", false
	for n, line := range strings.Split(answer, "\n") {
		raw := strings.TrimSpace(line)
		item := bulletRE.MatchString(raw)
		body := bulletRE.ReplaceAllString(raw, "")
		clean := strings.TrimSpace(stripIDs(stripMarkers(body), sources))
		switch {
		case clean == "":
			if raw == "" {
				heading = "" // a blank line ends what a label stands over
			}
			continue
		case isLabelLine(clean):
			heading, inList = strings.TrimSuffix(clean, ":"), false
			continue
		case sourcesLabelRE.MatchString(clean):
			continue
		case item:
			inList = true
		case inList:
			heading, inList = "", false // a line after the list is not under its label
		}
		label, labelRaw := "", ""
		for _, s := range splitSentences(body) {
			text := stripIDs(stripMarkers(s), sources)
			if t := strings.TrimSpace(text); isLabelLine(t) {
				// "payments-api:" before a sentence: that sentence's label.
				label, labelRaw = strings.TrimSuffix(t, ":"), s
				continue
			}
			if label != "" && !item {
				heading = "" // a line with a label of its own is not under the one above
			}
			sent := answerSentence{raw: s, text: text, heading: strings.TrimSpace(heading + " " + label), line: n}
			if whole := labelRaw + " " + s; labelRaw != "" && strings.Contains(body, whole) {
				sent.raw = whole // the label goes with its sentence when that is removed
			}
			out = append(out, sent)
			label, labelRaw = "", ""
		}
	}
	return out
}

// isLabelLine reports whether a line is only a label: a few words and a
// colon ("Caroline:", "tzdata 2024b:", "payments-api:", "openssl
// 3.0.15-1~deb12u1:"), without brackets or quotes ("auth-service
// (service) auth-service:" quotes a source).
func isLabelLine(s string) bool {
	head, ok := strings.CutSuffix(s, ":")
	return ok && head != "" && len(strings.Fields(head)) <= 3 && !strings.ContainsAny(head, "!?:;()[]{}\"") &&
		!strings.Contains(head+" ", ". ") // a version's stops ("openssl 3.0.15-1~deb12u1:") are no sentence's end
}

// stripIDs removes the ids of the context's sources from a sentence
// ("According to t-201, ..."): they came from the prompt. Only ids holding
// a digit or a separator are removed, so an id that is a plain word
// stays.
func stripIDs(s string, sources []Source) string {
	for _, src := range sources {
		id := src.ID
		if len(id) < 2 || !strings.ContainsFunc(id, func(r rune) bool { return !unicode.IsLetter(r) }) {
			continue
		}
		s = strings.ReplaceAll(s, id, "")
	}
	return strings.TrimSpace(s)
}

// makesClaim reports whether a sentence says something a source must
// support: not a question, not only a label, greeting or lead-in ("For
// sure!", "Here is what I found.").
func makesClaim(sentence string, lex *lexicon.Lexicon) bool {
	if strings.HasSuffix(strings.TrimRight(sentence, `"')”’ `), "?") {
		return false
	}
	_, ok := makeClaim(sentence, "", "", nil, lex)
	return ok
}

// makeClaim analyses a sentence under a heading; ok is false when it
// makes no claim (it says nothing but "Here is what I found"). A word
// opening it that the sources use as a name (names) is a name. The
// label's words are needed, except words that frame the answer
// ("Summary:") and, over a sentence with a subject of its own, a word
// that no source of the context (lower-cased in context) holds: a
// heading the answer gave its list ("Infrastructure:"), which cannot put
// a claim under another source's label.
func makeClaim(text, heading, context string, names map[string]bool, lex *lexicon.Lexicon) (claim, bool) {
	body, label := text, heading
	if words := lexical.Label(text); len(words) > 0 {
		if i := strings.IndexByte(text, ':'); i > 0 && strings.TrimSpace(text[i+1:]) != "" {
			body, label = strings.TrimSpace(text[i+1:]), strings.TrimSpace(heading+" "+text[:i])
		}
	}
	toks := tokenize(body, "", lex)
	promoteNames(toks, names)
	referenceNouns(toks)
	says := false
	for _, t := range toks {
		if t.needsSupport() && !metaWords[t.low] {
			says = true
		}
	}
	if !says {
		return claim{}, false
	}
	a := analyse(toks, lex, true)
	// A heading of the answer's own ("Infrastructure:") over a sentence
	// with a subject of its own: no source's label, nothing to find.
	heads := !opensWithVerb(a) && !opensWithPronoun(toks)
	var labels []token
	for _, t := range tokenize(label, "", lex) {
		own := heads && !strings.Contains(context, t.low)
		if t.needsSupport() && !own && !metaWords[t.low] && !labelFrames[t.low] && !interjections[t.low] {
			labels = append(labels, asLabel(t))
		}
	}
	c := claim{text: text, labels: labels}
	for _, p := range claimParts(a, lex) {
		p.labels = labels
		c.parts = append(c.parts, p)
	}
	return c, true
}

// opensWithPronoun reports whether a sentence's first word is a personal
// pronoun, which a label over it names ("Caroline: She went ...").
func opensWithPronoun(toks []token) bool {
	for _, t := range toks {
		if t.isWord() {
			return personalPronouns[t.low] || possessives[t.low]
		}
	}
	return false
}

var possessives = termsOf(`his her their its my our your`)

// labelFrames are the words of labels that frame an answer ("Summary:",
// "Key points:", "In short:") rather than name what it is about.
var labelFrames = termsOf(`overview key points point short brief tldr tl dr background conclusion conclusions highlights facts answer
	result results finding findings update updates status timeline recap`)

// references are the nouns that name an item by its number ("version
// 5.2-3", "the deb12u13 upload", "release 2025b"): next to a number they
// say nothing the number does not.
var references = termsOf(`version versions upload uploads release releases update updates entry revision`)

// referenceNouns makes such nouns light.
func referenceNouns(toks []token) {
	for i, t := range toks {
		if t.kind != kContent || !references[t.low] {
			continue
		}
		if (i > 0 && toks[i-1].kind == kNumber) || (i+1 < len(toks) && toks[i+1].kind == kNumber) {
			toks[i].kind, toks[i].noun = kFn, true
		}
	}
}

// claimParts cuts a claim into the parts that must each rest on a piece:
// its clauses, except that clauses a causal connective joins stay
// together. A clause without a verb ("and a nearby church yesterday")
// takes the first clause's subject and verb; one without a subject
// ("and is sticking to her routine") takes its subject.
func claimParts(a analysis, lex *lexicon.Lexicon) []claimPart {
	toks := a.toks
	var segs [][2]int
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && a.clause[j] == a.clause[i] {
			j++
		}
		switch {
		case len(segs) > 0 && (causalAt(toks, firstWord(toks, i)) != 0 || causalAt(toks, firstWord(toks, segs[len(segs)-1][0])) == causeAfter &&
			atStart(toks, 0, firstWord(toks, segs[len(segs)-1][0])) && len(segs) == 1):
			segs[len(segs)-1][1] = j
		default:
			segs = append(segs, [2]int{i, j})
		}
		i = j
	}
	var out []claimPart
	for k, s := range segs {
		own := trimJoin(toks[s[0]:s[1]])
		if k > 0 && !relatives[toks[firstWord(toks, s[0])].low] {
			own = append(inherited(a, segs[0], own), own...)
		}
		p, ok := newPart(own, lex)
		if !ok {
			continue
		}
		for _, v := range distribute(p.a.toks) {
			if c, ok := newPart(v, lex); ok {
				p.conjuncts = append(p.conjuncts, c)
			}
		}
		out = append(out, p)
	}
	return out
}

// newPart analyses a part's tokens; ok is false when it needs nothing.
func newPart(toks []token, lex *lexicon.Lexicon) (claimPart, bool) {
	p := claimPart{a: analyse(toks, lex, true)}
	for i, t := range p.a.toks {
		if t.needsSupport() && !metaWords[t.low] {
			p.need = append(p.need, i)
		}
	}
	p.cause, p.hasCause = findCausal(p.a.toks, 0, len(p.a.toks))
	return p, len(p.need) > 0
}

// distribute returns the part once for each member of the first list of
// noun phrases it names ("X, Y and Z"), the other members left out: "It
// fixes CVE-A, CVE-B and CVE-C" is "It fixes CVE-A", "It fixes CVE-B",
// "It fixes CVE-C".
func distribute(toks []token) [][]token {
	for k, t := range toks {
		if !t.isWord() || (t.low != "and" && t.low != "or") {
			continue
		}
		r := k + 1
		for r < len(toks) && listMember(toks[r]) {
			r++
		}
		if r == k+1 {
			continue
		}
		members := [][2]int{{k + 1, r}}
		end := k
		if end > 0 && toks[end-1].punct == ',' {
			end--
		}
		for {
			b := end
			for b > 0 && listMember(toks[b-1]) {
				b--
			}
			if b == end {
				break
			}
			members = append([][2]int{{b, end}}, members...)
			if b == 0 || toks[b-1].punct != ',' {
				break
			}
			end = b - 1
		}
		if len(members) < 2 {
			continue
		}
		start := members[0][0]
		if start > 0 && toks[start-1].low == "both" {
			start--
		}
		var out [][]token
		for _, m := range members {
			v := append(append(slices.Clone(toks[:start]), toks[m[0]:m[1]]...), toks[r:]...)
			out = append(out, v)
		}
		return out
	}
	return nil
}

// listMember reports whether a token may stand in a member of a list of
// noun phrases.
func listMember(t token) bool {
	return t.isWord() && (t.noun || t.adj || t.kind == kNumber || t.kind == kName || determiners[t.low] && t.low != "both") && !t.verb
}

func firstWord(toks []token, i int) int {
	for j := i; j < len(toks); j++ {
		if toks[j].isWord() {
			return j
		}
	}
	return min(i, len(toks)-1)
}

// trimJoin drops the punctuation and the coordinator or relative word a
// clause opens with.
func trimJoin(toks []token) []token {
	for len(toks) > 0 && (!toks[0].isWord() || coordinators[toks[0].low] || relatives[toks[0].low]) {
		toks = toks[1:]
	}
	return append([]token(nil), toks...)
}

// gappedSubject reports whether a clause without a verb opens with a
// subject of its own: a noun phrase followed by a preposition that
// follows the first clause's verb p ("... runs on Kubernetes and the
// batch jobs on Nomad").
func gappedSubject(a analysis, p int, first [2]int, own []token) bool {
	k := 0
	for k < len(own) && own[k].isWord() && (own[k].noun || own[k].adj || determiners[own[k].low] || own[k].poss) {
		k++
	}
	if k == 0 || k >= len(own) || !own[k].isWord() || !prepositions[own[k].low] {
		return false
	}
	for i := p + 1; i < first[1]; i++ {
		if a.toks[i].isWord() && a.toks[i].low == own[k].low {
			return true
		}
	}
	return false
}

// inherited is what a later clause takes from the first one: its
// subject and verb when the clause has no verb, its subject when the
// clause opens with its verb, nothing otherwise.
func inherited(a analysis, first [2]int, own []token) []token {
	c := a.clause[first[0]]
	p := a.pred[c]
	if p < 0 {
		return nil
	}
	hasVerb, opensWithVerb := false, false
	for i, t := range own {
		if t.verb || (t.isWord() && auxiliaries[t.low]) {
			hasVerb = true
			opensWithVerb = opensWithVerb || i == 0
		}
	}
	end := p // the subject: up to the verb
	switch {
	case !hasVerb && gappedSubject(a, p, first, own):
		// "... and the batch jobs on Nomad", "Bdale was thanked for X, and
		// Steve for Y": a subject of its own, the verb left out.
		from := p
		for from > first[0] && a.toks[from-1].isWord() && (auxiliaries[a.toks[from-1].low] || a.toks[from-1].kind == kNeg) {
			from--
		}
		return slices.Clone(a.toks[from : p+1])
	case !hasVerb:
		end = p + 1
		if a.cop[c] {
			for end < first[1] && (a.toks[end].adj || a.toks[end].kind == kNeg) {
				end++
			}
		}
	case !opensWithVerb:
		return nil
	}
	var out []token
	for i := first[0]; i < end; i++ {
		t := a.toks[i]
		inTime := a.role[i] == roleTime || (i+1 < end && timeWords[a.toks[i+1].low])
		if !t.isWord() || !inTime && !timeWords[t.low] {
			out = append(out, t)
		}
	}
	return out
}
