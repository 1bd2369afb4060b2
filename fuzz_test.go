package cairn_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// FuzzRetrieveQuery: any string is a safe text query. It either retrieves
// or, when it is blank, holds no word or is not UTF-8, is refused with
// invalid_params; the search engine never sees query syntax, so it never
// fails. In fts syntax, malformed queries are invalid_params too, never an
// internal or database error.
func FuzzRetrieveQuery(f *testing.F) {
	for _, s := range []string{
		"authentication bug", "why did checkout say session expired?", `"unterminated`, "speaker:Caroline", "Caroline:",
		"C++ painting", "well-being", "NEAR(a b, 5)", "^start", "paint*", "a AND", "OR", "NOT x", "(", ")", "{content}: x",
		"'; DROP TABLE observations; --", "🎨 painting", "ＷＥＢＨＯＯＫ", "\x00", "\xff", "", " ", "a\"b\"c", `""""`, "*", "-x", "+x",
	} {
		f.Add(s)
	}
	eng := openSample(f, nil)
	f.Fuzz(func(t *testing.T, q string) {
		res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: q, MaxCandidates: ptr(5)})
		switch memory.CodeOf(err) {
		case "":
			if res.Provenance.Syntax != memory.SyntaxText || len(res.Provenance.SearchTerms) == 0 {
				t.Fatalf("text %q: provenance %+v", q, res.Provenance)
			}
		case memory.CodeInvalidParams:
			if utf8.ValidString(q) && !strings.ContainsRune(q, 0) && len(q) <= retrieve.MaxQueryBytes && len(retrieve.Terms(q)) > 0 {
				t.Fatalf("text %q has words %q but was refused: %v", q, retrieve.Terms(q), err)
			}
		default:
			t.Fatalf("text %q: %v", q, err)
		}
		_, err = eng.Retrieve(ctx, cairn.RetrieveRequest{Query: q, Syntax: memory.SyntaxFTS, MaxCandidates: ptr(5)})
		if c := memory.CodeOf(err); c != "" && c != memory.CodeInvalidParams {
			t.Fatalf("fts %q: %v", q, err)
		}
	})
}
