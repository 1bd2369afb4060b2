package cairn

import (
	"context"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/memory"
)

// embedBatch is how many texts go to the embedder at once.
const embedBatch = 64

// embedRecords embeds records and stores the vectors of those that still
// wait for one with the text embedded (another process may have embedded
// some meanwhile, or a record been rewritten). It returns how many vectors
// it stored. A failure leaves the rest pending (cairn reembed, the
// background healer of a long-running process, or the next Reembed picks
// them up) and is returned for logging; the records themselves are
// already safe.
func (e *Engine) embedRecords(ctx context.Context, jobs []memory.EmbedJob) (int, error) {
	stored := 0
	for i := 0; i < len(jobs); i += embedBatch {
		batch := jobs[i:min(i+embedBatch, len(jobs))]
		texts := make([]string, len(batch))
		for j, b := range batch {
			texts[j] = index.EmbedText(b.Kind, b.Content)
		}
		vecs, err := e.embedder.Embed(ctx, texts)
		if err == nil {
			err = embed.Check(e.embedder.Space(), texts, vecs)
		}
		if err != nil {
			return stored, memory.Wrap(memory.CodeEmbedderUnavailable, err, "embedding: %s", memory.Public(err).Message)
		}
		es := make([]memory.Embedding, len(batch))
		for j, b := range batch {
			es[j] = memory.Embedding{Kind: b.Kind, ID: b.ID, Space: e.embedder.Space(), Vector: vecs[j], Text: b.Content}
		}
		n, err := e.store.FillEmbeddings(ctx, es)
		stored += n
		if err != nil {
			return stored, err
		}
	}
	return stored, nil
}

// embedAfterWrite embeds records just written, when the engine embeds on
// write. Failures are logged, never returned: the write has succeeded and
// the records wait, pending, for cairn reembed or the background healer.
func (e *Engine) embedAfterWrite(ctx context.Context, jobs []memory.EmbedJob) {
	if !e.embedOnWrite || len(jobs) == 0 {
		return
	}
	if _, err := e.embedRecords(context.WithoutCancel(ctx), jobs); err != nil {
		fix := "run cairn reembed"
		if e.heal != nil {
			fix = "this process embeds them in the background once the embedder answers"
		}
		e.log.Warn("records stored without vectors; "+fix, "records", len(jobs), "err", memory.Public(err).Message)
		e.log.Debug("embedder failure", "detail", memory.Detail(err))
	}
}

// ReembedRequest asks for pending records to be embedded.
type ReembedRequest struct {
	// DropOtherSpaces deletes the vectors of every space but the active one
	// (after a move to a new embedder).
	DropOtherSpaces bool `json:"dropOtherSpaces,omitempty" jsonschema:"also delete vectors of spaces other than the active embedder's"`
}

// ReembedReport says what a re-embedding did.
type ReembedReport struct {
	Space memory.Space `json:"space"`
	// Embedded counts the vectors stored (records another process
	// embedded meanwhile are not counted).
	Embedded int `json:"embedded"`
	Dropped  int `json:"dropped"`
	// Pending counts records still without a vector (the embedder failed).
	Pending int `json:"pending"`
}

// Reembed embeds every record that has no vector in the active space: the
// ones a failing embedder left pending, and all of them after a move to a
// new embedder. progress, when set, is called as batches finish.
func (e *Engine) Reembed(ctx context.Context, req ReembedRequest, progress func(done, total int)) (ReembedReport, error) {
	space := e.embedder.Space()
	rep := ReembedReport{Space: space}
	st, err := e.store.VectorStats(ctx, space)
	if err != nil {
		return rep, err
	}
	total, done := st.Pending, 0
	after := ""
	for {
		jobs, err := e.store.PendingEmbeddings(ctx, space, after, 512)
		if err != nil {
			return rep, err
		}
		if len(jobs) == 0 {
			break
		}
		n, err := e.embedRecords(ctx, jobs)
		rep.Embedded += n
		if err != nil {
			st, _ := e.store.VectorStats(context.WithoutCancel(ctx), space)
			rep.Pending = st.Pending
			return rep, err
		}
		after = afterKey(jobs[len(jobs)-1])
		done += len(jobs)
		if progress != nil {
			progress(done, max(total, done))
		}
	}
	if req.DropOtherSpaces {
		if rep.Dropped, err = e.store.DropEmbeddings(ctx, space); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// afterKey is the PendingEmbeddings cursor after job j.
func afterKey(j memory.EmbedJob) string { return string(j.Kind) + "\x00" + j.ID }
