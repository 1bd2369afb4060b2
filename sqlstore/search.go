package sqlstore

import (
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// MatchExpr renders a TextQuery as an FTS5 query expression. Text-syntax
// terms are each quoted as an FTS5 string, so no user text is ever read
// as query syntax, and OR'ed.
func MatchExpr(q memory.TextQuery) (string, error) {
	switch q.Syntax {
	case memory.SyntaxFTS:
		if strings.TrimSpace(q.Expr) == "" {
			return "", memory.Errorf(memory.CodeInvalidParams, "the FTS query is empty")
		}
		return q.Expr, nil
	case memory.SyntaxText, "":
		if len(q.Terms) == 0 {
			return "", memory.Errorf(memory.CodeInvalidParams, "the query has no words to search for")
		}
		var b strings.Builder
		for i, t := range q.Terms {
			if i > 0 {
				b.WriteString(" OR ")
			}
			b.WriteByte('"')
			b.WriteString(strings.ReplaceAll(t, `"`, `""`))
			b.WriteByte('"')
		}
		return b.String(), nil
	}
	return "", memory.Errorf(memory.CodeInvalidParams, "unknown query syntax %q (want text or fts)", q.Syntax)
}
