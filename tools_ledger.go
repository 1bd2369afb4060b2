package cairn

import "context"

// ledgerTools read the ledger: what was done to each record.
var ledgerTools = []Tool{
	newTool(Tool{
		Name: "record_history", Title: "Read a record's history", Method: "GET", Path: "/v1/records/{id}/history", ReadOnly: true, Idempotent: true,
		Description: `List what was done to one record, oldest first, from cairn's ledger: each entry has seq, at (Unix ms), kind (observation, capsule, summary, pin, thought, kg_entity, kg_observation, kg_edge, kg_entity_candidate, kg_edge_candidate, code_artifact, inner_voice_session), the record's id, op (create, import, update, close, mark, unmark, export, stage, approve, reject, forget, delete; unknown for changes logged before the ledger existed) and, for an update, a mark, a forget or a decision, fields: the names of the fields it changed. The ledger never holds content or old values, so a forgotten or deleted record's history stays readable and holds none of its text. id is any record's id, or a code artifact's hash; not_found only when there is neither such a record nor any history of one. after and limit (1..1000, default 100) page through the entries; next_after is the next page's after.`,
	}, func(e *Engine, ctx context.Context, in HistoryRequest) (RecordHistory, error) {
		return e.RecordHistory(ctx, in)
	}),
}
