package code

import (
	"fmt"
	"sort"
	"strings"
)

// Symbol is one entity found in a source file.
type Symbol struct {
	// Name is "Func", "Type", "Type.Method" (the receiver type without
	// pointer or type parameters) or "Class.method"; nested classes and
	// Rust modules add their own segments ("Outer.Inner.method",
	// "module.func"). It always passes ParseKey's symbol rules.
	Name string
	// Kind is one of "function", "method", "type", "class", "interface",
	// "constant".
	Kind string
	// StartLine is the 1-based first line of the declaration, including its
	// leading doc comment (and decorators, annotations or attributes).
	StartLine int
	// EndLine is the 1-based last line, inclusive.
	EndLine int
	// Text is the exact source text of lines StartLine..EndLine: the bytes
	// from the start of StartLine to the end of EndLine, without EndLine's
	// newline (strings.Join(lines[StartLine-1:EndLine], "\n") where lines is
	// the source split at '\n').
	Text string
}

// Resolution is what Resolve found in one file.
type Resolution struct {
	// Language is "go", "python", "javascript", "typescript", "rust",
	// "java", "c", or "" when unknown (see LanguageOf).
	Language string
	// Method is "ast" when a parser read the file, "regex" when the
	// line-oriented fallback did.
	Method string
	// Symbols are sorted by StartLine, then Name, without duplicate names.
	// When a name repeats (Python or JavaScript redefinitions, several Go
	// init functions, Java overloads, C definitions under #ifdef
	// alternatives), the occurrence that starts last wins: it is the one
	// in effect for the languages that rebind names. C prototypes, TypeScript
	// overload signatures and other bodiless function declarations are not
	// entities at all.
	Symbols []Symbol
	// Warning says why Method is "regex". With Method "ast" it is empty,
	// unless the file has syntax errors that a partial syntax tree was
	// used despite: then it says where they are.
	Warning string
}

// Method values of a Resolution.
const (
	methodAST   = "ast"
	methodRegex = "regex"
)

// Symbol kinds.
const (
	kindFunction  = "function"
	kindMethod    = "method"
	kindType      = "type"
	kindClass     = "class"
	kindInterface = "interface"
	kindConstant  = "constant"
)

// Resolve parses src, the content of path, into entities. It never panics,
// whatever src holds (invalid UTF-8, binary data, huge lines, syntax
// errors), and it is deterministic: the same path and bytes always give a
// deep-equal Resolution.
//
// Go files are parsed with go/parser; Python, JavaScript, TypeScript (.ts
// and .tsx), Rust, Java and C with tree-sitter (package
// internal/treesitter, pure Go). A file that fails to parse and an unknown
// language fall back to line-oriented regular expressions (Method "regex",
// with a Warning saying why); for an unknown language the generic
// patterns apply and Language is "".
func Resolve(path string, src []byte) Resolution {
	return resolve(path, src, true)
}

// resolve is Resolve; without ast, every language goes to the regex
// fallback as if this build had no parser for it.
func resolve(path string, src []byte, ast bool) (res Resolution) {
	lang, dialect := languageAndDialect(path)
	res.Language = lang
	lines := newSrcLines(src)
	defer func() {
		// Belt and braces: a parser bug must not take the caller down.
		if r := recover(); r != nil {
			res = Resolution{Language: lang, Method: methodRegex,
				Warning: fmt.Sprintf("resolving %s failed (%v); no symbols", clipForError(path), r)}
		}
	}()

	var parse astParser
	if ast {
		parse = resolverFor(dialect)
	}
	if parse != nil {
		syms, warning, err := parseSafely(parse, src, lines)
		if err == nil {
			res.Method = methodAST
			res.Symbols = finishSymbols(syms, lines)
			if warning != "" {
				res.Warning = fmt.Sprintf("%s in %s, %s", warning, clipForError(path), partialTreeNote)
			}
			return res
		}
		res.Warning = fmt.Sprintf("AST parsing failed for %s: %s, using regex fallback", clipForError(path), firstLine(err.Error()))
	} else if lang != "" {
		res.Warning = fmt.Sprintf("no AST parser for %s in this build, using regex fallback", lang)
	} else {
		res.Warning = fmt.Sprintf("unknown language for %s, using generic regex patterns", clipForError(path))
	}
	res.Method = methodRegex
	res.Symbols = finishSymbols(rxResolve(lang, lines), lines)
	return res
}

// astParser reads a whole file into symbols whose Name, Kind, StartLine and
// EndLine are set; Resolve fills in Text. A warning, with symbols and no
// error, says where the syntax errors were that a partial tree was used
// despite ("syntax errors at lines 3 and 9").
type astParser func(lines *srcLines) (syms []Symbol, warning string, err error)

// partialTreeNote ends the Warning of a resolution from a partial tree.
const partialTreeNote = "which no entity's name or lines depend on: using the partial syntax tree"

// resolverFor returns the AST parser for a dialect, or nil when there is
// none: go/parser for Go, tree-sitter (astResolver) for the others.
func resolverFor(dialect string) astParser {
	if dialect == langGo {
		return func(lines *srcLines) ([]Symbol, string, error) {
			syms, err := goSymbols(lines)
			return syms, "", err
		}
	}
	if dialect == "" {
		return nil
	}
	return astResolver(dialect)
}

// parseSafely runs parse, turning a panic into an error so that Resolve
// falls back to the regex patterns.
func parseSafely(parse astParser, src []byte, lines *srcLines) (syms []Symbol, warning string, err error) {
	defer func() {
		if r := recover(); r != nil {
			syms, warning, err = nil, "", fmt.Errorf("parser panic: %v", r)
		}
	}()
	return parse(lines)
}

// finishSymbols clamps line ranges into the file, drops invalid names,
// keeps the last occurrence of each name, sorts by StartLine then Name, and
// fills in Text.
func finishSymbols(syms []Symbol, lines *srcLines) []Symbol {
	n := lines.count()
	last := make(map[string]int, len(syms))
	for i := range syms {
		s := &syms[i]
		s.StartLine = min(max(s.StartLine, 1), n)
		s.EndLine = min(max(s.EndLine, s.StartLine), n)
		if !validSymbol(s.Name) {
			continue
		}
		j, seen := last[s.Name]
		if !seen || s.StartLine > syms[j].StartLine ||
			s.StartLine == syms[j].StartLine && s.EndLine > syms[j].EndLine {
			last[s.Name] = i
		}
	}
	out := make([]Symbol, 0, len(last))
	for i, s := range syms {
		if j, ok := last[s.Name]; ok && j == i {
			s.Text = lines.text(s.StartLine, s.EndLine)
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].StartLine != out[b].StartLine {
			return out[a].StartLine < out[b].StartLine
		}
		return out[a].Name < out[b].Name
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

// srcLines indexes a source file by line. Lines are separated by '\n'; a
// file of n newlines has n+1 lines (the last possibly empty).
type srcLines struct {
	src    []byte
	starts []int // byte offset where each line starts
}

func newSrcLines(src []byte) *srcLines {
	starts := make([]int, 1, 1+len(src)/32)
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &srcLines{src: src, starts: starts}
}

// count is the number of lines.
func (l *srcLines) count() int { return len(l.starts) }

// line returns line i (1-based) without its newline.
func (l *srcLines) line(i int) []byte {
	if i < 1 || i > len(l.starts) {
		return nil
	}
	end := len(l.src)
	if i < len(l.starts) {
		end = l.starts[i] - 1
	}
	return l.src[l.starts[i-1]:end]
}

// text returns lines from..to (1-based, inclusive) joined by their
// newlines, without the last line's newline.
func (l *srcLines) text(from, to int) string {
	if from < 1 || to > len(l.starts) || from > to {
		return ""
	}
	end := len(l.src)
	if to < len(l.starts) {
		end = l.starts[to] - 1
	}
	return string(l.src[l.starts[from-1]:end])
}

// lineOf returns the 1-based line holding byte offset off (clamped into the
// file).
func (l *srcLines) lineOf(off int) int {
	// The last start <= off.
	i := sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > off })
	return max(i, 1)
}

// endLineOf returns the line of the last byte of a span ending (exclusive)
// at end and starting at start.
func (l *srcLines) endLineOf(start, end int) int {
	if end > start {
		end--
	}
	return l.lineOf(end)
}

// withLeadingComments moves start up over the comment lines directly above
// it (no blank line between), and over the decorator, annotation and
// attribute lines of the language (Python and TypeScript "@x", Java "@X",
// Rust "#[x]").
func (l *srcLines) withLeadingComments(lang string, start int) int {
	for start > 1 && leadingLine(lang, trimSpaceBytes(l.line(start-1))) {
		start--
	}
	return start
}

// leadingLine reports whether a trimmed line belongs to the declaration
// below it: a comment, decorator, annotation or attribute.
func leadingLine(lang string, t []byte) bool {
	if len(t) == 0 {
		return false
	}
	s := string(t[:min(len(t), 3)])
	switch lang {
	case langPython:
		return s[0] == '#' || s[0] == '@'
	case langRust:
		return commentLine(s) || strings.HasPrefix(s, "#[")
	case langJava, langJavaScript, langTypeScript:
		return commentLine(s) || s[0] == '@'
	default: // Go, C and the generic patterns
		return commentLine(s)
	}
}

// commentLine reports whether a trimmed line (its first bytes s) starts a
// "//" or "/*" comment or continues a block comment (" * text", " */",
// " **"); "*gen() {" (a JavaScript generator method) does not.
func commentLine(s string) bool {
	if strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/*") {
		return true
	}
	return s[0] == '*' && (len(s) == 1 || s[1] == ' ' || s[1] == '\t' || s[1] == '/' || s[1] == '*')
}

// trimSpaceBytes trims ASCII white space (and \r) from both ends.
func trimSpaceBytes(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isBlankByte(b[i]) {
		i++
	}
	for j > i && isBlankByte(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isBlankByte(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// firstLine returns the first line of s, clipped.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clipForError(s)
}
