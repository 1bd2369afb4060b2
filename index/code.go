package index

import (
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
	ts := lexical.Terms(lexical.SplitIdent(text))
	for i, t := range ts {
		ts[i] = codeTermPrefix + t
	}
	return ts
}

// CodeQueryTerms analyses a query about code as lexical.QueryTerms does
// (no duplicates, stopwords kept when nothing else is left), into code
// terms.
func CodeQueryTerms(query string) []string {
	ts := lexical.QueryTerms(lexical.SplitIdent(query))
	for i, t := range ts {
		ts[i] = codeTermPrefix + t
	}
	return ts
}

// CodeFilter selects the live code entities of repository repo. Segments
// keep a repository's documents together, so it reads only their stretch.
func (v *View) CodeFilter(repo string) *Filter {
	f := v.Filter(memory.Scope{RepoID: repo})
	f.code = true
	return f
}

// CodeScores adds, for every live code entity f allows that holds a code
// term of terms (CodeQueryTerms), its BM25 score over the code entities'
// statistics to scores[doc]; touched lists the documents scored.
func (v *View) CodeScores(terms []string, f *Filter, scores []float32, touched []uint32) []uint32 {
	st := v.st
	return v.bm25(terms, st.codeDocs, st.codeTotal, f, f.Allow, scores, touched)
}

// CodeNearest returns the k code entities f allows nearest to q.
func (v *View) CodeNearest(q []float32, k int, f *Filter) []vector.Hit {
	return v.Nearest(groupCode, q, k, f, nil)
}
