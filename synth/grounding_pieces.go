package synth

import (
	"regexp"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/synth/lexicon"
)

// The pieces of a cited source a claim may rest on: its sentences (a
// hard-wrapped line joined to the next, a list item on its own), and two
// sentences together when the second says what the first means ("This
// means ..."). Every piece knows the words that stand over the whole
// source: its label or speaker ("Caroline: ..."), a heading line, a
// signature line.

// srcPiece is one stretch of a source.
type srcPiece struct {
	src  int // the source's index in the context
	text string
	// window: the piece is two or more sentences of the source together.
	window bool
	a      analysis
	// extra are the source's label, heading and signature words: every
	// piece of the source holds them, outside its clauses.
	extra []token
	// quotes are the piece's text as a quote of it is compared
	// (quoteKey), with its list item's label and without.
	quotes []string
	vec    []float32
}

var (
	// itemRE opens a line that starts something new: a list item, a
	// heading, a changelog's signature.
	itemRE = regexp.MustCompile(`^\s*(?:[-*+•]\s|\d{1,3}[.)]\s|#{1,6}\s|-- )`)
	// signatureRE is a changelog entry's last line: " -- Name <mail>  date".
	signatureRE = regexp.MustCompile(`^\s*-- `)
	// resultRE opens a sentence that says what the one before means, or
	// gives an example of it.
	resultRE = regexp.MustCompile(`(?i)^(?:this|that|which) (?:means|is why)\b|^(?:so|therefore|thus|hence|as a result|consequently|for example|for instance|e\.g\.)\b`)
	// exampleRE opens a sentence that gives an example.
	exampleRE = regexp.MustCompile(`(?i)^(?:for example|for instance|e\.g\.)`)
)

// sourcePieces cuts a source's text into pieces.
func sourcePieces(text string, src int, lex *lexicon.Lexicon) []srcPiece {
	speaker, body, extra := sourceLabel(text, lex)
	items, heading, signature := logicalLines(body)
	for _, h := range []string{heading, signature} {
		if h != "" {
			for _, t := range tokenize(h, "", lex) {
				if t.needsSupport() {
					extra = append(extra, t)
				}
			}
		}
	}
	b := &pieceBuilder{src: src, speaker: speaker, extra: extra, lex: lex}
	if i := strings.Index(text, body); body != text && i > 0 {
		b.lead = text[:i] // "Dave: ", quoted with the first sentence
	}
	for _, it := range items {
		b.item(it)
	}
	return b.out
}

// pieceBuilder makes a source's pieces, remembering the subject of the
// sentence before, which a pronoun opening the next one stands for.
type pieceBuilder struct {
	src        int
	speaker    string
	extra      []token
	lex        *lexicon.Lexicon
	out        []srcPiece
	antecedent []token
	// lead is the source's label as written, which a quote of its first
	// sentence may include.
	lead string
}

// item adds the pieces of one list item or paragraph.
func (b *pieceBuilder) item(it item) {
	lineLabel, body := itemLabel(it.text, b.lex)
	label := strings.TrimSuffix(it.text, body)
	if it.parent != "" {
		for _, t := range tokenize(it.parent, "", b.lex) {
			if t.needsSupport() {
				lineLabel = append(lineLabel, asLabel(t))
			}
		}
	}
	sents := sourceSentences(body)
	var window [][]token
	for i, s := range sents {
		if i > 0 {
			label = ""
		}
		if strings.HasSuffix(s, "?") {
			window = nil
			continue // a question asks; it does not say
		}
		toks := b.add(s, lineLabel, label, true)
		window = append(window, toks)
		if len(window) > windowSentences {
			window = window[1:]
		}
		for k := len(window) - 2; k >= 0; k-- {
			var joined []token
			for _, w := range window[k:] {
				joined = append(joined, w...)
			}
			b.out = append(b.out, srcPiece{src: b.src, text: s, a: analyse(slices.Clone(joined), b.lex, false),
				extra: append(slices.Clip(b.extra), lineLabel...), window: true})
		}
		if i+1 < len(sents) && resultRE.MatchString(sents[i+1]) {
			next := sents[i+1]
			if m := exampleRE.FindString(next); m != "" {
				// "... in relative terms. For example, 12 seconds ago": the
				// example belongs to the sentence it illustrates.
				s, next = strings.TrimRight(s, ".!"), strings.ToLower(m[:1])+m[1:]+next[len(m):]
				b.add(s+", "+next, lineLabel, "", false)
				continue
			}
			b.add(s+" "+next, lineLabel, "", false)
		}
	}
}

// add adds one piece. A sentence's pronoun subject ("They strike with
// their bill") stands for the subject of the sentence before; a chat's
// sentence without a subject ("Started when I was young") has the
// speaker's.
func (b *pieceBuilder) add(s string, lineLabel []token, label string, sentence bool) []token {
	toks := tokenize(s, b.speaker, b.lex)
	if b.speaker != "" {
		dropVocatives(toks)
	}
	toks = resolvePronouns(toks, b.antecedent)
	a := analyse(toks, b.lex, false)
	if b.speaker != "" && opensWithVerb(a) {
		toks = append([]token{{text: b.speaker, low: b.speaker, stem: b.extra[0].stem, kind: kName, noun: true}}, toks...)
		a = analyse(toks, b.lex, false)
	}
	if sentence {
		b.antecedent = subjectOf(a)
	}
	quotes := []string{quoteKey(s)}
	if label != "" {
		quotes = append(quotes, quoteKey(label+s))
	}
	if b.lead != "" && sentence {
		quotes = append(quotes, quoteKey(b.lead+label+s))
		b.lead = ""
	}
	b.out = append(b.out, srcPiece{src: b.src, text: s, a: a, extra: append(slices.Clip(b.extra), lineLabel...), quotes: quotes})
	return toks
}

// windowSentences is how many sentences of a source in a row may
// support one part of a claim together ("I attended this awesome event
// recently. It was like a car lover's paradise! They had so many classic
// cars on show"). Only the sentence holding the part's clause may say
// who did what to whom, and of what kind; the others may add only a
// preposition's object (addsDetail).
const windowSentences = 3

// thirdPerson are the pronouns that may stand for the subject of the
// sentence before; possessive ones make it a possessor.
var thirdPerson = map[string]bool{"it": false, "they": false, "them": false, "its": true, "their": true,
	"he": false, "she": false, "him": false, "his": true}

// resolvePronouns puts the antecedent in place of the third-person
// pronouns of a sentence's first clause ("he" and "she" only for a
// named antecedent other than the speaker, who would say "I").
func resolvePronouns(toks []token, antecedent []token) []token {
	if len(antecedent) == 0 {
		return toks
	}
	named := slices.ContainsFunc(antecedent, func(t token) bool { return t.kind == kName && !firstPerson[strings.ToLower(t.text)] })
	speaker := slices.ContainsFunc(antecedent, func(t token) bool { return firstPerson[strings.ToLower(t.text)] })
	var out []token
	for i, t := range toks {
		poss, ok := thirdPerson[t.low]
		personal := t.low == "he" || t.low == "she" || t.low == "him" || t.low == "his"
		if !ok || !t.isWord() || personal && !named || !personal && speaker || firstClauseEnded(toks, i) {
			// "It was like a car lover's paradise" after "I attended this
			// event": "it" is not the speaker.
			out = append(out, t)
			continue
		}
		for k, a := range antecedent {
			a.start, a.poss = false, poss && k == len(antecedent)-1
			out = append(out, a)
		}
	}
	return out
}

// firstClauseEnded reports whether a clause boundary (a coordinator, a
// comma, a semicolon) stands before i.
func firstClauseEnded(toks []token, i int) bool {
	for j := 0; j < i; j++ {
		if toks[j].punct == ',' || toks[j].punct == ';' || toks[j].isWord() && coordinators[toks[j].low] {
			return true
		}
	}
	return false
}

// subjectOf is the subject of a text's first clause: its nouns and their
// adjectives before the predicate.
func subjectOf(a analysis) []token {
	if len(a.pred) == 0 || a.pred[0] < 0 {
		return nil
	}
	var out []token
	for i := 0; i < a.pred[0]; i++ {
		if (a.toks[i].noun || a.toks[i].adj) && (a.role[i] == roleSubj || a.role[i] == roleCop) {
			out = append(out, a.toks[i])
		}
	}
	return out
}

// lineLabelRE is what a list item may open with to say what it is
// about: an identifier or one or two words, then a colon and a space
// ("credential: sanitize ...", "CVE-2025-0938: urlparse accepted ...",
// "zstd: Fix ...").
var lineLabelRE = regexp.MustCompile(`^(?:[^\s:]+|[\p{L}\p{N}][\p{L}\p{N}-]*(?: [\p{L}\p{N}][\p{L}\p{N}-]*)?):\s+`)

// itemLabel splits a list item's label from its text; the label's words
// belong to every piece of the item, outside its clauses.
func itemLabel(item string, lex *lexicon.Lexicon) ([]token, string) {
	m := lineLabelRE.FindString(item)
	if m == "" || len(m) == len(item) || strings.Contains(m, "://") {
		return nil, item
	}
	var out []token
	for _, t := range tokenize(strings.TrimSuffix(strings.TrimSpace(m), ":"), "", lex) {
		if t.needsSupport() {
			out = append(out, asLabel(t))
		}
	}
	return out, item[len(m):]
}

// sourceLabel reads the label a source opens with ("Caroline: I went
// ..."): its words are known to every piece, and when it is one
// capitalised word it is the speaker, whom "I", "me" and "my" stand for.
func sourceLabel(text string, lex *lexicon.Lexicon) (speaker, body string, extra []token) {
	words := lexical.Label(text)
	if len(words) == 0 {
		return "", text, nil
	}
	i := strings.IndexByte(text, ':')
	head := strings.TrimSpace(text[:i])
	for _, t := range tokenize(head, "", lex) {
		if t.needsSupport() {
			extra = append(extra, asLabel(t))
		}
	}
	if len(words) == 1 && head != "" && head[0] >= 'A' && head[0] <= 'Z' {
		speaker = strings.ToLower(head)
	}
	return speaker, strings.TrimSpace(text[i+1:]), extra
}

// item is a logical line of a source and the text of the list item it
// is nested under ("" at the top).
type item struct {
	text, parent string
}

// logicalLines joins hard-wrapped lines: a line continues the one before
// unless it is blank, opens a list item, a heading or a signature, or
// follows a blank line. A first line followed by a blank line, and not
// ended like a sentence, is the source's heading ("openssh
// (1:9.2p1-2+deb12u6) bookworm; ..."); a changelog's " -- Name <mail>
// date" its signature. Both are items too. An item indented under
// another is nested in it: the outer item says what the inner ones are
// about ("New upstream version 2025b:").
func logicalLines(text string) (items []item, heading, signature string) {
	lines := strings.Split(text, "\n")
	var cur []string
	var stack []struct {
		indent int
		text   string
	}
	indent := 0
	flush := func() {
		if len(cur) == 0 {
			return
		}
		t := strings.Join(cur, " ")
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		parent := ""
		if len(stack) > 0 {
			parent = stack[len(stack)-1].text
		}
		items = append(items, item{text: t, parent: parent})
		stack = append(stack, struct {
			indent int
			text   string
		}{indent, t})
		cur = nil
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			flush()
			stack = nil
		case signatureRE.MatchString(l):
			flush()
			signature = strings.TrimSpace(strings.TrimPrefix(t, "--"))
			indent, cur = 0, []string{signature}
			flush()
		case itemRE.MatchString(l) || len(cur) == 0:
			flush()
			indent = len(strings.ReplaceAll(l[:len(l)-len(strings.TrimLeft(l, " \t"))], "\t", "    "))
			cur = []string{bulletRE.ReplaceAllString(strings.TrimLeft(t, "#"), "")}
		default:
			cur = append(cur, t)
		}
		if i == 0 && t != "" && len(lines) > 1 && strings.TrimSpace(lines[1]) == "" && !strings.ContainsAny(t[len(t)-1:], ".!?") {
			heading = t
		}
	}
	flush()
	return items, heading, signature
}

// opensWithVerb reports whether a sentence starts with its verb (after
// light words and a negation): "Lost my job", "Just got some shoes".
func opensWithVerb(a analysis) bool {
	for i, t := range a.toks {
		switch {
		case !t.isWord():
			continue
		case t.kind == kFn && lightWords[t.low], t.kind == kNeg:
			continue
		}
		return t.verb && (a.pred[a.clause[i]] == i || strings.HasSuffix(t.low, "ing"))
	}
	return false
}

// asLabel makes a label's word a name (a number stays a number): it names
// what the text is about and needs the same word.
func asLabel(t token) token {
	if t.kind != kNumber {
		t.kind = kName
	}
	t.noun, t.verb, t.adj = true, false, false
	return t
}

// interjections open a sentence that addresses someone ("Hey Mel!").
var interjections = termsOf(`hey hi hello thanks thank yeah yes yep wow oh aww congrats sorry glad yo dear well ok okay`)

// dropVocatives removes the names a speaker addresses ("Thanks, Maria!",
// "Who supports you, Mel?"): the turn is not about them.
func dropVocatives(toks []token) {
	for i, t := range toks {
		if t.kind != kName || firstPerson[strings.ToLower(t.text)] {
			continue
		}
		before := i == 0 || toks[i-1].punct == ',' || toks[i-1].punct == '.' || toks[i-1].punct == '!' ||
			(toks[i-1].isWord() && interjections[toks[i-1].low])
		after := i+1 == len(toks) || toks[i+1].punct == ',' || toks[i+1].punct == '!' || toks[i+1].punct == '?' || toks[i+1].punct == '.'
		if before && after {
			toks[i].kind, toks[i].noun = kFn, false
		}
	}
}
