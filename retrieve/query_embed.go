package retrieve

import (
	"context"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// embedQuery embeds a query in e's space.
func embedQuery(ctx context.Context, e embed.Embedder, text string) ([]float32, error) {
	vs, err := e.Embed(ctx, []string{text})
	if err == nil {
		err = embed.Check(e.Space(), []string{text}, vs)
	}
	if err != nil {
		return nil, memory.Wrap(memory.CodeEmbedderUnavailable, err, "embedding the query: %s", memory.Public(err).Message)
	}
	return vs[0], nil
}
