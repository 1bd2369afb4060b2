package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// CodeCorpus is a source tree the code-search benchmark draws questions
// from: a language and a root.
type CodeCorpus struct {
	// Name is "go" or "python".
	Name string
	// Root is the tree: Go's $GOROOT/src or Python's /usr/lib/python3.11.
	Root string
}

// CodeQuestion is one question of the code-search benchmark: the first
// sentence of a function's doc comment (Go) or docstring (Python), the
// function it documents, and the half of the set it falls in.
type CodeQuestion struct {
	ID       string `json:"id"`
	Corpus   string `json:"corpus"`
	Question string `json:"question"`
	// Key is the answer's entity key in the stripped tree (path::Symbol).
	Key string `json:"key"`
	// Split is "tune" or "test", from a hash of the id, fixed before any
	// tuning.
	Split string `json:"split"`
}

// codeFile is one source file of a corpus: its path, the stripped text
// indexed in its place, and the questions it yields.
type codeFile struct {
	rel       string
	stripped  []byte
	questions []CodeQuestion
}

// hashOf is a 64-bit hash of s (the first bytes of its SHA-256).
func hashOf(s string) uint64 {
	h := sha256.Sum256([]byte(s))
	return binary.BigEndian.Uint64(h[:8])
}

// codeSplitOf is a code-search question's half: "tune" or "test", by a
// hash of its id (SHA-256), fixed before any tuning.
func codeSplitOf(id string) string {
	if hashOf("split:"+id)&1 == 0 {
		return "tune"
	}
	return "test"
}

// walkCorpus lists a corpus's source files in lexical order: .go files
// that are not tests (no _test.go, testdata, vendor, or Go's own cmd
// tree), or every .py file.
func walkCorpus(c CodeCorpus) ([]string, error) {
	var out []string
	err := filepath.WalkDir(c.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(c.Root, p)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if p != c.Root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") && c.Name == "go" ||
				name == "testdata" || name == "vendor" || name == "__pycache__" || c.Name == "go" && rel == "cmd") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch c.Name {
		case "go":
			if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
				out = append(out, rel)
			}
		case "python":
			if strings.HasSuffix(name, ".py") {
				out = append(out, rel)
			}
		}
		return nil
	})
	if err != nil {
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "reading the corpus %s: %v", c.Root, err)
	}
	sort.Strings(out)
	return out, nil
}

// loadCorpus reads every file of a corpus, strips its functions' doc
// comments and finds the questions they asked. Questions whose text
// occurs twice in the corpus are left out (their answer is ambiguous).
func loadCorpus(c CodeCorpus) ([]codeFile, error) {
	if c.Name != "go" && c.Name != "python" {
		return nil, memory.Errorf(memory.CodeInvalidParams, "corpus %q is not go or python", c.Name)
	}
	rels, err := walkCorpus(c)
	if err != nil {
		return nil, err
	}
	files := make([]codeFile, 0, len(rels))
	count := map[string]int{}
	for _, rel := range rels {
		src, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, memory.Wrap(memory.CodeInvalidParams, err, "reading %s: %v", rel, err)
		}
		var docs []funcDoc
		var stripped []byte
		if c.Name == "go" {
			stripped, docs = stripGo(src)
		} else {
			stripped, docs = stripPython(src)
		}
		f := codeFile{rel: rel, stripped: stripped}
		f.questions = questionsOf(c.Name, rel, stripped, docs)
		for _, q := range f.questions {
			count[normQuestion(q.Question)]++
		}
		files = append(files, f)
	}
	for i := range files {
		files[i].questions = slices.DeleteFunc(files[i].questions, func(q CodeQuestion) bool { return count[normQuestion(q.Question)] > 1 })
	}
	return files, nil
}

func normQuestion(q string) string { return strings.ToLower(strings.Join(strings.Fields(q), " ")) }

// funcDoc is a function whose doc comment was stripped: its name, the
// line of its definition in the stripped text, and its doc's text.
type funcDoc struct {
	name string
	line int
	doc  string
}

// questionsOf turns the stripped docs of a file into questions whose
// answer cairn resolves: the entity of the stripped file that holds the
// definition's line and is named after the function.
func questionsOf(corpus, rel string, stripped []byte, docs []funcDoc) []CodeQuestion {
	if len(docs) == 0 {
		return nil
	}
	syms := code.Resolve(rel, stripped).Symbols
	var out []CodeQuestion
	for _, d := range docs {
		q := firstSentence(d.doc, d.name)
		if q == "" {
			continue
		}
		best := -1
		for i, s := range syms {
			last := s.Name[strings.LastIndexByte(s.Name, '.')+1:]
			if last == d.name && s.StartLine <= d.line && d.line <= s.EndLine && (best < 0 || s.StartLine >= syms[best].StartLine) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		key := code.Key(rel, syms[best].Name)
		id := corpus + ":" + key
		out = append(out, CodeQuestion{ID: id, Corpus: corpus, Question: q, Key: key, Split: codeSplitOf(id)})
	}
	return out
}

// firstSentence is a doc comment's first sentence as a question: its
// first paragraph up to the first full stop followed by a space (or its
// end), whitespace collapsed, the function's own name dropped when the
// sentence opens with it (Go's convention: "ReadFile reads ..."). It is
// "" when fewer than three words remain, when the doc is a deprecation or
// a placeholder, or when more than 40 words remain.
func firstSentence(doc, name string) string {
	para := doc
	if i := strings.Index(para, "\n\n"); i >= 0 {
		para = para[:i]
	}
	para = strings.Join(strings.Fields(para), " ")
	for i := 0; i < len(para); i++ {
		if (para[i] == '.' || para[i] == '!' || para[i] == '?') && (i+1 == len(para) || para[i+1] == ' ') {
			if para[i] == '.' && i >= 3 && (para[i-3:i] == "e.g" || para[i-3:i] == "i.e") {
				continue
			}
			para = para[:i]
			break
		}
	}
	words := strings.Fields(para)
	if len(words) > 0 {
		first := strings.Trim(words[0], "`'\"*:,")
		if first == name || strings.HasSuffix(first, "."+name) || strings.TrimSuffix(first, "()") == name {
			words = words[1:]
		}
	}
	if len(words) < 3 || len(words) > 40 {
		return ""
	}
	q := strings.Join(words, " ")
	low := strings.ToLower(q)
	for _, bad := range []string{"deprecated", "todo", "xxx", "not implemented", "placeholder", "see ", "same as", "like ", "alias for", "is an alias"} {
		if strings.HasPrefix(low, bad) {
			return ""
		}
	}
	if !strings.ContainsFunc(q, unicode.IsLetter) {
		return ""
	}
	return q
}

// stripGo removes the doc comment of every function and method of a Go
// file and returns what is left, with the functions it stripped (their
// line in what is left). A file that does not parse is kept whole.
func stripGo(src []byte) ([]byte, []funcDoc) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return src, nil
	}
	tf := fset.File(f.Pos())
	type cut struct {
		from, to int
		doc      funcDoc
	}
	var cuts []cut
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Doc == nil {
			continue
		}
		from := tf.Offset(fd.Doc.Pos())
		to := tf.Offset(fd.Pos()) // up to the func keyword: the comment's lines, their newlines
		cuts = append(cuts, cut{from: lineStart(src, from), to: to, doc: funcDoc{name: fd.Name.Name, doc: fd.Doc.Text()}})
	}
	return applyCuts(src, len(cuts), func(i int) (int, int, funcDoc) { return cuts[i].from, cuts[i].to, cuts[i].doc }, "")
}

// applyCuts removes n byte ranges, ascending and disjoint, from src (a
// range's replacement is put in its place) and returns the result with
// each cut's doc placed at the line where its range ended.
func applyCuts(src []byte, n int, at func(i int) (from, to int, d funcDoc), repl string) ([]byte, []funcDoc) {
	out := make([]byte, 0, len(src))
	docs := make([]funcDoc, 0, n)
	prev := 0
	for i := range n {
		from, to, d := at(i)
		if from < prev {
			continue
		}
		out = append(out, src[prev:from]...)
		r := ""
		if repl != "" {
			r = strings.Repeat(" ", indentAt(src, from)) + repl
		}
		out = append(out, r...)
		d.line = strings.Count(string(out), "\n") + 1
		docs = append(docs, d)
		prev = to
	}
	out = append(out, src[prev:]...)
	return out, docs
}

func lineStart(src []byte, at int) int {
	for at > 0 && src[at-1] != '\n' {
		at--
	}
	return at
}

func indentAt(src []byte, at int) int {
	n := 0
	for at+n < len(src) && (src[at+n] == ' ' || src[at+n] == '\t') {
		n++
	}
	return n
}

// stripPython replaces the docstring of every function and method of a
// Python file (the string literal that opens its body) with "" and
// returns what is left, with the functions it stripped. The lines of
// the file do not move, apart from a docstring's own extra lines.
func stripPython(src []byte) ([]byte, []funcDoc) {
	type cut struct {
		from, to int
		doc      funcDoc
	}
	var cuts []cut
	for at := 0; at < len(src); {
		end := bytes.IndexByte(src[at:], '\n')
		line := src[at:]
		if end >= 0 {
			line = src[at : at+end]
		}
		if name, off, ok := pyDef(line); ok {
			if c, ok := pyDocstring(src, at+off); ok {
				c.doc.name = name
				cuts = append(cuts, cut{from: c.from, to: c.to, doc: c.doc})
				if c.to > at {
					at = c.to
					continue
				}
			}
		}
		if end < 0 {
			break
		}
		at += end + 1
	}
	return applyCuts(src, len(cuts), func(i int) (int, int, funcDoc) { return cuts[i].from, cuts[i].to, cuts[i].doc }, "\"\"")
}

// pyDef reports whether line opens a function definition ("def name(" or
// "async def name(", indented or not): its name and the offset of the
// parenthesis.
func pyDef(line []byte) (string, int, bool) {
	s := string(line)
	t := strings.TrimLeft(s, " \t")
	t = strings.TrimPrefix(t, "async ")
	if !strings.HasPrefix(t, "def ") {
		return "", 0, false
	}
	rest := strings.TrimLeft(t[4:], " ")
	n := 0
	for n < len(rest) && (rest[n] == '_' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z' || n > 0 && rest[n] >= '0' && rest[n] <= '9') {
		n++
	}
	if n == 0 || n == len(rest) || rest[n] != '(' {
		return "", 0, false
	}
	return rest[:n], len(s) - len(rest) + n, true
}

// pyCut is a docstring found after a def: the byte range of its literal
// and its text, trimmed line by line.
type pyCut struct {
	from, to int
	doc      funcDoc
}

// pyDocstring finds the docstring of the function whose parameter list
// opens at src[open]: the header is skipped up to its ':' at bracket depth
// 0 (strings and comments skipped), then white space, and a string literal
// (prefixes r, u, R, U; single or triple quotes) must follow.
func pyDocstring(src []byte, open int) (pyCut, bool) {
	depth := 0
	i := open
	for ; i < len(src); i++ {
		switch c := src[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case '"', '\'':
			_, end, ok := pyString(src, i)
			if !ok {
				return pyCut{}, false
			}
			i = end - 1
		case ':':
			if depth == 0 {
				goto body
			}
		}
	}
	return pyCut{}, false
body:
	i++
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r' || src[i] == '#') {
		if src[i] == '#' {
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		}
		i++
	}
	from := i
	if i < len(src) && (src[i] == 'r' || src[i] == 'R' || src[i] == 'u' || src[i] == 'U') {
		i++
	}
	if i >= len(src) || src[i] != '"' && src[i] != '\'' {
		return pyCut{}, false
	}
	body, end, ok := pyString(src, i)
	if !ok {
		return pyCut{}, false
	}
	lines := strings.Split(body, "\n")
	for j, l := range lines {
		lines[j] = strings.TrimSpace(l)
	}
	return pyCut{from: from, to: end, doc: funcDoc{doc: strings.Join(lines, "\n")}}, true
}

// pyString reads the string literal whose quote is at src[at]: its body
// and the offset after its closing quote. Backslashes escape; a
// single-quoted string ends at its line.
func pyString(src []byte, at int) (string, int, bool) {
	q := src[at]
	triple := at+2 < len(src) && src[at+1] == q && src[at+2] == q
	start := at + 1
	if triple {
		start = at + 3
	}
	for i := start; i < len(src); i++ {
		switch {
		case src[i] == '\\':
			i++
		case !triple && src[i] == '\n':
			return "", 0, false
		case src[i] == q && !triple:
			return string(src[start:i]), i + 1, true
		case src[i] == q && i+2 < len(src) && src[i+1] == q && src[i+2] == q:
			return string(src[start:i]), i + 3, true
		}
	}
	return "", 0, false
}
