package retrieve_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

func TestTerms(t *testing.T) {
	for in, want := range map[string][]string{
		"authentication bug":                           {"authentication", "bug"},
		"What career path has Caroline decided?":       {"career", "path", "caroline", "decided"},
		"speaker:Caroline well-being C++ AND (x OR y)": {"speaker", "caroline", "well", "c", "x"},
		`"unterminated ? * ^ NEAR(a, 5)`:               {"unterminated", "near", "5"},
		"Déjà vu — 東京 2024":                            {"déjà", "vu", "東京", "2024"},
		"what is it?":                                  {"what", "is", "it"},
		"Bug bug BUG":                                  {"bug"},
		"🎨 painting":                                   {"painting"},
	} {
		if got := retrieve.Terms(in); !slices.Equal(got, want) {
			t.Errorf("Terms(%q) = %q; want %q", in, got, want)
		}
	}
	many := strings.Repeat("word", 1) + " "
	for i := range 200 {
		many += string(rune('a'+i%26)) + strings.Repeat("z", i/26+1) + " "
	}
	if got := retrieve.Terms(many); len(got) != retrieve.MaxTerms {
		t.Errorf("%d terms; want the cap %d", len(got), retrieve.MaxTerms)
	}
}

func TestParseQuery(t *testing.T) {
	q, err := retrieve.ParseQuery("paint* OR \"support group\"", memory.SyntaxFTS)
	if err != nil || q.Expr != "paint* OR \"support group\"" || q.Syntax != memory.SyntaxFTS {
		t.Fatalf("fts: %+v %v", q, err)
	}
	q, err = retrieve.ParseQuery("Fix the login", "")
	if err != nil || q.Syntax != memory.SyntaxText || !slices.Equal(q.Terms, []string{"fix", "login"}) {
		t.Fatalf("text: %+v %v", q, err)
	}
	for _, tc := range []struct {
		q      string
		syntax memory.Syntax
	}{
		{"", ""}, {"   \t\n", ""}, {"?!*", ""}, {"", memory.SyntaxFTS}, {"  ", memory.SyntaxFTS},
		{"ok", "regex"}, {"bad\xff", ""}, {"nul\x00", ""}, {strings.Repeat("a ", retrieve.MaxQueryBytes), ""},
	} {
		if _, err := retrieve.ParseQuery(tc.q, tc.syntax); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("ParseQuery(%.20q, %q) = %v; want invalid_params", tc.q, tc.syntax, err)
		}
	}
}
