package index

import (
	"slices"
	"strings"

	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/vector"
)

// codeTermPrefix starts every term of a code entity. Code entities' terms
// meet no memory's and a memory's query never reads them; they are
// counted in statistics of their own (codeDocs, codeTotal).
const codeTermPrefix = "\x01"

// CodeTerms analyses code or a question about code into code terms: its
// identifiers split into words (lexical.SplitIdent), then analysed as
// lexical.Terms does, each term marked as a code term.
func CodeTerms(text string) []string {
	return marked(codeTermPrefix, lexical.Terms(lexical.SplitIdent(text)))
}

// marked puts prefix before each of terms ts (in place).
func marked(prefix string, ts []string) []string {
	for i, t := range ts {
		ts[i] = prefix + t
	}
	return ts
}

// Code entities' fields: the words of a code entity's symbol and those of
// its declaration (its path and declaration line) are indexed again as
// terms of their own fields (a field prefix after the code prefix), so a
// query scores each field apart, as BM25 over separate fields does.
const (
	nameField = "n"
	sigField  = "s"
)

// codeDocTerms analyses a code entity's text (codeParts) into its code
// terms, then its name field's and its declaration field's, and gives
// its length: its code's terms (the fields are scored without length).
func codeDocTerms(text string) ([]string, int) {
	symbol, path, code := codeParts(text)
	ts := CodeTerms(code)
	n := len(ts)
	ts = append(ts, marked(codeTermPrefix+nameField, lexical.Terms(lexical.SplitIdent(symbol)))...)
	return append(ts, marked(codeTermPrefix+sigField, lexical.Terms(lexical.SplitIdent(path+" "+declaration(code))))...), n
}

// fieldTerms marks code terms ts (a query's) as terms of field (in place).
func fieldTerms(field string, ts []string) []string {
	for i, t := range ts {
		ts[i] = codeTermPrefix + field + t[len(codeTermPrefix):]
	}
	return ts
}

// declaration is an entity's declaration line: its first line that is
// not a comment, a decorator or blank, up to 300 bytes.
func declaration(code string) string {
	for line := range strings.Lines(code) {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '@' || t[0] == '#' || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || t[0] == '*' {
			continue
		}
		return t[:min(len(t), 300)]
	}
	return ""
}

// CodeQueryTerms analyses a query about code as lexical.QueryTerms does
// (no duplicates, stopwords kept when nothing else is left), into code
// terms.
func CodeQueryTerms(query string) []string {
	return marked(codeTermPrefix, lexical.QueryTerms(lexical.SplitIdent(query)))
}

// CodeFilter selects the live code entities of repository repo. Segments
// keep a repository's documents together, so it reads only their stretch.
func (v *View) CodeFilter(repo string) *Filter {
	f := v.Filter(memory.Scope{RepoID: repo})
	f.code = true
	return f
}

// CodeWeights weigh the BM25 scores of a code entity's fields: its
// symbol's words, its declaration's (path and declaration line), and its
// code's.
type CodeWeights struct {
	Name, Signature, Body float64
}

// CodeScores adds, for every live code entity f allows that holds a term
// of query, the weighted sum of its fields' BM25 scores to scores[doc]
// (each over the code entities' statistics; the short name and
// declaration fields are not normalised by length); touched lists the
// documents scored.
func (v *View) CodeScores(query string, w CodeWeights, f *Filter, scores []float32, touched []uint32) []uint32 {
	st := v.st
	terms := CodeQueryTerms(query)
	field := make([]float32, len(scores))
	for _, fl := range []struct {
		prefix string
		w, b   float64
	}{{"", w.Body, lexical.B}, {nameField, w.Name, 0}, {sigField, w.Signature, 0}} {
		if fl.w == 0 {
			continue
		}
		ts := terms
		if fl.prefix != "" {
			ts = fieldTerms(fl.prefix, slices.Clone(terms))
		}
		hit := v.bm25(ts, st.codeDocs, st.codeTotal, fl.b, f, f.Allow, field, nil)
		for _, d := range hit {
			if scores[d] == 0 {
				touched = append(touched, d)
			}
			scores[d] += float32(fl.w) * field[d]
			field[d] = 0
		}
	}
	return touched
}

// CodeNearest returns the k code entities f allows nearest to q.
func (v *View) CodeNearest(q []float32, k int, f *Filter) []vector.Hit {
	return v.Nearest(groupCode, q, k, f, nil)
}

// codeParts splits a code entity's text (its symbol, a space, its path, a
// space, the head of its code: sqlstore's code_entity kind) into those
// parts. Symbols hold no space; a path that does gives part of itself to
// the code, which only its words' fields tell.
func codeParts(text string) (symbol, path, code string) {
	symbol, rest, _ := strings.Cut(text, " ")
	path, code, _ = strings.Cut(rest, " ")
	return symbol, path, code
}

// embedCodeBytes is how much of an entity's code its vector reads.
const embedCodeBytes = 400

// EmbedText is the text a record of kind is embedded from, given its
// searchable text: the text itself, except for a code entity, whose
// symbol and the head of its code are embedded with their identifiers
// split into words (an embedder knows "read file", not "readFile").
func EmbedText(kind memory.VectorKind, text string) string {
	if !isCode(kind) {
		return text
	}
	symbol, _, code := codeParts(text)
	if len(code) > embedCodeBytes {
		code = code[:embedCodeBytes]
	}
	return lexical.SplitIdent(symbol) + " " + lexical.SplitIdent(code)
}
