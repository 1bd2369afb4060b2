package postgres

import (
	"slices"
	"strconv"
	"strings"
)

// PostgreSQL's tsvector limits (ts_type.h): positions run from 1 to
// 16383 (later ones are stored as 16383), a lexeme keeps at most 256
// positions, a lexeme holds at most 2047 bytes and all lexemes together
// under 1 MiB.
const (
	tsMaxPos       = 16383
	tsMaxPositions = 256
	tsMaxLexeme    = 2047
	tsMaxLexemes   = 1<<20 - 1
)

// ftsDoc is the full-text column of a text: a tsvector literal holding
// its terms (as FTS5 'porter unicode61' indexes them) with their
// positions (FTS5's token offsets plus one), and its number of tokens,
// which bm25 uses as the document length. The tsvector keeps what
// PostgreSQL allows (see the limits above): a term repeated more than 256
// times, or past the 16,383rd token, is counted as PostgreSQL stores it.
func ftsDoc(text string) (string, int) {
	pos := map[string][]int{}
	n := 0
	fts5Tokens(text, func(tok []byte) {
		n++
		if len(tok) == 0 || len(tok) > tsMaxLexeme {
			return
		}
		p := pos[string(tok)]
		if len(p) >= tsMaxPositions || len(p) > 0 && p[len(p)-1] >= tsMaxPos {
			return
		}
		pos[string(tok)] = append(p, min(n, tsMaxPos))
	})
	lex := make([]string, 0, len(pos))
	for l := range pos {
		lex = append(lex, l)
	}
	slices.Sort(lex)
	var b strings.Builder
	total := 0
	for _, l := range lex {
		if total += len(l); total > tsMaxLexemes {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		writeLexeme(&b, l)
		for i, p := range pos[l] {
			if i == 0 {
				b.WriteByte(':')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
	}
	return b.String(), n
}

// writeLexeme writes a quoted tsvector/tsquery lexeme.
func writeLexeme(b *strings.Builder, l string) {
	b.WriteByte('\'')
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(l[i])
		}
	}
	b.WriteByte('\'')
}
