package code

import (
	"context"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/memory"
)

// vectorStore is the part of a store that keeps vectors: the records
// still waiting for one, and a vector stored while its text is current.
type vectorStore interface {
	PendingEmbeddings(ctx context.Context, space memory.Space, after string, limit int) ([]memory.EmbedJob, error)
	FillEmbeddings(ctx context.Context, es []memory.Embedding) (int, error)
}

// writeIndex brings the retrieval index up to the store and writes what
// it holds in memory out to its files (with the small merges that are
// due), so the next process opens the repository's entities instead of
// replaying their changes. The index is derived data: a failure is
// logged, and the next process catches up.
func (m *Memory) writeIndex(ctx context.Context) {
	if m.snap == nil {
		return
	}
	err := m.snap.Snapshot(ctx, func(r memory.Reader) error {
		return m.index.Flush(ctx, r, index.DefaultShortMergeDocs, false)
	})
	if err != nil {
		m.log.Warn("the retrieval index was not written out; the next process catches up", "err", memory.Public(err).Message)
	}
}

// embedBatch is how many entity texts go to the embedder at once.
const embedBatch = 256

// embedPending embeds the live code entities that have no vector in the
// embedder's space (new or changed ones) and stores the vectors, which
// the retrieval index then holds for semantic candidates. A failing
// embedder leaves them pending (cairn reembed, or a server's background
// healer, embeds them later) and is logged: the index itself is written.
// It returns how many vectors it stored.
func (m *Memory) embedPending(ctx context.Context) int {
	vs, ok := m.store.(vectorStore)
	if m.embedder == nil || !ok {
		return 0
	}
	space := m.embedder.Space()
	after := string(memory.VectorCodeEntity) + "\x00"
	stored := 0
	for {
		jobs, err := vs.PendingEmbeddings(ctx, space, after, embedBatch)
		if err == nil && (len(jobs) == 0 || jobs[0].Kind != memory.VectorCodeEntity) {
			return stored
		}
		if err == nil {
			var n int
			n, err = m.embedJobs(ctx, vs, jobs)
			stored += n
		}
		if err != nil {
			m.log.Warn("code entities stored without vectors; hydration finds them by their words until they are embedded",
				"err", memory.Public(err).Message)
			return stored
		}
		after = string(memory.VectorCodeEntity) + "\x00" + jobs[len(jobs)-1].ID
	}
}

// embedJobs embeds one batch of pending entities (of the code kind only)
// and stores their vectors.
func (m *Memory) embedJobs(ctx context.Context, vs vectorStore, jobs []memory.EmbedJob) (int, error) {
	texts := make([]string, 0, len(jobs))
	for _, j := range jobs {
		if j.Kind != memory.VectorCodeEntity {
			break
		}
		texts = append(texts, j.Content)
	}
	in := make([]string, len(texts))
	for k, t := range texts {
		in[k] = index.EmbedText(memory.VectorCodeEntity, t)
	}
	vecs, err := m.embedder.Embed(ctx, in)
	if err == nil {
		err = embed.Check(m.embedder.Space(), in, vecs)
	}
	if err != nil {
		return 0, memory.Wrap(memory.CodeEmbedderUnavailable, err, "embedding code entities: %s", memory.Public(err).Message)
	}
	es := make([]memory.Embedding, len(texts))
	for k := range texts {
		es[k] = memory.Embedding{Kind: memory.VectorCodeEntity, ID: jobs[k].ID, Space: m.embedder.Space(), Vector: vecs[k], Text: texts[k]}
	}
	return vs.FillEmbeddings(ctx, es)
}
