package embed

import (
	"context"

	"github.com/cairnhq/cairn/embed/glove"
	"github.com/cairnhq/cairn/memory"
)

// GloVe is the built-in offline embedder.
type GloVe struct{ v *glove.Vectors }

// NewGloVe loads the built-in vectors.
func NewGloVe() (*GloVe, error) {
	v, err := glove.Load()
	if err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "loading the built-in word vectors")
	}
	return &GloVe{v: v}, nil
}

// Space implements Embedder.
func (g *GloVe) Space() Space { return Space{Provider: "glove", Model: glove.Model, Dim: glove.Dim} }

// Embed implements Embedder.
func (g *GloVe) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, memory.Wrap(memory.CodeEmbedderUnavailable, ctx.Err(), "embedding canceled")
		}
		out[i] = g.v.Embed(t)
	}
	return out, nil
}

// WordIDs implements WordVectors.
func (g *GloVe) WordIDs(text string, skip func(word string) bool) []int32 {
	return g.v.WordIDs(text, skip)
}

// WordCosine implements WordVectors.
func (g *GloVe) WordCosine(a, b int32) float32 { return g.v.WordCosine(a, b) }

var _ WordVectors = (*GloVe)(nil)
