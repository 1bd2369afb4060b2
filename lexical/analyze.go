package lexical

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// Terms analyses text into index terms: NFKC normalisation, words of
// letters, digits and combining marks, lowercased, English stopwords
// dropped, each word stemmed with Porter2. Numbers are kept whole. A text
// that opens with a label (Label) also gets a LabelTerm for each of the
// label's words.
func Terms(text string) []string {
	terms := appendTerms(nil, text, false)
	for _, w := range Label(text) {
		if !Stopwords[w] {
			terms = append(terms, LabelTerm(stem(w)))
		}
	}
	return terms
}

// labelPrefix starts the terms of a label's words; no word holds a colon,
// so they meet no other term.
const labelPrefix = "label:"

// LabelTerm is the index term that says a record's label holds the word
// whose term is t: a query term t finds the records labelled with it
// through LabelTerm(t).
func LabelTerm(t string) string { return labelPrefix + t }

// maxLabel bounds a label: at most two words in the first 40 bytes. Two,
// not three: "node parseConfig func: ..." would otherwise index an
// identifier as a label term per record (13 MiB more at 100,000
// generated records), and a speaker or a subject is one or two words.
const (
	maxLabelWords = 2
	maxLabelBytes = 40
)

// Label returns the lowercased words of the label text opens with, or
// nil: one or two words holding letters, then a colon and a space or
// the end ("Alice: I moved to Lisbon", "build step: failed"). Such a
// label names who speaks or what the record is about, as in chat
// transcripts and logs. "http://" or "10:30" are no labels: a label's
// colon is followed by a space, and its words hold a letter.
func Label(text string) []string {
	head := text[:min(len(text), maxLabelBytes+2)]
	i := strings.IndexByte(head, ':')
	if i <= 0 || i > maxLabelBytes || (i+1 < len(head) && head[i+1] != ' ') {
		return nil
	}
	ws := words(head[:i])
	if len(ws) == 0 || len(ws) > maxLabelWords || strings.ContainsAny(head[:i], ".,;!?()[]{}\"'/<>=") {
		return nil
	}
	for k, w := range ws {
		if !strings.ContainsFunc(w, unicode.IsLetter) {
			return nil
		}
		ws[k] = strings.ToLower(w)
	}
	return ws
}

// QueryTerms analyses a query like Terms, but without duplicates, and
// keeps stopwords when nothing else would be left.
func QueryTerms(text string) []string {
	terms := appendTerms(nil, text, true)
	if len(terms) == 0 {
		terms = appendTermsKeepStop(nil, text)
	}
	seen := map[string]bool{}
	out := terms[:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r)
}

func words(text string) []string {
	if !isASCII(text) {
		text = norm.NFKC.String(text)
	}
	return strings.FieldsFunc(text, func(r rune) bool { return !isWordRune(r) })
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func appendTerms(dst []string, text string, _ bool) []string {
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if Stopwords[w] {
			continue
		}
		dst = append(dst, stem(w))
	}
	return dst
}

func appendTermsKeepStop(dst []string, text string) []string {
	for _, w := range words(text) {
		dst = append(dst, stem(strings.ToLower(w)))
	}
	return dst
}

// stem reduces a lowercased word to its Porter2 stem; words with digits and
// very short words are kept as they are. Stems are remembered (up to
// stemCacheSize words): stemming is most of indexing's work, and a memory's
// words repeat.
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] >= '0' && w[i] <= '9' {
			return w
		}
	}
	if s, ok := stems.Load(w); ok {
		return s.(string)
	}
	s := english.Stem(w, true)
	if stemsHeld.Load() < stemCacheSize {
		// w (and a stem that is a slice of it) can be a slice of a whole
		// record's text: the cache keeps copies, so it holds words, not
		// the texts they came from.
		w = strings.Clone(w)
		if strings.HasPrefix(w, s) {
			s = w[:len(s)]
		} else {
			s = strings.Clone(s)
		}
		if _, loaded := stems.LoadOrStore(w, s); !loaded {
			stemsHeld.Add(1)
		}
	}
	return s
}

// stemCacheSize bounds the words whose stems are remembered.
const stemCacheSize = 200_000

var (
	stems     sync.Map
	stemsHeld atomic.Int64
)

// Stopwords are common English function words, dropped from documents and
// queries alike.
var Stopwords = setOf(`
a about above after again against all am an and any are aren as at
be because been before being below between both but by
can cannot could couldn
d did didn do does doesn doing don down during
each few for from further
had hadn has hasn have haven having he her here hers herself him himself his how
i if in into is isn it its itself
just ll m me more most mustn my myself
no nor not now o of off on once only or other our ours ourselves out over own
re s same shan she should shouldn so some such
t than that the their theirs them themselves then there these they this those through to too
under until up ve very
was wasn we were weren what when where which while who whom why will with won would wouldn
y you your yours yourself yourselves
`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// Analyze turns already-split query words into index terms: stopwords
// dropped (unless all are), the rest stemmed, duplicates removed.
func Analyze(words []string) []string {
	var terms []string
	seen := map[string]bool{}
	for _, w := range words {
		w = strings.ToLower(w)
		if Stopwords[w] && len(words) > 1 {
			continue
		}
		t := stem(w)
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	return terms
}

// Version names the analysis Terms and QueryTerms do. Indexes persisted
// with terms of another version are rebuilt, so any change to how a text
// becomes terms (normalisation, word splitting, stopwords, stemming,
// labels) must bump it.
const Version = 1

// SplitIdent breaks identifiers into words: "ValidateToken" reads
// "Validate Token", "max_file_bytes" reads "max file bytes", and a path's
// separators become spaces, so code is analysed as the words it names.
func SplitIdent(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 2)
	var prev rune
	for i, r := range s {
		switch {
		case r == '_' || r == '/' || r == '.' || r == '-':
			b.WriteByte(' ')
		case i > 0 && unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			b.WriteByte(' ')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}
