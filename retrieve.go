package cairn

import (
	"context"

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
