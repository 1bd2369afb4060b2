package synth

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/cairnhq/cairn/lexical"
	"golang.org/x/text/unicode/norm"
)

// The text side of grounding: normalising spans, splitting an answer into
// claims, and the words a claim stands on.

// normalizeText is text as spans are compared: NFKC, lowercase, curly
// quotes and dashes made plain, every run of whitespace one space.
func normalizeText(s string) string {
	s = norm.NFKC.String(s)
	s = strings.Map(func(r rune) rune {
		switch r {
		case '‘', '’', '‚', '′':
			return '\''
		case '“', '”', '„', '″':
			return '"'
		case '‐', '‑', '‒', '–', '—', '―':
			return '-'
		}
		return unicode.ToLower(r)
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// ellipsisRE splits a span where the model left words out.
var ellipsisRE = regexp.MustCompile(`\s*(?:\.\.\.|…|\[\.\.\.\])\s*`)

// spanOccurs reports whether span occurs in text, compared normalised; a
// span with an ellipsis occurs when its parts do, in order. Quotes and
// end punctuation around the span are not part of it.
func spanOccurs(span, text string) bool {
	t := normalizeText(text)
	at := 0
	found := false
	for _, part := range ellipsisRE.Split(span, -1) {
		p := strings.Trim(normalizeText(part), ` "'.,;:!?`)
		if p == "" {
			continue
		}
		i := strings.Index(t[at:], p)
		if i < 0 {
			return false
		}
		at += i + len(p)
		found = true
	}
	return found
}

// abbreviations end with a full stop that does not end a sentence. Titles
// count only capitalised ("Ms." but not "95 ms.").
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "vs": true, "approx": true, "cf": true, "fig": true, "al": true, "incl": true,
	"Mr": true, "Mrs": true, "Ms": true, "Dr": true, "Prof": true, "St": true, "No": true, "Nr": true, "Jr": true,
	"Sr": true, "Inc": true, "Ltd": true, "Co": true, "Corp": true, "Dept": true, "Fig": true, "Vs": true,
}

// splitSentences splits text into sentences: at line breaks (a list's
// items are sentences; their bullets are dropped), after ., ! or ?
// followed by a space and a letter (a product's name may start one in
// lower case: "curl could leak ..."), a digit, a quote or a bracket, or by
// the end, and after a colon followed by a space and such a character
// ("According to the notes: Alice moved" is a lead-in and a claim). A full stop inside a number, after an abbreviation or after a
// single capital (an initial) does not end a sentence.
func splitSentences(text string) []string { return sentencesOf(text, true) }

// sourceSentences splits a source's text like splitSentences, but not at
// colons: in a source, "some big news: I'm on a diet" is one sentence.
func sourceSentences(text string) []string { return sentencesOf(text, false) }

func sentencesOf(text string, colons bool) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = bulletRE.ReplaceAllString(strings.TrimSpace(line), "")
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c != '.' && c != '!' && c != '?' && (c != ':' || !colons) {
				continue
			}
			j := i + 1
			for j < len(line) && strings.IndexByte(`.!?"')]`, line[j]) >= 0 {
				j++
			}
			if c == ':' && j == len(line) {
				continue
			}
			if j < len(line) {
				if line[j] != ' ' {
					continue
				}
				r, _ := utf8.DecodeRuneInString(strings.TrimLeft(line[j:], " "))
				lower := unicode.IsLower(r) && c != ':' && !strings.HasSuffix(line[start:i], "etc")
				if !lower && !unicode.IsUpper(r) && !unicode.IsDigit(r) && !strings.ContainsRune(`"'([“‘@-<>*#$~`+"`", r) {
					continue
				}
			}
			if c == '.' && !endsSentence(line[start:i]) {
				continue
			}
			if s := strings.TrimSpace(line[start:j]); s != "" {
				out = append(out, s)
			}
			// Skip the run of closing punctuation taken with the stop
			// ("... -> FAIL"): its marks end no further sentence.
			start, i = j, j-1
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// bulletRE is a list item's marker.
var bulletRE = regexp.MustCompile(`^(?:[-*•+]|\d{1,2}[.)])\s+`)

// endsSentence reports whether a full stop after before ends a sentence:
// not after an abbreviation or a single capital letter.
func endsSentence(before string) bool {
	k := strings.LastIndexAny(before, " (\"'")
	word := before[k+1:]
	if abbreviations[word] || abbreviations[strings.ToLower(word)] && word == strings.ToLower(word) {
		return false
	}
	if r, n := utf8.DecodeRuneInString(before[k+1:]); n > 0 && n == len(before[k+1:]) && unicode.IsUpper(r) {
		return false
	}
	return true
}

// markerRE is an inline citation marker: "[t-101]", "[1]", "(source:
// t-101)", "【t-101】". Compiled on first use: it costs a few tenths of
// a millisecond, which every process would otherwise pay at start.
var markerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\s*(?:\[[^\[\]\n]{1,80}\]|【[^【】\n]{1,80}】|\((?:source|sources|src|see)[: ][^()\n]{1,80}\))`)
})

// stripMarkers removes inline citation markers from a sentence.
func stripMarkers(s string) string { return strings.TrimSpace(markerRE().ReplaceAllString(s, "")) }

// terms are a text's content terms (cairn's lexical analysis: stemmed,
// stopwords out), without label terms, deduplicated.
func terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range lexical.Terms(text) {
		if strings.HasPrefix(t, "label:") || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}
