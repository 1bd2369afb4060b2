package retrieve

import (
	"strings"
	"unicode"

	"github.com/cairnhq/cairn/memory"
	"golang.org/x/text/unicode/norm"
)

// MaxQueryBytes bounds a query's length.
const MaxQueryBytes = 64 << 10

// MaxTerms bounds how many distinct words of a text query are searched; the
// rest are ignored (provenance lists the words used).
const MaxTerms = 64

// ParseQuery turns a caller's query into a full-text query. In SyntaxText
// (the default) the query is user text: it is split into words (letters and
// digits), lowercased, deduplicated, and stripped of common English
// stopwords unless nothing else is left; the words are OR'ed. Any string is
// safe. In SyntaxFTS the query is passed through as FTS5 syntax. Blank
// queries, and text queries without a single word, are invalid_params.
func ParseQuery(q string, syntax memory.Syntax) (memory.TextQuery, error) {
	if err := memory.ValidateText("query", q, MaxQueryBytes); err != nil {
		return memory.TextQuery{}, err
	}
	if strings.TrimSpace(q) == "" {
		return memory.TextQuery{}, memory.Errorf(memory.CodeInvalidParams, "query is empty")
	}
	switch syntax {
	case memory.SyntaxFTS:
		return memory.TextQuery{Syntax: memory.SyntaxFTS, Expr: q}, nil
	case memory.SyntaxText, "":
		terms := Terms(q)
		if len(terms) == 0 {
			return memory.TextQuery{}, memory.Errorf(memory.CodeInvalidParams, "query %q has no words to search for", q)
		}
		return memory.TextQuery{Syntax: memory.SyntaxText, Terms: terms}, nil
	}
	return memory.TextQuery{}, memory.Errorf(memory.CodeInvalidParams, "unknown query syntax %q (want text or fts)", syntax)
}

// Terms returns the search words of user text: after NFKC normalisation
// (so full-width and compatibility forms read as their plain letters), runs
// of letters, digits and combining marks, lowercased, in first-seen order, without duplicates and
// without stopwords (unless every word is one), at most MaxTerms.
func Terms(text string) []string {
	words := strings.FieldsFunc(norm.NFKC.String(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.M, r)
	})
	var all, content []string
	seen := map[string]bool{}
	for _, w := range words {
		w = strings.ToLower(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		all = append(all, w)
		if !stopwords[w] {
			content = append(content, w)
		}
	}
	if len(content) == 0 {
		content = all
	}
	if len(content) > MaxTerms {
		content = content[:MaxTerms]
	}
	return content
}
