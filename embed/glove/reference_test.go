package glove

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The straightforward loader the fast one replaced: every row copied and
// decoded, a map of the words. TestFastLoadMatchesReference holds the two
// to the same results, bit for bit.

// Vectors is the loaded word-vector table.
type refVectors struct {
	index  map[string]int32
	weight []float32
	scale  []float32
	rows   []int8
	pc     [Dim]float32
	// unit scales row i's int8 components to a unit vector.
	unit []float32
}

func refParse(b []byte) (*refVectors, error) {
	le := binary.LittleEndian
	if len(b) < len(Magic)+8 || string(b[:len(Magic)]) != Magic {
		return nil, errCorrupt
	}
	b = b[len(Magic):]
	n, dim := int(le.Uint32(b)), int(le.Uint32(b[4:]))
	b = b[8:]
	if dim != Dim || len(b) < 4*Dim {
		return nil, errCorrupt
	}
	v := &refVectors{index: make(map[string]int32, n), weight: make([]float32, n), scale: make([]float32, n)}
	for i := range Dim {
		v.pc[i] = math.Float32frombits(le.Uint32(b[4*i:]))
	}
	b = b[4*Dim:]
	for i := range n {
		if len(b) < 1 {
			return nil, errCorrupt
		}
		l := int(b[0])
		if len(b) < 1+l+4 {
			return nil, errCorrupt
		}
		v.index[string(b[1:1+l])] = int32(i)
		v.weight[i] = float32(Weight(int(le.Uint32(b[1+l:]))))
		b = b[1+l+4:]
	}
	if len(b) != n*(4+Dim) {
		return nil, errCorrupt
	}
	v.rows = make([]int8, n*Dim)
	for i := range n {
		row := b[i*(4+Dim):]
		v.scale[i] = math.Float32frombits(le.Uint32(row))
		for j := range Dim {
			v.rows[i*Dim+j] = int8(row[4+j])
		}
	}
	v.unit = make([]float32, n)
	for i := range n {
		var s int32
		for _, x := range v.rows[i*Dim : i*Dim+Dim] {
			s += int32(x) * int32(x)
		}
		if s > 0 {
			v.unit[i] = float32(1 / math.Sqrt(float64(s)))
		}
	}
	return v, nil
}

func (v *refVectors) Embed(text string) []float32 {
	var acc [Dim]float32
	found := false
	for _, w := range tokens(text) {
		i, ok := v.index[w]
		if !ok {
			continue
		}
		found = true
		f := v.weight[i] * v.scale[i]
		row := v.rows[int(i)*Dim : int(i)*Dim+Dim]
		for j := range Dim {
			acc[j] += f * float32(row[j])
		}
	}
	out := make([]float32, Dim)
	if !found {
		return out
	}
	var dot float32
	for j := range Dim {
		dot += acc[j] * v.pc[j]
	}
	var n float64
	for j := range Dim {
		x := acc[j] - dot*v.pc[j]
		out[j] = x
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(n))
	for j := range out {
		out[j] *= inv
	}
	return out
}

func (v *refVectors) WordCosine(a, b int32) float32 {
	if a == b {
		return 1
	}
	ra := v.rows[int(a)*Dim : int(a)*Dim+Dim]
	rb := v.rows[int(b)*Dim : int(b)*Dim+Dim]
	var s int32
	for j := range Dim {
		s += int32(ra[j]) * int32(rb[j])
	}
	return float32(s) * v.unit[a] * v.unit[b]
}

func TestFastLoadMatchesReference(t *testing.T) {
	ref, err := refParse(data)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if v.Words() != len(ref.weight) {
		t.Fatalf("%d words, reference %d", v.Words(), len(ref.weight))
	}
	words := make([]string, 0, len(ref.index))
	for w, i := range ref.index {
		got, ok := v.lookup(w)
		if !ok || got != i {
			t.Fatalf("word %q: %d %v, reference %d", w, got, ok, i)
		}
		words = append(words, w)
	}
	if _, ok := v.lookup("qqqzzzxqnotaword"); ok {
		t.Fatal("an unknown word was found")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var sb strings.Builder
		for range 1 + rng.IntN(20) {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteString(" ")
		}
		a, b := v.Embed(sb.String()), ref.Embed(sb.String())
		for j := range a {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
				t.Fatalf("%q: component %d %v, reference %v", sb.String(), j, a[j], b[j])
			}
		}
		x, y := int32(rng.IntN(len(words))), int32(rng.IntN(len(words)))
		if g, w := v.WordCosine(x, y), ref.WordCosine(x, y); math.Float32bits(g) != math.Float32bits(w) {
			t.Fatalf("cosine %d %d: %v, reference %v", x, y, g, w)
		}
	}
	_ = binary.LittleEndian
}
