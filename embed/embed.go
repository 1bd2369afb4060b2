package embed

import (
	"context"
	"math"

	"github.com/cairnhq/cairn/memory"
)

// Space identifies a vector space: vectors compare only within one.
type Space = memory.Space

// Embedder turns texts into vectors of its space.
type Embedder interface {
	// Space is the space every vector lies in.
	Space() Space
	// Embed returns one vector per text, in order. Vectors are
	// L2-normalised (a text with nothing to embed may give the zero vector).
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Check verifies a provider's answer for texts: one vector per text, each
// of the space's dimension, finite. It normalises vectors to unit length.
func Check(s Space, texts []string, vecs [][]float32) error {
	if len(vecs) != len(texts) {
		return memory.Errorf(memory.CodeEmbedderUnavailable, "%s returned %d vectors for %d texts", s.Provider, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) != s.Dim {
			return memory.Errorf(memory.CodeEmbedderUnavailable, "%s returned a vector of dimension %d; the space is %d", s.Provider, len(v), s.Dim)
		}
		var n float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return memory.Errorf(memory.CodeEmbedderUnavailable, "%s returned a vector with NaN or Inf", s.Provider)
			}
			n += float64(x) * float64(x)
		}
		if n > 0 && math.Abs(n-1) > 1e-6 {
			inv := float32(1 / math.Sqrt(n))
			for j := range v {
				v[j] *= inv
			}
		}
		vecs[i] = v
	}
	return nil
}

// Cosine is the dot product of two unit vectors.
func Cosine(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// WordVectors is implemented by embedders built from word vectors (the
// built-in GloVe one): it names text's words by id and compares two words,
// which lets retrieval match a query word to the closest word of a record
// ("pets" to "dog") as well as to the same word.
type WordVectors interface {
	// WordIDs returns the ids of text's known words, each once, leaving
	// out those skip reports (skip may be nil).
	WordIDs(text string, skip func(word string) bool) []int32
	// WordCosine is the cosine similarity of two words' vectors.
	WordCosine(a, b int32) float32
}
