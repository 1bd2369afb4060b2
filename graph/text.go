package graph

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

var (
	bulletRE = regexp.MustCompile(`^\s*(?:#{1,6}|[-*+•]|\d+[.)]|>)\s+`)
	// A label opens a line: one to three words and a colon ("Sources:",
	// "Root cause:", "Note to self:"). Compiled on first use, as are the
	// other patterns with Unicode classes: each costs a few tenths of a
	// millisecond, which every cairn process (a hook's too) would pay at
	// start.
	mdLabelRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*[\p{L}][\p{L}\p{N}'’]*(?:\s+[\p{L}\p{N}'’]+){0,2}\s*:(?:\s|$)`)
	})
	linkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	urlRE  = regexp.MustCompile(`\b(?:https?|ftp)://\S+`)
)

// splitSentences splits text into sentences of tokens, line by line,
// after dropping markdown markers, labels, links' targets and URLs.
func splitSentences(text string) []sentence {
	var out []sentence
	for _, line := range strings.Split(text, "\n") {
		line = bulletRE.ReplaceAllString(line, "")
		if loc := mdLabelRE().FindStringIndex(line); loc != nil {
			line = line[loc[1]:]
		}
		line = linkRE.ReplaceAllString(line, "$1")
		line = urlRE.ReplaceAllString(line, " ")
		line = strings.NewReplacer("**", "", "__", "", "*", " ").Replace(line)
		toks := tokenize(line)
		start := 0
		for i, t := range toks {
			if !t.word && !t.code && (t.text == "." || t.text == "!" || t.text == "?" || t.text == ";") {
				if i > start {
					out = append(out, sentence{text: joinTokens(toks[start:i]), toks: toks[start:i]})
				}
				start = i + 1
			}
		}
		if start < len(toks) {
			out = append(out, sentence{text: joinTokens(toks[start:]), toks: toks[start:]})
		}
	}
	return out
}

func joinTokens(ts []token) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && (t.word || t.code) {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// tokenize cuts a line into words, code spans and punctuation. Inner
// '-', '_', '.', '/', '+' and '#' join a word when a letter or digit
// follows; a possessive "'s" is dropped.
func tokenize(line string) []token {
	var out []token
	rs := []rune(line)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '`':
			j := i + 1
			for j < len(rs) && rs[j] != '`' {
				j++
			}
			if j < len(rs) && j > i+1 {
				out = append(out, token{text: string(rs[i+1 : j]), code: true})
				i = j + 1
			} else {
				i++
			}
		case isWordRune(r):
			j := i + 1
			for j < len(rs) {
				if isWordRune(rs[j]) {
					j++
					continue
				}
				if strings.ContainsRune("-_./+#", rs[j]) && j+1 < len(rs) && isWordRune(rs[j+1]) {
					j += 2
					continue
				}
				break
			}
			w := string(rs[i:j])
			out = append(out, token{text: w, word: true})
			i = j
			if i+1 < len(rs) && (rs[i] == '\'' || rs[i] == '’') && (rs[i+1] == 's' || rs[i+1] == 't') {
				if rs[i+1] == 't' { // don't, doesn't: keep the negation
					out[len(out)-1].text += "'t"
				}
				i += 2
			}
		default:
			out = append(out, token{text: string(r)})
			i++
		}
	}
	return out
}

func isCapitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// hasInnerCapital reports an upper-case letter after the first character
// with a lower-case letter somewhere (PostgreSQL, gRPC, macOS; not NTP).
func hasInnerCapital(w string) bool {
	lower, inner := false, false
	for i, r := range w {
		if unicode.IsLower(r) {
			lower = true
		}
		if i > 0 && unicode.IsUpper(r) {
			inner = true
		}
	}
	return lower && inner
}

func isAcronym(w string) bool {
	letters := 0
	for _, r := range w {
		switch {
		case unicode.IsUpper(r):
			letters++
		case unicode.IsDigit(r):
		default:
			return false
		}
	}
	return letters >= 2 && len(w) <= 6
}

func isNumeric(w string) bool {
	digits := 0
	for _, r := range w {
		if unicode.IsDigit(r) {
			digits++
		} else if !strings.ContainsRune(".,-_/:xv%", r) {
			return false
		}
	}
	return digits > 0
}
