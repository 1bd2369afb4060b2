package lexical

import (
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// Terms analyses text into index terms: NFKC normalisation, words of
// letters, digits and combining marks, lowercased, English stopwords
// dropped, each word stemmed with Porter2. Numbers are kept whole.
func Terms(text string) []string {
	return appendTerms(nil, text, false)
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
// very short words are kept as they are.
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] >= '0' && w[i] <= '9' {
			return w
		}
	}
	return english.Stem(w, true)
}

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
