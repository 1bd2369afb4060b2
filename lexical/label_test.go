package lexical_test

import (
	"slices"
	"testing"

	"github.com/cairnhq/cairn/lexical"
)

func TestLabel(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Alice: I moved to Lisbon", []string{"alice"}},
		{"Build Step: failed on arm64", []string{"build", "step"}},
		{"todo:", []string{"todo"}},
		{"see http://example.com", nil},
		{"http://example.com: down", nil},
		{"10:30 standup", nil},
		{"At 10: standup", nil},
		{"the deploy failed on friday: rollback", nil}, // five words
		{"node parseConfig func: x", nil},              // three words
		{"Note, then: more", nil},
		{": nothing", nil},
		{"", nil},
		{"a label that is much too long to be one: x", nil},
	} {
		if got := lexical.Label(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Label(%q) = %q; want %q", c.text, got, c.want)
		}
	}
}

// TestLabelTerms checks that a record's label words are found through
// LabelTerm and only there.
func TestLabelTerms(t *testing.T) {
	x := lexical.New()
	x.Add(0, "Alice: the deploy failed")
	x.Add(1, "Bob: Alice said the deploy failed")
	x.Add(2, "nothing about anyone")
	scores := make([]float32, x.Cap())
	terms := lexical.QueryTerms("alice")
	docs := x.Scores([]string{lexical.LabelTerm(terms[0])}, nil, scores, nil)
	if !slices.Equal(docs, []uint32{0}) {
		t.Errorf("labelled alice: %v; want [0]", docs)
	}
	clear(scores)
	if docs := x.Scores(terms, nil, scores, nil); len(docs) != 2 {
		t.Errorf("alice as a word: %v; want documents 0 and 1", docs)
	}
}
