package lexicon_test

import (
	"slices"
	"testing"

	"github.com/cairnhq/cairn/synth/lexicon"
)

func TestLexicon(t *testing.T) {
	l, err := lexicon.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		word  string
		lemma string
	}{{"went", "go"}, {"children", "child"}, {"tried", "try"}, {"stopped", "stop"}, {"bigger", "big"}, {"moves", "move"}} {
		if got := l.Lemmas(tc.word); !slices.Contains(got, tc.lemma) {
			t.Errorf("Lemmas(%q) = %v, want %q among them", tc.word, got, tc.lemma)
		}
	}
	for _, p := range [][2]string{{"succeeded", "failed"}, {"public", "private"}, {"quiet", "noisy"}, {"early", "late"},
		{"positively", "negatively"}, {"unverified", "verified"}, {"disallow", "allows"}, {"added", "removed"}, {"stronger", "weaker"}} {
		if !l.Antonyms(p[0], p[1]) || !l.Antonyms(p[1], p[0]) {
			t.Errorf("%q and %q are not antonyms", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"approved", "reviewed"}, {"postgres", "dynamodb"}, {"cat", "dog"}, {"discover", "cover"}} {
		if l.Antonyms(p[0], p[1]) {
			t.Errorf("%q and %q are antonyms", p[0], p[1])
		}
	}
	if !l.Synonyms("store", "shop", 2) || l.Synonyms("cat", "dog", 5) || l.Synonyms("store", "shop", 0) {
		t.Error("synonyms")
	}
	if !l.VerbForm("removes") || !l.VerbForm("went") || l.VerbForm("formatter") || l.VerbForm("go") {
		t.Error("verb forms")
	}
	if c := l.Tags("formatter"); c.Has(lexicon.Verb) {
		t.Errorf("formatter tagged as a verb: %v", c)
	}
	if c := l.Tags("fix"); !c.Has(lexicon.Verb) || !c.Has(lexicon.Noun) {
		t.Errorf("fix: %v", c)
	}
	if l.Known("priya") || !l.Known("herons") {
		t.Error("known")
	}
}
