package reword

import (
	"strings"
	"testing"
	"testing/fstest"
)

// tinyWordNet is a WordNet of a few words in the database files' format.
func tinyWordNet(t *testing.T) *WordNet {
	t.Helper()
	fs := fstest.MapFS{
		"index.noun": {Data: []byte("  1 licence header line\n" +
			"sunrise n 1 0 1 3 00000100\n" +
			"dawn n 1 0 1 9 00000100\n" +
			"class n 2 0 2 9 00000200 00000300\n" +
			"family n 1 0 1 9 00000300\n" +
			"category n 1 0 1 9 00000200\n" +
			"kid n 1 0 1 9 00000400\n" +
			"child n 1 0 1 9 00000400\n" +
			"colour n 1 0 1 1 00000500\n" +
			"color n 1 0 1 1 00000500\n" +
			"friend n 1 0 1 9 00000600\n")},
		"data.noun": {Data: []byte("  1 licence header line\n" +
			"00000100 28 n 02 sunrise 0 dawn 0 000 | the first light of day\n" +
			"00000200 14 n 02 class 0 category 0 000 | a collection of things sharing a common attribute\n" +
			"00000300 14 n 02 family 0 class 0 000 | a group of people\n" +
			"00000400 18 n 02 kid 0 child 0 000 | a young person\n" +
			"00000500 07 n 02 color 0 colour 0 000 | a visual attribute\n" +
			"00000600 18 n 01 friend 0 000 | a person you know well\n")},
		"noun.exc": {Data: []byte("children child\n")},
		"index.verb": {Data: []byte("paint v 1 0 1 5 00000010\n" +
			"depict v 1 0 1 5 00000010\n" +
			"finish v 1 0 1 5 00000020\n" +
			"complete v 1 0 1 5 00000020\n" +
			"go v 1 0 1 5 00000030\n" +
			"travel v 1 0 1 5 00000030\n")},
		"data.verb": {Data: []byte("00000010 36 v 02 paint 0 depict 0 000 01 + 08 00 | make a picture\n" +
			"00000020 30 v 02 finish 0 complete 0 000 01 + 08 00 | come to an end of\n" +
			"00000030 38 v 02 go 0 travel 0 000 01 + 01 00 | change location\n")},
		"verb.exc":    {Data: []byte("went go\ngone go\n")},
		"index.adj":   {Data: []byte("favorite a 1 0 1 3 00000700\n")},
		"data.adj":    {Data: []byte("00000700 00 a 01 favorite 0 000 | preferred\n")},
		"adj.exc":     {Data: []byte("")},
		"index.adv":   {Data: []byte("")},
		"data.adv":    {Data: []byte("")},
		"adv.exc":     {Data: []byte("")},
		"cntlist.rev": {Data: []byte("class%1:14:00:: 1 4\nclass%1:14:01:: 2 6\nsunrise%1:28:00:: 1 3\n")},
	}
	wn, err := Load(fs)
	if err != nil {
		t.Fatal(err)
	}
	return wn
}

func tinyRewriter(t *testing.T) *Rewriter {
	ranks := map[string]int{"dawn": 900, "depict": 5000, "complete": 800, "travel": 700, "child": 300, "category": 2000,
		"family": 400, "colour": 3000, "sunrise": 9000, "paint": 4000, "finish": 1000, "go": 50, "kid": 2500, "color": 2900}
	return &Rewriter{WordNet: tinyWordNet(t), Rank: func(w string) (int, bool) { r, ok := ranks[w]; return r, ok }}
}

func TestSubstitute(t *testing.T) {
	r := tinyRewriter(t)
	for _, c := range []struct{ in, want string }{
		// a synonym inflected as the word was; a name kept
		{"Did Melanie paint a sunrise?", "Did Melanie depict a dawn?"},
		{"Melanie painted sunrises", "Melanie depicted dawns"},
		// an irregular form read back to its lemma; an irregular plural
		{"The kids finished it", "The children completed it"},
		// a function word is kept in every form
		{"The kids went home", "The children went home"},
		// an ambiguous word (class: its first sense holds 4 of 10) is kept
		{"Melanie took a class", ""},
		// a spelling of the same word is no rewording
		{"Melanie likes the color", ""},
		// quoted titles are kept
		{`Melanie read "sunrise" today`, ""},
	} {
		res, ok := r.Reword("id", c.in)
		if c.want == "" {
			if ok {
				t.Errorf("%q: reworded as %q; want no rewording", c.in, res.Text)
			}
			continue
		}
		if !ok {
			t.Errorf("%q: not reworded; want %q", c.in, c.want)
			continue
		}
		// The change of form is checked below: compare the words only.
		got := r.substituteOnly(c.in)
		if got != c.want {
			t.Errorf("%q: synonyms give %q; want %q", c.in, got, c.want)
		}
	}
}

// substituteOnly applies the synonym rule alone.
func (r *Rewriter) substituteOnly(q string) string {
	ts := tokenize(q)
	for i := range ts {
		r.substitute(ts, i)
	}
	return render(ts)
}

func TestReshape(t *testing.T) {
	r := tinyRewriter(t)
	parse := func(q string) frame {
		f, ok := r.parse(tokenize(q))
		if !ok {
			t.Fatalf("%q not read as a question", q)
		}
		return f
	}
	if out, ok := r.passive(parse("What did Melanie paint in May?")); !ok || render(out) != "What was painted by Melanie in May?" {
		t.Errorf("passive: %q %v", render(out), ok)
	}
	if _, ok := r.passive(parse("What did Melanie go to?")); ok {
		t.Error("passive of an intransitive verb")
	}
	if _, ok := r.passive(parse("What did Melanie paint a picture of?")); ok {
		t.Error("passive of a verb with its object")
	}
	if out, ok := r.indirect("x", parse("When did Melanie's friend paint?")); !ok || !strings.HasSuffix(render(out), " when Melanie's friend painted?") {
		t.Errorf("indirect: %q %v", render(out), ok)
	}
	if out, ok := r.indirect("x", parse("Does Melanie finish her work?")); !ok || !strings.HasSuffix(render(out), " whether Melanie finishes her work?") {
		t.Errorf("indirect yes/no: %q %v", render(out), ok)
	}
	if out, ok := r.indirect("x", parse("What is Melanie's favorite color?")); !ok || !strings.HasSuffix(render(out), " what Melanie's favorite color is?") {
		t.Errorf("indirect copula: %q %v", render(out), ok)
	}
	if out, ok := front(tokenize("What did Melanie paint on 3 May, 2023?")); !ok || render(out) != "On 3 May, 2023, what did Melanie paint?" {
		t.Errorf("front: %q %v", render(out), ok)
	}
	if _, ok := front(tokenize("What did Melanie paint on the wall?")); ok {
		t.Error("front of a phrase that names no date")
	}
	if out, ok := swapWh(tokenize("How many kids does Melanie have?")); !ok || render(out) != "What number of kids does Melanie have?" {
		t.Errorf("wh: %q %v", render(out), ok)
	}
}

func TestRewordIsDeterministic(t *testing.T) {
	r := tinyRewriter(t)
	a, _ := r.Reword("conv-1:3", "When did Melanie paint a sunrise?")
	b, _ := r.Reword("conv-1:3", "When did Melanie paint a sunrise?")
	if a.Text != b.Text || len(a.Rules) != len(b.Rules) {
		t.Fatalf("%q then %q", a.Text, b.Text)
	}
	if a.Substituted != 2 || !strings.Contains(a.Text, "dawn") {
		t.Errorf("%q (%v): want paint and sunrise replaced", a.Text, a.Rules)
	}
}

func TestInflect(t *testing.T) {
	for _, c := range []struct {
		lemma string
		pos   POS
		form  Form
		want  string
	}{
		{"stop", Verb, Past, "stopped"}, {"open", Verb, Past, "opened"}, {"visit", Verb, Gerund, "visiting"},
		{"try", Verb, Third, "tries"}, {"go", Verb, Third, "goes"}, {"write", Verb, Participle, "written"},
		{"write", Verb, Past, "wrote"}, {"make", Verb, Gerund, "making"}, {"look after", Verb, Past, "looked after"},
		{"box", Noun, Third, "boxes"}, {"wise man", Noun, Third, "wise mans"}, {"city", Noun, Third, "cities"},
	} {
		if got := Inflect(c.lemma, c.pos, c.form); got != c.want {
			t.Errorf("Inflect(%q, %c, %d) = %q; want %q", c.lemma, c.pos, c.form, got, c.want)
		}
	}
}

func TestLoadRejectsMalformedFiles(t *testing.T) {
	fs := fstest.MapFS{"index.noun": {Data: []byte("dog n x\n")}}
	if _, err := Load(fs); err == nil {
		t.Fatal("a malformed index line was accepted")
	}
}
