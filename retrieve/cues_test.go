package retrieve_test

import (
	"slices"
	"testing"

	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/retrieve"
)

func TestAsksWhen(t *testing.T) {
	for q, want := range map[string]bool{
		"When did we move the database?":       true,
		"what year was the service rewritten":  true,
		"Which month did Alice join?":          true,
		"How long ago did the build break?":    true,
		"since when is it slow":                true,
		"What did Alice say about the deploy?": false,
		"Whenever it fails, who is paged?":     false,
		"How long did the migration take?":     true,
		"how often does the job fail":          true,
		"How large is the cache?":              false,
		"":                                     false,
	} {
		if got := retrieve.AsksWhen(q); got != want {
			t.Errorf("AsksWhen(%q) = %v; want %v", q, got, want)
		}
	}
}

func TestTimeTerms(t *testing.T) {
	for _, w := range []string{"yesterday", "weeks", "ago", "tuesday", "2023"} {
		if terms := lexical.QueryTerms(w); len(terms) != 1 || !slices.Contains(retrieve.TimeTerms, terms[0]) {
			t.Errorf("%q (%q) is not a time term", w, terms)
		}
	}
	if slices.Contains(retrieve.TimeTerms, "deploy") {
		t.Error("deploy is a time term")
	}
}
