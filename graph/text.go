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
	// A reference link: [text][label].
	refLinkRE = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	urlRE     = regexp.MustCompile(`\b(?:https?|ftp)://\S+`)
	// Emphasis with underscores around words ("__not__ this"); a Python
	// name such as __init__ is left alone.
	underEmphRE = regexp.MustCompile(`(^|[\s(])__([^_\s][^_]*?[\s][^_]*?[^_\s])__`)
)

// splitSentences splits text into sentences of tokens, line by line,
// after dropping markdown markers, labels, links' targets and URLs.
func splitSentences(text string) []sentence {
	var out []sentence
	for _, line := range strings.Split(text, "\n") {
		line = bulletRE.ReplaceAllString(line, "")
		if loc := mdLabelRE().FindStringIndex(line); loc != nil && !namesComponent(line[:loc[1]]) {
			line = line[loc[1]:]
		}
		line = linkRE.ReplaceAllString(line, "$1")
		line = refLinkRE.ReplaceAllString(line, "$1")
		line = urlRE.ReplaceAllString(line, " ")
		line = underEmphRE.ReplaceAllString(line, "$1$2")
		line = strings.NewReplacer("**", "", "*", " ").Replace(line)
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

// namesComponent reports a label that names what the line is about
// ("lintian: renamed tag", "zstd: fix ...", as change logs and commit
// messages write) rather than a markdown label ("Sources:", "Note:"): one
// word that is no English word.
func namesComponent(label string) bool {
	w := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(label), ":"))
	return w != "" && !strings.ContainsAny(w, " \t") && (!isKnownWord(w) || isUpperWord(w) && !genericAcronyms[strings.ToLower(w)] ||
		hasDigit(w) && unicode.IsLower([]rune(w)[0])) // s2, x11: letters and digits
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
// follows; a '/' opening a word after a space keeps it (an absolute path);
// a word right after a '-' or "--" that follows a space is a command-line
// flag; a possessive "'s" is dropped and marked.
func tokenize(line string) []token {
	var out []token
	rs := []rune(line)
	for i := 0; i < len(rs); {
		r := rs[i]
		start := len(out)
		spaced := i == 0 || unicode.IsSpace(rs[i-1])
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '`':
			j := i + 1
			for j < len(rs) && rs[j] != '`' {
				j++
			}
			if j < len(rs) && j > i+1 {
				if c := codeName(string(rs[i+1 : j])); c != "" {
					out = append(out, token{text: c, code: true})
				} else if c := commandName(string(rs[i+1 : j])); c != "" {
					out = append(out, token{text: c, code: true, cmd: true})
				}
				i = j + 1
			} else {
				i++
			}
		case isWordRune(r) || r == '/' && i+1 < len(rs) && isWordRune(rs[i+1]) && (i == 0 || unicode.IsSpace(rs[i-1])) ||
			r == '_' && opensIdentifier(rs, i) || r == '.' && opensDotName(rs, i):
			i = wordAt(rs, i, &out)
		default:
			out = append(out, token{text: string(r)})
			i++
		}
		if len(out) > start {
			out[start].spaced = spaced
			out[start].lower = strings.ToLower(out[start].text)
		}
	}
	return out
}

// opensDotName reports a '.' that opens a name after a space: a hidden
// file (.pydistutils.cfg), a relative path (./configure), a name such as
// .NET.
func opensDotName(rs []rune, i int) bool {
	if i > 0 && !unicode.IsSpace(rs[i-1]) && rs[i-1] != '(' && rs[i-1] != '"' && rs[i-1] != '\'' {
		return false
	}
	j := i + 1
	if j < len(rs) && rs[j] == '/' {
		j++
	}
	return j+1 < len(rs) && unicode.IsLetter(rs[j]) && (unicode.IsLetter(rs[j+1]) || rs[j+1] == '_')
}

// opensIdentifier reports underscores at rs[i] that open a name of code
// (_fields, __init__, _XOPEN_SOURCE): a letter or digit follows them and
// none comes before.
func opensIdentifier(rs []rune, i int) bool {
	if i > 0 && isWordRune(rs[i-1]) {
		return false
	}
	j := i
	for j < len(rs) && rs[j] == '_' {
		j++
	}
	return j < len(rs) && isWordRune(rs[j])
}

// wordAt reads the word starting at rs[i] into out and returns where it
// ends. Underscores go on a word (a run of them inside, __init__,
// execute_after_ at its end).
func wordAt(rs []rune, i int, out *[]token) int {
	j := i + 1
	for j < len(rs) {
		if isWordRune(rs[j]) {
			j++
			continue
		}
		if rs[j] == '_' {
			j++
			continue
		}
		if strings.ContainsRune("-./+#", rs[j]) && j+1 < len(rs) && (isWordRune(rs[j+1]) || rs[j+1] == '_') {
			j += 2
			continue
		}
		if rs[j] == '+' && j+1 < len(rs) && rs[j+1] == '+' && (j+2 == len(rs) || !isWordRune(rs[j+2])) {
			j += 2 // C++, libstdc++, g++
		}
		break
	}
	t := token{text: string(rs[i:j]), word: true}
	// A flag: "-h", "--disable-fft", after a space or at the start.
	if k := i - 1; k >= 0 && rs[k] == '-' {
		for k >= 0 && rs[k] == '-' {
			k--
		}
		t.flag = k < 0 || unicode.IsSpace(rs[k]) || rs[k] == '('
	}
	*out = append(*out, t)
	if j+1 < len(rs) && (rs[j] == '\'' || rs[j] == '’') && (rs[j+1] == 's' || rs[j+1] == 't') {
		if rs[j+1] == 't' { // don't, doesn't: keep the negation
			(*out)[len(*out)-1].text += "'t"
			(*out)[len(*out)-1].lower = strings.ToLower((*out)[len(*out)-1].text)
		} else {
			(*out)[len(*out)-1].poss = true
		}
		j += 2
	}
	return j
}

// codeName is the name a code span gives: the span, trimmed, without a
// leading * or & and without the call or type arguments that follow an
// identifier (f(x), T[K], g()); "" when it is not one name.
func codeName(c string) string {
	c = strings.TrimLeft(strings.TrimSpace(c), "*&$")
	if k := strings.IndexAny(c, "(["); k > 0 && (strings.HasSuffix(c, ")") || strings.HasSuffix(c, "]") || strings.Contains(c[k:], ") ")) {
		if head := c[:k]; !strings.ContainsAny(head, " \t") {
			c = head
		}
	}
	if strings.ContainsAny(c, " \t") {
		return "" // a snippet or a command line (commandName)
	}
	return c
}

// commandName is the program a code span with spaces runs: its first
// word, when the span reads as a command line (meson test, npm run
// build, cryptsetup reencrypt), of three letters or more; "" otherwise.
func commandName(c string) string {
	f := strings.Fields(c)
	if len(f) < 2 || len(f) > 8 || utf8.RuneCountInString(f[0]) < 3 || strings.ContainsAny(c, "<>{}[];=\"'$|\\") && !strings.Contains(c, "&&") {
		return ""
	}
	for _, r := range f[0] {
		if !(unicode.IsLower(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
			return ""
		}
	}
	return f[0]
}

func isCapitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// hasInnerCapital reports an upper-case letter inside a part of a word
// (parts are separated by - _ . / + #) with a lower-case letter
// somewhere: PostgreSQL, gRPC, macOS, libXrender; not NTP, not
// Rules-Requires-Root.
func hasInnerCapital(w string) bool {
	lower, inner := false, false
	prev := ' '
	for _, r := range w {
		if unicode.IsLower(r) {
			lower = true
		}
		if unicode.IsUpper(r) && (unicode.IsLetter(prev) || unicode.IsDigit(prev)) {
			inner = true
		}
		prev = r
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

// isNumeric reports a number, a version or a value of digits and
// separators: 42, 1.24, v2.3.1, 14:00, 12%, 1920x1080 (not x86).
func isNumeric(w string) bool {
	w = strings.TrimPrefix(strings.TrimPrefix(w, "v"), "V")
	digits := 0
	for i, r := range w {
		switch {
		case unicode.IsDigit(r):
			digits++
		case r == 'x' && i > 0:
		case !strings.ContainsRune(".,-_/:%", r):
			return false
		}
	}
	return digits > 0
}
