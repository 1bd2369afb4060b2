package cairn

import (
	"context"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// RetrieveRequest is a tiered retrieval request (see retrieve.Request).
type RetrieveRequest = retrieve.Request

// RetrieveResult is the tiered retrieval result (see retrieve.Result).
type RetrieveResult = retrieve.Result

// Retrieve returns, for a query and a scope, the active pins, the current
// capsule summary and the best candidates, cut to the token budget, with
// provenance. Same data, query, scope and clock give byte-identical results.
func (e *Engine) Retrieve(ctx context.Context, req RetrieveRequest) (RetrieveResult, error) {
	return e.retriever.Retrieve(ctx, req)
}

// DegradedRetrievals counts the retrievals answered, since the engine
// opened, without the embedder: the hybrid provider could not embed the
// query (embedder_unavailable) and ranked by words and recency alone,
// saying degraded in the provenance and every candidate's explanation.
func (e *Engine) DegradedRetrievals() int64 { return e.degraded.Load() }

// noteDegraded counts a degraded retrieval and logs why: the caller-safe
// reason at warn level, the whole cause (the embedder's address, the
// transport's error) at debug level only.
func (e *Engine) noteDegraded(reason error) {
	e.degraded.Add(1)
	e.log.Warn("retrieval answered without the embedder (degraded: words and recency only)", "reason", memory.Public(reason).Message)
	e.log.Debug("embedder failure", "detail", memory.Detail(reason))
}
