package code

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairnhq/cairn/embed/glove"
	"github.com/cairnhq/cairn/lexical"
)

// mention is a query word taken for a symbol's name, and how many of the
// entities so named become anchors (the most relevant first).
type mention struct {
	tok   string
	limit int
}

// How many entities one mention anchors: a word that is surely code
// (backticks, a call, an underscore, a dot, camelCase), a capitalised
// word inside a sentence or a one-word query, and a plain word that is
// rare both in English and among the repository's names.
const (
	codeMentionLimit  = 20
	capsMentionLimit  = 5
	plainMentionLimit = 3
	// A plain word is a mention only when it names at most this many
	// entities and is not among English's commonest words.
	plainMentionMaxHits = 3
	commonWordRank      = 20000
)

// queryMentions splits a query into the files it names (a known source
// extension, or a '/') and the symbols it mentions. A word is a symbol
// mention when it looks like code, or when it is a capitalised word
// inside a sentence (Go's exported names, classes), or when it is rare:
// not among GloVe's commonest English words and the name of at most
// plainMentionMaxHits entities. Common words ("handle", "copy") that
// happen to be names are left to ranking, where the name field weighs
// them.
func queryMentions(query string, x *catalog) (files []string, syms []mention) {
	raw := strings.Fields(query)
	eachQueryToken(query, func(tok string, strong, initial bool) {
		switch {
		case LanguageOf(tok) != "" || strings.Contains(tok, "/"):
			files = append(files, tok)
		case len(tok) < 3 || lexical.Stopwords[strings.ToLower(tok)] && tok == strings.ToLower(tok):
		case len(x.bySymbol[tok]) == 0:
		case strong || looksLikeCode(tok):
			syms = append(syms, mention{tok, codeMentionLimit})
		case capitalised(tok) && (!initial || len(raw) == 1):
			syms = append(syms, mention{tok, capsMentionLimit})
		case len(x.bySymbol[tok]) <= plainMentionMaxHits && !commonWord(tok):
			syms = append(syms, mention{tok, plainMentionLimit})
		}
	})
	return files, syms
}

// queryWords are the words of a query that may name a file or a symbol
// (queryMentions reads them): the entities so named are loaded before the
// query's mentions are told apart.
func queryWords(query string) []string {
	var words []string
	eachQueryToken(query, func(tok string, _, _ bool) {
		if len(tok) >= 3 || LanguageOf(tok) != "" || strings.Contains(tok, "/") {
			words = append(words, tok)
		}
	})
	return words
}

// eachQueryToken calls fn for every word of query, stripped of quotes,
// brackets and trailing punctuation; strong says the word came in
// backticks or a call, initial that it starts a sentence.
func eachQueryToken(query string, fn func(tok string, strong, initial bool)) {
	raw := strings.Fields(query)
	for k, r := range raw {
		strong := strings.ContainsAny(r, "`(")
		initial := k == 0 || strings.ContainsAny(raw[k-1][len(raw[k-1])-1:], ".!?:")
		for _, tok := range strings.FieldsFunc(r, func(c rune) bool { return strings.ContainsRune("`'\",;()[]{}<>!?", c) }) {
			if tok = strings.TrimRight(strings.TrimPrefix(tok, "./"), ".:"); tok != "" {
				fn(tok, strong, initial)
			}
		}
	}
}

// looksLikeCode reports an identifier no prose word looks like: one with
// an underscore or an inner dot, or camelCase (a capital after a lower
// case letter or digit: "readFile", "ReadFile", "utf8Len").
func looksLikeCode(tok string) bool {
	if strings.ContainsAny(tok, "_.") {
		return true
	}
	var prev rune
	for _, r := range tok {
		if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
			return true
		}
		prev = r
	}
	return false
}

// capitalised reports a word whose first letter only is a capital.
func capitalised(tok string) bool {
	r, n := utf8.DecodeRuneInString(tok)
	return unicode.IsUpper(r) && strings.ToLower(tok[n:]) == tok[n:]
}

// commonWord reports a word among GloVe's commonWordRank commonest.
func commonWord(tok string) bool {
	v, err := glove.Load()
	if err != nil {
		return false
	}
	rank, ok := v.Rank(strings.ToLower(tok))
	return ok && rank < commonWordRank
}
