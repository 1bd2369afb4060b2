package embed

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Hash is a deterministic, dependency-free embedder for tests: each
// lowercased word is hashed to a signed bucket of the vector. Texts that
// share words are similar; nothing else is.
type Hash struct{ Dim int }

// Space implements Embedder.
func (h Hash) Space() Space { return Space{Provider: "hash", Model: "fnv1a-words", Dim: h.Dim} }

// Embed implements Embedder.
func (h Hash) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.Dim)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
			f := fnv.New64a()
			f.Write([]byte(w))
			x := f.Sum64()
			sign := float32(1)
			if x>>63 == 1 {
				sign = -1
			}
			v[x%uint64(h.Dim)] += sign
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n > 0 {
			inv := float32(1 / math.Sqrt(n))
			for j := range v {
				v[j] *= inv
			}
		}
		out[i] = v
	}
	return out, nil
}
