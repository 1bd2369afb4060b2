package cairn

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// The ledger: every write that creates, edits, marks, forgets or deletes
// a record leaves an entry (its kind and id, the operation, the time by
// the engine's clock, the fields an edit changed), never the record's
// content or old values. RecordHistory reads a record's entries.

// MaxHistoryPage caps the entries of one record_history page.
const MaxHistoryPage = 1000

// HistoryRequest asks for a page of a record's ledger entries.
type HistoryRequest struct {
	ID    string `json:"id" jsonschema:"the record's id, of any kind (obs_, cap_, sum_, pin_, th_, ent_, kgo_, edge_, candidate and session ids), or a code artifact's hash"`
	After int64  `json:"after,omitempty" jsonschema:"list entries after this seq (the next_after of the previous page), for paging"`
	Limit *int   `json:"limit,omitempty" jsonschema:"most entries to list, 1..1000; default 100"`
}

// RecordHistory is a page of a record's ledger entries, oldest first.
type RecordHistory struct {
	ID      string               `json:"id"`
	Entries []memory.LedgerEntry `json:"entries"`
	// NextAfter, when set, is the after of the next page.
	NextAfter int64 `json:"next_after,omitempty"`
}

// RecordHistory lists what was done to a record, oldest first: its
// ledger entries, each with the operation (create, import, update, close,
// mark, unmark, export, stage, approve, reject, forget, delete; unknown
// for changes logged before the ledger), the time by the engine's clock,
// and for an edit the names of the fields it changed. The history of a
// forgotten or deleted record stays readable, and holds none of its text.
// An id that names no record and no ledger entry is not_found.
func (e *Engine) RecordHistory(ctx context.Context, req HistoryRequest) (RecordHistory, error) {
	out := RecordHistory{ID: req.ID, Entries: []memory.LedgerEntry{}}
	if err := memory.ValidateRef("id", req.ID, false); err != nil {
		return out, err
	}
	if req.After < 0 {
		return out, memory.Errorf(memory.CodeInvalidParams, "after %d is negative", req.After)
	}
	limit := 100
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > MaxHistoryPage {
			return out, memory.Errorf(memory.CodeInvalidParams, "limit %d is out of range [1, %d]", *req.Limit, MaxHistoryPage)
		}
		limit = *req.Limit
	}
	page, known, err := e.store.History(ctx, req.ID, req.After, limit+1)
	if err != nil {
		return out, err
	}
	if !known {
		return out, memory.Errorf(memory.CodeNotFound, "no record %q and no history of one", req.ID)
	}
	if len(page) > limit {
		page = page[:limit]
		out.NextAfter = page[limit-1].Seq
	}
	out.Entries = append(out.Entries, page...)
	return out, nil
}
