package capture

import (
	"strings"
)

// proseWords name a credential in running text; "key" does only after
// one of keyModifiers (an API key, the shared key).
var proseWords = []string{"password", "passwd", "passphrase", "secret", "token", "pwd", "pat", "key"}

var keyModifiers = []string{"api", "access", "secret", "signing", "shared", "private", "master", "license", "encryption",
	"auth", "sdk", "app", "client", "deploy", "admin", "service", "account", "storage", "webhook", "root"}

// proseConnectors stand between a credential's name and its value.
var proseConnectors = []string{"is", "was", "are", "be", "=", ":", ":=", "to", "is:"}

// proseFillers may stand after a connector, before the value: "was reset
// to", "is now".
var proseFillers = []string{"now", "set", "reset", "changed", "updated", "rotated", "still", "to", "just"}

// prose finds credentials named in running text: "my password is …",
// "the signing secret for the webhook is …", "new access token …",
// "API key: …", "machine x login y password …". The value must look
// like a credential (credentialLike), not a word.
func prose(text, lower string, fs *findings) {
	for _, w := range proseWords {
		for from := 0; ; {
			i := strings.Index(lower[from:], w)
			if i < 0 {
				break
			}
			i += from
			from = i + len(w)
			end := i + len(w)
			if i > 0 && isWordByte(text[i-1]) || end < len(text) && isWordByte(text[end]) {
				continue
			}
			if w == "key" && !isOneOf(previousWord(lower, i), keyModifiers) {
				continue
			}
			if a, b, ok := proseValue(text, end); ok {
				fs.add("prose-secret", a, b)
			}
		}
	}
}

// previousWord is the word before lower[i] on its line.
func previousWord(lower string, i int) string {
	j := i
	for j > 0 && lower[j-1] == ' ' {
		j--
	}
	k := j
	for k > 0 && isWordByte(lower[k-1]) {
		k--
	}
	return lower[k:j]
}

// proseValue finds the credential after a credential's name ending at
// text[p]: right after it ("token X", "password: X", "token=X"), or
// after up to four words and a connector ("secret for the webhook is
// X", "password was reset to X").
func proseValue(text string, p int) (int, int, bool) {
	if p < len(text) && (text[p] == '=' || text[p] == ':') {
		if p+1 < len(text) && text[p+1] != ' ' && text[p+1] != '\t' {
			a, b := proseWord(text, p+1)
			return a, b, a < b && credentialLike(text[a:b])
		}
		p++
		return proseAfterConnector(text, p, 0)
	}
	if p >= len(text) || text[p] != ' ' && text[p] != '\t' {
		return 0, 0, false
	}
	for k := 0; k < 5; k++ {
		a, b := proseWord(text, p)
		if a >= b {
			return 0, 0, false
		}
		w := strings.ToLower(text[a:b])
		if isOneOf(w, proseConnectors) || strings.HasSuffix(w, ":") && !strings.Contains(w[:len(w)-1], ":") {
			return proseAfterConnector(text, b, k+1)
		}
		// Right after the name, with no "is" or ":" between, only what
		// looks generated: "the webhook secret zqsummarysecret7" may be a
		// name.
		if k == 0 && credentialLike(text[a:b]) && generatedWord(text[a:b]) {
			return a, b, true
		}
		if strings.ContainsAny(text[b-1:b], ",.;!?") || strings.ContainsAny(text[a:b], "=(){}[]\"") {
			return 0, 0, false
		}
		p = b
	}
	return 0, 0, false
}

// proseAfterConnector takes the value after a connector, past fillers.
func proseAfterConnector(text string, p, k int) (int, int, bool) {
	for ; k < 7; k++ {
		a, b := proseWord(text, p)
		if a >= b {
			return 0, 0, false
		}
		if isOneOf(strings.ToLower(text[a:b]), proseFillers) {
			p = b
			continue
		}
		return a, b, credentialLike(text[a:b])
	}
	return 0, 0, false
}

// proseWord is the next word on the line from text[p], without the
// punctuation around it; a quoted phrase is one word.
func proseWord(text string, p int) (int, int) {
	for p < len(text) && (text[p] == ' ' || text[p] == '\t') {
		p++
	}
	if p >= len(text) || text[p] == '\n' || text[p] == '\r' {
		return p, p
	}
	if q := text[p]; q == '"' || q == '\'' || q == '`' {
		if i := strings.IndexByte(text[p+1:], q); i > 0 && !strings.Contains(text[p+1:p+1+i], "\n") {
			return p + 1, p + 1 + i
		}
	}
	e := p
	for e < len(text) && text[e] != ' ' && text[e] != '\t' && text[e] != '\n' && text[e] != '\r' {
		e++
	}
	a, b := p, e
	// Brackets and quotes around the word, not in it: a password may
	// hold a parenthesis.
	for a < b && strings.IndexByte("(\"'`<[", text[a]) >= 0 && !strings.ContainsRune(text[a+1:b], rune(closing(text[a]))) {
		a++
	}
	for b > a && (strings.IndexByte(",;\"'`", text[b-1]) >= 0 || strings.IndexByte(")>]", text[b-1]) >= 0 && !strings.ContainsRune(text[a:b-1], rune(opening(text[b-1])))) {
		b--
	}
	if b > a && text[b-1] == '.' {
		b--
	}
	return a, b
}

func closing(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '<':
		return '>'
	case '[':
		return ']'
	}
	return c
}

func opening(c byte) byte {
	switch c {
	case ')':
		return '('
	case '>':
		return '<'
	case ']':
		return '['
	}
	return c
}

func isOneOf(w string, list []string) bool {
	for _, l := range list {
		if w == l {
			return true
		}
	}
	return false
}

// credentialLike says a word of prose is a credential: eight characters
// or more, letters with digits or symbols, and none of the things prose
// names that look like that (versions, dates, numbers, URLs, paths,
// host names, e-mail addresses, code, placeholders).
func credentialLike(v string) bool {
	if len(v) < 8 || isPlaceholder(v) || commonValue(v) || isNumber(v) || isURL(v) || pathLike(v) ||
		strings.HasPrefix(v, "-") || memberAccess(v) || codeCall(v) || hostName(v) || isVersion(v) || snakeCase(v) {
		return false
	}
	if at := strings.IndexByte(v, '@'); at > 0 && strings.Contains(v[at:], ".") && !strings.ContainsAny(v, "!#$%^&*") {
		return false // an e-mail address
	}
	var k uint16
	symbols := 0
	for i := 0; i < len(v); i++ {
		c := byteClass[v[i]]
		k |= c
		if c == 0 && v[i] < 0x80 {
			symbols++
		}
	}
	letters := k&(cUpper|cLower) != 0
	return letters && (k&cDigit != 0 || symbols > 0 && len(v) >= 10 && k&cUpper != 0)
}

// generatedWord says v looks generated rather than written: two digits
// or more, both cases, or a symbol.
func generatedWord(v string) bool {
	digits, symbols := 0, 0
	var k uint16
	for i := 0; i < len(v); i++ {
		c := byteClass[v[i]]
		k |= c
		switch {
		case c == cDigit:
			digits++
		case c == 0 || c&(cDollar|cPercent|cTilde|cPlus|cEq|cColon) != 0:
			symbols++
		}
	}
	return digits >= 2 || k&cUpper != 0 && k&cLower != 0 || symbols > 0
}

// hostName says v is a lowercase dotted name: db.internal, api.acme.io.
func hostName(v string) bool {
	if !strings.Contains(v, ".") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// isVersion says v is a version or a date: v1.2.3, 2.1.331, 2026-11-02.
func isVersion(v string) bool {
	v = strings.TrimPrefix(v, "v")
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == ':' || c == 'T' || c == 'Z') {
			return false
		}
	}
	return strings.ContainsAny(v, ".-:")
}

// snakeCase says v is a snake_case name, maybe with digits: user_4812.
func snakeCase(v string) bool {
	if !strings.Contains(v, "_") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
