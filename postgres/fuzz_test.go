package postgres

import (
	"errors"
	"testing"
)

// FuzzFTSQuery: any text either parses as an FTS5 query, which then plans
// and evaluates against a document without panicking, or is refused with
// a syntax error (the only error invalid_params quotes).
func FuzzFTSQuery(f *testing.F) {
	for _, s := range []string{`alpha AND beta`, `"alpha beta" NEAR(gamma delta, 3)`, `^alpha OR del*`, `content: (alpha NOT beta)`,
		`NEAR(`, `"`, `a:b`, `-a`, `(((alpha)))`, `{content} : x`, `- content : x`, `alpha + beta`, `NEAR(a b c, 0)`, `a OR b AND NOT c`} {
		f.Add(s)
	}
	pos := map[string][]int{}
	n := 0
	fts5Tokens("Alpha beta gamma, alpha delta: deltas epsilon beta", func(tok []byte) {
		n++
		pos[string(tok)] = append(pos[string(tok)], n)
	})
	f.Fuzz(func(t *testing.T, s string) {
		q, err := parseFTS(s)
		if err != nil {
			var se *ftsSyntaxError
			if !errors.As(err, &se) || se.reason == "" {
				t.Fatalf("parsing %q: %v (%T); want a syntax error with a reason", s, err, err)
			}
			return
		}
		p := planSearch(q)
		tf, ok := q.match(pos)
		if ok && len(tf) != len(q.phrases) {
			t.Fatalf("%q matched with %d phrase counts for %d phrases", s, len(tf), len(q.phrases))
		}
		if p.simple && !p.exact {
			t.Fatalf("%q planned simple but not exact", s)
		}
	})
}

// FuzzFTSDoc: any text gives a full-text column within PostgreSQL's
// tsvector limits and a token count no smaller than its positions.
func FuzzFTSDoc(f *testing.F) {
	for _, s := range []string{"", "Hello, World", "naïve café ÉCOLE", "a\x00b", "\xff\xfe", "x'y\\z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc, n := ftsDoc(s)
		if n < 0 || len(doc) > 4*len(s)+64*n+16 {
			t.Fatalf("ftsDoc(%q) = %d bytes, %d tokens", s, len(doc), n)
		}
	})
}
