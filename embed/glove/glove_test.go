package glove_test

import (
	"math"
	"testing"

	"github.com/cairnhq/cairn/embed/glove"
)

func cos(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

func TestEmbedIsTopical(t *testing.T) {
	v, err := glove.Load()
	if err != nil {
		t.Fatal(err)
	}
	if v.Words() != 80000 {
		t.Fatalf("%d words", v.Words())
	}
	q := v.Embed("What pets does Nate have?")
	dog := v.Embed("I just got a new addition to the family, a dog named Max")
	tax := v.Embed("The quarterly tax filing deadline moved to April")
	if cos(q, dog) <= cos(q, tax) {
		t.Fatalf("pets~dog %.3f should beat pets~tax %.3f", cos(q, dog), cos(q, tax))
	}
	var n float64
	for _, x := range dog {
		n += float64(x) * float64(x)
	}
	if math.Abs(n-1) > 1e-5 {
		t.Fatalf("norm %v", n)
	}
	zero := v.Embed("qqqzzzxq ~~~ 🎉")
	for _, x := range zero {
		if x != 0 {
			t.Fatal("text without known words must embed to zero")
		}
	}
	a, b := v.Embed("Deploy failed on staging"), v.Embed("Deploy failed on staging")
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("not deterministic")
		}
	}
	t.Logf("pets~dog %.3f pets~tax %.3f", cos(q, dog), cos(q, tax))
}

func TestWordCosine(t *testing.T) {
	v, err := glove.Load()
	if err != nil {
		t.Fatal(err)
	}
	ids := v.WordIDs("Kids, children and the kids; a tax form", func(w string) bool { return w == "the" || w == "a" })
	if len(ids) != 5 {
		t.Fatalf("WordIDs gave %d ids; want 5 (kids, children, and, tax, form: each once, stopwords skipped)", len(ids))
	}
	kids, children, tax := ids[0], ids[1], ids[3]
	if c := v.WordCosine(kids, kids); c != 1 {
		t.Fatalf("a word with itself: %v", c)
	}
	near, far := v.WordCosine(kids, children), v.WordCosine(kids, tax)
	if near < 0.5 || near >= 1 || far >= near || math.Abs(float64(near-v.WordCosine(children, kids))) > 1e-6 {
		t.Fatalf("cosine kids~children %v, kids~tax %v; want related words closer, symmetric", near, far)
	}
}

func TestWordIDsLongText(t *testing.T) {
	v, err := glove.Load()
	if err != nil {
		t.Fatal(err)
	}
	text := "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
	text = text + " red green blue black white brown yellow orange purple pink gray " + text + " red cat dog"
	ids := v.WordIDs(text, nil)
	if len(ids) != 33 {
		t.Fatalf("%d ids; want 33 distinct known words", len(ids))
	}
	seen := map[int32]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("id %d twice", id)
		}
		seen[id] = true
	}
}
