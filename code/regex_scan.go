package code

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// rxEvent is a '{' or ';' outside strings and comments, as the regex
// fallback's brace matching sees it.
type rxEvent struct {
	line  int  // 1-based line of the byte
	brace bool // '{' (else ';')
	paren int  // depth of ( and [ when it was seen (never negative)
	close int  // for '{': the line of its matching '}', 0 when unmatched
}

// rxScan is one linear pass over a file that the regex fallback reads:
// where strings and comments are, the brace depth at each line, the '{'
// and ';' events with their matching lines, and each line's indentation.
// Every slice indexed by line has count()+2 entries so that 1-based
// indexes never go out of range.
type rxScan struct {
	lang        string // the language, for leading comments
	lines       *srcLines
	events      []rxEvent
	depth       []int  // brace depth at the start of each line
	parenStart  []int  // depth of ( and [ at the start of each line
	parenEnd    []int  // depth of ( and [ at the end of each line
	inside      []bool // the line starts inside a string or a block comment
	indent      []int  // indentation width (tabs to multiples of 8); -1 for blank lines
	commentOnly []bool // the line holds only a comment
	joined      []bool // the line before ends in a backslash outside strings and comments
}

// rxLexer says how a language writes comments and strings.
type rxLexer struct {
	lineComment  string // "//" or "#"
	blockComment bool   // /* ... */
	backtick     bool   // `...` may span lines (Go raw strings, JavaScript templates)
	tripleQuote  bool   // Python's ''' and """
	multiline    bool   // "..." may span lines (Rust)
	rustChars    bool   // ' starts a char literal only when one closes it ('a', '\n'), else a lifetime
	regexps      bool   // /.../ after an operator or a keyword is a regular expression (JavaScript)
}

func lexerFor(lang string) rxLexer {
	switch lang {
	case langPython:
		return rxLexer{lineComment: "#", tripleQuote: true}
	case langJavaScript, langTypeScript:
		return rxLexer{lineComment: "//", blockComment: true, backtick: true, regexps: true}
	case langGo:
		return rxLexer{lineComment: "//", blockComment: true, backtick: true}
	case langRust:
		return rxLexer{lineComment: "//", blockComment: true, multiline: true, rustChars: true}
	default: // Java, C and the generic patterns
		return rxLexer{lineComment: "//", blockComment: true}
	}
}

// scanSource runs the lexer once over the file: O(len(src)).
func scanSource(lang string, lines *srcLines) *rxScan {
	n := lines.count()
	sc := &rxScan{
		lines:       lines,
		depth:       make([]int, n+2),
		parenStart:  make([]int, n+2),
		parenEnd:    make([]int, n+2),
		inside:      make([]bool, n+2),
		indent:      make([]int, n+2),
		commentOnly: make([]bool, n+2),
		joined:      make([]bool, n+2),
	}
	s := &scanner{sc: sc, lx: lexerFor(lang), lang: lang, src: lines.src, line: 1}
	for i := 0; i < len(s.src); {
		switch {
		case s.src[i] == '\n':
			i = s.newline(i)
		case s.state == inLineComment:
			i++ // skip to the newline
		case s.state == inBlockComment:
			i = s.blockComment(i)
		case s.state == inString:
			i = s.stringByte(i)
		default:
			i = s.codeByte(i)
		}
	}
	s.endLine()
	for l := 1; l <= n; l++ {
		sc.indent[l] = indentWidth(lines.line(l))
	}
	return sc
}

// scanState is where scanSource is: in code, a comment or a string.
type scanState uint8

const (
	inCode scanState = iota
	inLineComment
	inBlockComment
	inString
)

// scanner is scanSource's state as it walks the source.
type scanner struct {
	sc        *rxScan
	lx        rxLexer
	lang      string
	src       []byte
	stack     []int // indexes into events of the open braces
	paren     int
	line      int
	state     scanState
	quote     string // the closing delimiter of the string we are in
	escapes   bool   // backslash escapes inside that string
	multiline bool   // the string may span lines
	hasCode   bool   // the current line has code outside comments
	continued bool   // a backslash escaped the newline inside a string
	prev      byte   // the last byte of code outside white space, strings and comments
	prevAt    int    // where prev is
	noRegexp  int    // a line where a '/' started no regular expression
}

// newline ends a line at src[i] and starts the next.
func (s *scanner) newline(i int) int {
	sc, src := s.sc, s.src
	if s.state == inCode && (hasAt(src, i-1, "\\") || hasAt(src, i-2, "\\\r")) {
		sc.joined[s.line+1] = true
	}
	if s.state == inLineComment {
		s.state = inCode
	}
	if s.state == inString && !s.multiline && !s.continued {
		s.state = inCode
	}
	s.continued = false
	s.endLine()
	s.line++
	s.hasCode = false
	sc.depth[s.line] = len(s.stack)
	sc.parenStart[s.line] = s.paren
	sc.inside[s.line] = s.state != inCode
	return i + 1
}

// endLine records what the current line ends with.
func (s *scanner) endLine() {
	s.sc.parenEnd[s.line] = s.paren
	s.sc.commentOnly[s.line] = !s.hasCode && !s.sc.inside[s.line]
}

// blockComment scans src[i] in a block comment; it returns where to go on.
func (s *scanner) blockComment(i int) int {
	if s.src[i] == '*' && i+1 < len(s.src) && s.src[i+1] == '/' {
		s.state = inCode
		return i + 2
	}
	return i + 1
}

// stringByte scans src[i] in a string; it returns where to go on.
func (s *scanner) stringByte(i int) int {
	src := s.src
	if s.escapes && src[i] == '\\' {
		// A backslash before the newline continues even a one-line
		// string on the next line (C, Python, JavaScript).
		if i+1 < len(src) && src[i+1] == '\n' {
			s.continued = true
			return i + 1 // let the newline be counted
		}
		if i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n' {
			s.continued = true
			return i + 2
		}
		return i + 2
	}
	if hasAt(src, i, s.quote) {
		s.state = inCode
		return i + len(s.quote)
	}
	return i + 1
}

// codeByte scans src[i] in code; it returns where to go on.
func (s *scanner) codeByte(i int) int {
	src, c := s.src, s.src[i]
	if hasAt(src, i, s.lx.lineComment) {
		s.state = inLineComment
		return i + len(s.lx.lineComment)
	}
	if s.lx.blockComment && c == '/' && i+1 < len(src) && src[i+1] == '*' {
		s.state = inBlockComment
		return i + 2
	}
	if !isBlankByte(c) {
		s.hasCode = true
		if c == '/' && s.lx.regexps && s.noRegexp != s.line && regexpCanStart(src, s.prev, s.prevAt) {
			if j := regexpEnd(src, i); j > 0 {
				s.prev, s.prevAt = '/', j-1
				return j
			}
			// No regular expression closes on this line: a division.
			// Look no further on this line, so that the scan stays
			// linear.
			s.noRegexp = s.line
		}
		s.prev, s.prevAt = c, i
	}
	switch c {
	case '"', '\'':
		return s.quoteAt(i)
	case '`':
		if s.lx.backtick {
			s.startString("`", s.lang != langGo, true)
		}
	case '(', '[':
		s.paren++
	case ')', ']':
		if s.paren > 0 {
			s.paren--
		}
	case '{':
		s.stack = append(s.stack, len(s.sc.events))
		s.sc.events = append(s.sc.events, rxEvent{line: s.line, brace: true, paren: s.paren})
	case '}':
		if k := len(s.stack); k > 0 {
			s.sc.events[s.stack[k-1]].close = s.line
			s.stack = s.stack[:k-1]
		}
	case ';':
		s.sc.events = append(s.sc.events, rxEvent{line: s.line, paren: s.paren})
	}
	return i + 1
}

// quoteAt scans a quote in code at src[i]: a string starts (triple
// quoted in Python), or in Rust a char literal is skipped (or a lifetime
// or a label passed).
func (s *scanner) quoteAt(i int) int {
	src, c := s.src, s.src[i]
	if s.lx.tripleQuote && i+2 < len(src) && src[i+1] == c && src[i+2] == c {
		s.startString(string([]byte{c, c, c}), true, true)
		return i + 3
	}
	if c == '\'' && s.lx.rustChars {
		if w := rustCharLen(src, i); w > 0 {
			return i + w
		}
		return i + 1 // a lifetime or a label
	}
	s.startString(string(c), true, s.lx.multiline)
	return i + 1
}

func (s *scanner) startString(quote string, escapes, multiline bool) {
	s.state, s.quote, s.escapes, s.multiline = inString, quote, escapes, multiline
}

// regexpCanStart reports whether a '/' after the code byte prev (at
// prevAt; 0 at the start of the file) starts a JavaScript regular
// expression rather than a division: after an operator, an opening
// bracket, a separator, or a keyword such as return.
func regexpCanStart(src []byte, prev byte, prevAt int) bool {
	if prev == 0 || strings.IndexByte("(,=:[!&|?{};+-*%<>~^", prev) >= 0 {
		return true
	}
	if !isWordByte(prev) {
		return false
	}
	start := prevAt
	for start > 0 && isWordByte(src[start-1]) {
		start--
	}
	switch string(src[start : prevAt+1]) {
	case "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
		"yield", "await", "instanceof":
		return true
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// regexpEnd returns the index just past the regular expression literal
// starting with the '/' at src[i] (flags are left to the caller, as code),
// or 0 when none closes on this line.
func regexpEnd(src []byte, i int) int {
	class := false
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\n', '\r':
			return 0
		case '\\':
			if j+1 < len(src) && (src[j+1] == '\n' || src[j+1] == '\r') {
				return 0
			}
			j++
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				return j + 1
			}
		}
	}
	return 0
}

// hasAt reports whether src holds s at i.
func hasAt(src []byte, i int, s string) bool {
	return s != "" && i >= 0 && i+len(s) <= len(src) && string(src[i:i+len(s)]) == s
}

// rustCharLen returns the length of the Rust char literal at src[i] ('a',
// '\n', '\u{1F600}', 'é'), or 0 when the quote starts a lifetime.
func rustCharLen(src []byte, i int) int {
	if i+1 >= len(src) {
		return 0
	}
	if src[i+1] == '\\' {
		for j := i + 2; j < len(src) && j < i+16; j++ {
			if src[j] == '\'' && j > i+2 {
				return j - i + 1
			}
			if src[j] == '\n' {
				return 0
			}
		}
		return 0
	}
	_, w := utf8.DecodeRune(src[i+1:])
	if i+1+w < len(src) && src[i+1+w] == '\'' && src[i+1] != '\'' && src[i+1] != '\n' {
		return w + 2
	}
	return 0
}

// indentWidth is the width of a line's leading white space, tabs rounded
// up to multiples of 8, or -1 for a blank line.
func indentWidth(b []byte) int {
	w := 0
	for _, c := range b {
		switch c {
		case ' ':
			w++
		case '\t':
			w = w/8*8 + 8
		case '\r', '\f', '\v':
		default:
			return w
		}
	}
	return -1
}

// blockEnd finds where the declaration starting on line l ends, in a
// language with braces. Its header runs from l through the lines that
// continue it (open parentheses, a trailing ',', '(', '=', '->' and such,
// or a next line starting with '{', "where", "throws", "extends",
// "implements"), at most rxMaxHeader lines. The first '{' or ';' in the
// header at the header's own parenthesis depth decides: a '{' ends the
// declaration at its matching '}' (or at the '{' line when unmatched), a
// ';' ends it there. body reports a '{'. Without either, the first '{'
// inside parentheses decides (a header that never closes its parenthesis,
// "func broken( {"); without that, the declaration is its first line.
func (sc *rxScan) blockEnd(l int) (end int, body bool) {
	n := sc.lines.count()
	if l < 1 || l > n {
		return max(1, min(l, n)), false
	}
	base := sc.parenStart[l]
	last := l
	for h := l; h <= n && h < l+rxMaxHeader; h++ {
		last = h
		if !sc.continues(h, base) {
			break
		}
	}
	i := sort.Search(len(sc.events), func(i int) bool { return sc.events[i].line >= l })
	fallback := -1 // the first '{' inside parentheses, for headers that never close theirs
	for ; i < len(sc.events) && sc.events[i].line <= last; i++ {
		ev := sc.events[i]
		if ev.paren != base {
			if ev.brace && fallback < 0 {
				fallback = i
			}
			continue
		}
		return ev.ends()
	}
	if fallback >= 0 {
		return sc.events[fallback].ends()
	}
	return l, false
}

// ends is where a declaration decided by this event ends.
func (ev rxEvent) ends() (end int, body bool) {
	if !ev.brace {
		return ev.line, false
	}
	if ev.close >= ev.line {
		return ev.close, true
	}
	return ev.line, true
}

// rxMaxHeader bounds how many lines a declaration's header may span.
const rxMaxHeader = 20

// continues reports whether the header on line h goes on to line h+1.
func (sc *rxScan) continues(h, base int) bool {
	if h+1 > sc.lines.count() {
		return false
	}
	if sc.parenEnd[h] > base {
		return true
	}
	// A '{' or ';' on this line at the header's depth ends the header.
	i := sort.Search(len(sc.events), func(i int) bool { return sc.events[i].line >= h })
	for ; i < len(sc.events) && sc.events[i].line == h; i++ {
		if sc.events[i].paren == base {
			return false
		}
	}
	t := trimSpaceBytes(sc.lines.line(h))
	if k := len(t); k > 0 {
		switch t[k-1] {
		case ',', '(', '=', '<', ':', '|', '&', '+', '-', '>', '.':
			return true
		}
	}
	next := trimSpaceBytes(sc.lines.line(h + 1))
	for _, p := range [...]string{"{", "where", "throws", "extends", "implements", ":", ".", "->"} {
		if hasAt(next, 0, p) {
			return true
		}
	}
	return false
}

// indentEnds returns, for every line, where an indentation block opened
// on it ends: the last line with content before the next line that is
// neither blank, nor only a comment, nor inside a string or open brackets,
// and is indented no deeper. Computed for all lines at once in O(lines).
// With braces set, lines inside braces are continuations too (Python's
// dict and set literals).
func (sc *rxScan) indentEnds(braces bool) []int {
	n := sc.lines.count()
	significant := func(l int) bool {
		return sc.indent[l] >= 0 && !sc.commentOnly[l] && !sc.inside[l] && !sc.joined[l] && sc.parenStart[l] == 0 &&
			(!braces || sc.depth[l] == 0)
	}
	// lastContent[l]: the last line <= l holding code (continuations count).
	lastContent := make([]int, n+2)
	for l := 1; l <= n; l++ {
		lastContent[l] = lastContent[l-1]
		if sc.indent[l] >= 0 && !sc.commentOnly[l] {
			lastContent[l] = l
		}
	}
	ends := make([]int, n+2)
	var stack []int // significant lines after l, indentation strictly rising from the top
	for l := n; l >= 1; l-- {
		if !significant(l) {
			continue
		}
		for len(stack) > 0 && sc.indent[stack[len(stack)-1]] > sc.indent[l] {
			stack = stack[:len(stack)-1]
		}
		next := n + 1
		if len(stack) > 0 {
			next = stack[len(stack)-1]
		}
		ends[l] = max(l, lastContent[next-1])
		stack = append(stack, l)
	}
	for l := 1; l <= n; l++ {
		if ends[l] == 0 {
			ends[l] = l
		}
	}
	return ends
}
