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
