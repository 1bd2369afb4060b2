package synth

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/synth/lexicon"
	"golang.org/x/text/unicode/norm"
)

// The words of a claim or a piece of a source, with what the verifier
// needs to know of each: whether it names, counts or denies, which base
// forms it has, whether it is a verb, and which role it plays in its
// clause.

// tkind is what a token is to the verifier.
type tkind uint8

const (
	kFn      tkind = iota // a function word, a light word or punctuation: never needs support
	kContent              // a word that says something: needs support
	kName                 // a name: needs the same name
	kNumber               // a number: needs the same number
	kNeg                  // a negation
)

// token is one word or punctuation mark.
type token struct {
	text string // as written
	low  string // lower-cased (a speaker's name for "I", "me", "my")
	stem string
	kind tkind
	// verb: tagged as a verb; noun: a noun, name or number (it plays a
	// role in its clause); adj: an adjective.
	verb, noun, adj bool
	poss            bool // followed by a possessive 's
	start           bool // the first word of its sentence
	punct           byte // the mark, for punctuation
}

// isWord reports whether the token is a word, not punctuation.
func (t token) isWord() bool { return t.punct == 0 }

// needsSupport reports whether a claim's token must be found in the
// piece that supports it.
func (t token) needsSupport() bool {
	return t.kind == kContent || t.kind == kName || t.kind == kNumber
}

// contractions expand the short forms a tokenizer meets ("didn't", "I'm").
var contractions = map[string][]string{
	"n't": {"not"}, "'t": {"not"}, "'m": {"am"}, "'re": {"are"}, "'ve": {"have"}, "'ll": {"will"}, "'d": {"would"},
}

// informal are spoken forms a chat writes ("I wanna start a studio").
var informal = map[string]string{"wanna": "want to", "gonna": "going to", "gotta": "got to", "kinda": "kind of", "fam": "family"}

// irregularNeg are negative contractions whose first half changes.
var irregularNeg = map[string]string{"can't": "can", "won't": "will", "shan't": "shall", "ain't": "is"}

// numberWords are number words read as the digits they stand for, so
// "twelve months" is "12 months" ("one" is left out: it is more often a
// pronoun, "the one I bought", than a count).
var numberWords = map[string]string{
	"zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
	"eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
	"fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
	"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000", "twice": "2",
}

// negations turn a statement around.
var negations = termsOf(`not no never nor neither none nobody nothing cannot without`)

// lightWords say nothing a claim needs support for: discourse words,
// degree words, reporting verbs ("Caroline said she ..." claims what she
// said, which the source holds in her own words).
var lightWords = termsOf(`also just really actually still even now then pretty quite already currently lately recently
	however additionally moreover furthermore meanwhile indeed basically simply certainly definitely probably
	said says say saying mentioned mentions mention told tells tell noted notes explained explains
	shared described describes according based overall both either etc yeah yes hey hi oh wow ok okay
	well much lot lots something things thing anything everything way ways kind sort bit e.g i.e`)

// metaWords are the words of sentences about the answer rather than the
// world ("Based on the available sources:", "Here is what I found.").
var metaWords = termsOf(`according based source sources memory memories context information summary found detail details
	let know sure here mention mentioned cite cited citation provided available note notes answer question happened need
	readme changelog conversation`)

func termsOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// wordRE finds tokens: a number written with separators ("1,312",
// "9.2", "07:40"), a word (letters, digits and marks, joined by hyphens,
// slashes, underscores and stops: "followed-to", "d/watch",
// "email.parseaddr", "America/Coyhaique"; inner apostrophes), or a
// punctuation mark.
var wordRE = regexp.MustCompile(`\d+(?:[.,:]\d+)+|@?[\p{L}\p{N}\p{M}]+(?:[-/_.][\p{L}\p{N}\p{M}]+)*(?:['’][\p{L}]+)*['’]?|['’][a-zA-Z]+|[,;:.!?()"“”\-–—]`)

// versionRE is a version with a leading v ("v1.17.5"), read as its number.
var versionRE = regexp.MustCompile(`\bv(\d+(?:\.\d+)+)`)

// tokenize splits text into tokens. A word that starts a sentence is
// marked so; "I", "me", "my", "mine", "myself" and "we", "us", "our"
// stand for speaker when one is given (a source that opens "Speaker: ").
func tokenize(text, speaker string, lex *lexicon.Lexicon) []token {
	text = versionRE.ReplaceAllString(norm.NFKC.String(text), "$1")
	var out []token
	start := true
	for _, m := range wordRE.FindAllStringIndex(text, -1) {
		w := text[m[0]:m[1]]
		r, _ := utf8.DecodeRuneInString(w)
		if utf8.RuneCountInString(w) == 1 && strings.ContainsRune(`,;:.!?()"“”-–—`, r) {
			// A stop, colon or dash between letters or digits is part of an
			// identifier ("email.parseaddr", "CS:GO"), not punctuation.
			if m[0] > 0 && m[1] < len(text) && !unicode.IsSpace(rune(text[m[0]-1])) && !unicode.IsSpace(rune(text[m[1]])) &&
				strings.ContainsRune(`.:-`, r) {
				continue
			}
			p := byte(r)
			switch r {
			case '“', '”':
				p = '"'
			case '–', '—':
				p = '-'
			}
			if r == '-' && (m[1] >= len(text) || !unicode.IsSpace(rune(text[m[1]]))) {
				continue // a minus sign or a hyphen, not a dash: "-04/-03"
			}
			out = append(out, token{text: w, low: w, punct: p})
			if p == '.' || p == '!' || p == '?' || p == ':' || p == '-' || p == ';' {
				start = true
			}
			continue
		}
		if strings.Contains(w, "-") && strings.ContainsFunc(w, unicode.IsDigit) && !strings.ContainsAny(w, "/_.") {
			// An identifier with numbers ("CVE-2025-26465", "2025b-0") is
			// its parts: a claim may name one of them.
			for _, part := range strings.Split(w, "-") {
				if part != "" {
					out = appendWord(out, part, start, speaker, lex)
					start = false
				}
			}
			continue
		}
		out = appendWord(out, w, start, speaker, lex)
		start = false
	}
	lighten(out)
	return out
}

// attitudes are verbs of intending and hoping: "wants to build", "plans
// to keep", "hopes his music can": what follows is the claim; "going to"
// and "will" say as much.
var attitudes = termsOf(`want wants wanted wanting plan plans planned planning hope hopes hoped hoping intend intends intended
	intending aim aims aimed aiming wish wishes wished going`)

// timeParticles end a time ("two weeks ago", "a few years back", "a few
// days earlier"): they say when, as the time's words do.
var timeParticles = termsOf(`ago back earlier before prior`)

// lighten makes light the words that only frame a claim: an attitude
// verb before "to" (or "hope" before its clause), a time's particle.
func lighten(toks []token) {
	for i := range toks {
		t := &toks[i]
		if t.kind != kContent {
			continue
		}
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1].low
		}
		switch {
		case attitudes[t.low] && (next == "to" || strings.HasPrefix(t.low, "hop") && next != "" && toks[i+1].isWord()),
			timeParticles[t.low] && i > 0 && timeWords[toks[i-1].low]:
			t.kind = kFn
		}
	}
}

// appendWord appends a word's tokens: the word, and what a contraction or
// a possessive adds.
func appendWord(out []token, w string, start bool, speaker string, lex *lexicon.Lexicon) []token {
	w = strings.ReplaceAll(w, "’", "'")
	low := strings.ToLower(w)
	if low == "'cause" || low == "cuz" {
		return append(out, token{text: w, low: "because", stem: "because", start: start})
	}
	if long, ok := informal[low]; ok {
		for k, x := range strings.Fields(long) {
			t := token{text: x, low: x, start: start && k == 0}
			classify(&t, speaker, lex)
			out = append(out, t)
		}
		return out
	}
	var extra []token
	poss := false
	if b, ok := irregularNeg[low]; ok {
		w, low = w[:len(b)], b
		extra = append(extra, token{text: "not", low: "not", stem: "not", kind: kNeg})
	} else if i := strings.Index(low, "'"); i >= 0 {
		rest := low[i:]
		if strings.HasSuffix(low, "n't") {
			rest = low[len(low)-3:]
			i = len(low) - 3
		}
		switch {
		case contractions[rest] != nil:
			for _, x := range contractions[rest] {
				extra = append(extra, token{text: x, low: x, stem: x})
			}
			if rest == "n't" || rest == "'t" {
				extra[0].kind = kNeg
			}
		case rest == "'s" && isPronoun(low[:i]):
			extra = append(extra, token{text: "is", low: "is", stem: "is"})
		case rest == "'s" || rest == "'":
			poss = true
		}
		w, low = w[:i], low[:i]
	}
	if low == "" {
		return out
	}
	t := token{text: w, low: low, start: start, poss: poss}
	classify(&t, speaker, lex)
	return append(append(out, t), extra...)
}

func isPronoun(w string) bool {
	switch w {
	case "it", "he", "she", "that", "there", "what", "who", "here", "this", "where", "let":
		return true
	}
	return false
}

// functionWords are the prepositions, conjunctions, determiners and
// auxiliaries lexical's stopword list leaves out.
var functionWords = termsOf(`since as because than so if whether though although unless whereas while until after before
	during within without upon onto toward towards via per despite among besides beside like unlike including
	one ones another other others many much several whose whom shall may might must can could would should will ll ve re`)

// firstPerson are the words a speaker uses of themself.
var firstPerson = termsOf(`i me my mine myself we us our ours ourselves`)

// classify sets a word's kind and stem.
func classify(t *token, speaker string, lex *lexicon.Lexicon) {
	low := t.low
	switch {
	case speaker != "" && firstPerson[low]:
		t.low, t.kind, t.noun = speaker, kName, true
		t.poss = t.poss || low == "my" || low == "our" || low == "mine" || low == "ours"
	case negations[low]:
		t.kind = kNeg
	case numberWords[low] != "":
		t.low, t.kind, t.noun = numberWords[low], kNumber, true
	case strings.ContainsFunc(low, unicode.IsDigit):
		t.kind, t.noun = kNumber, true
	case strings.ContainsAny(low, "/_.@") && !strings.HasPrefix(low, "e.g") && !strings.HasPrefix(low, "i.e"):
		t.kind, t.noun = kName, true // an identifier or a handle: "d/watch", "email.parseaddr", "@greatroar"
	case low == "may" && t.text == "May" && !t.start:
		t.kind, t.noun = kName, true // the month
	case lexical.Stopwords[low] || lightWords[low] || functionWords[low]:
		t.kind = kFn
	case isName(t.text, t.start, lex):
		t.kind, t.noun = kName, true
	default:
		t.kind = kContent
	}
	t.stem = t.low
	if (t.kind == kContent || t.kind == kName) && !strings.Contains(t.low, "-") {
		if s := lexical.Analyze([]string{t.low}); len(s) == 1 {
			t.stem = s[0]
		}
	}
}

// isName reports whether a word names something: capitalised after the
// start of a sentence, written in capitals ("CLI") or with an inner
// capital ("GitHub"), or capitalised at the start of a sentence when it is
// not a common lower-case word ("Priya" and "Caroline" are names,
// "Herons" is not).
func isName(w string, start bool, lex *lexicon.Lexicon) bool {
	r, n := utf8.DecodeRuneInString(w)
	if !unicode.IsUpper(r) {
		return false
	}
	rest := w[n:]
	if strings.ContainsFunc(rest, unicode.IsUpper) {
		return true // "CLI", "GitHub", "DisableForwarding"
	}
	if !start || lex == nil {
		return true
	}
	// At the start of a sentence: a word WordNet does not hold, or holds
	// but its concordance barely saw ("Caroline", "Maria").
	total := 0
	for _, l := range lex.Lemmas(strings.ToLower(w)) {
		for _, c := range lex.Counts(l) {
			total += c
		}
	}
	return total <= rareWord
}

// rareWord is the most a capitalised word at the start of a sentence may
// have been seen as a common word in WordNet's concordance (its tag
// counts, plus one per part of speech) and still be read as a name.
const rareWord = 3

// contextNames are the words the sources use as names: a speaker's or a
// label's ("James: ..."), and a capitalised word after the start of a
// sentence that is not a common word there ("Thanks, James!"). A
// sentence of a claim may open with one ("James plays Apex Legends"),
// where a word WordNet knows well ("James" as the plural of "jam", "Will",
// "Grace") would otherwise be read as a common word.
func contextNames(sources []Source, lex *lexicon.Lexicon) map[string]bool {
	names := map[string]bool{}
	for _, src := range sources {
		for _, line := range strings.Split(src.Text, "\n") {
			if words := lexical.Label(line); len(words) == 1 {
				names[words[0]] = true
			}
			for _, t := range tokenize(line, "", lex) {
				if t.kind == kName && !t.start && t.text != strings.ToUpper(t.text) && isCapitalised(t.text) {
					names[t.low] = true
				}
			}
		}
	}
	return names
}

// isCapitalised reports whether a word opens with a capital and goes on
// in lower case ("James", not "CLI" or "GitHub").
func isCapitalised(w string) bool {
	r, n := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r) && !strings.ContainsFunc(w[n:], unicode.IsUpper)
}

// promoteNames makes a word opening a sentence a name when the sources
// use it as one.
func promoteNames(toks []token, names map[string]bool) {
	for i, t := range toks {
		if t.start && t.kind == kContent && names[t.low] && isCapitalised(t.text) {
			toks[i].kind, toks[i].noun, toks[i].stem = kName, true, t.low
		}
	}
}
