package memory

import "context"

// The ledger is a store's record of what was done to its records: every
// write that creates, edits, marks, forgets or deletes a record of any
// kind leaves an entry saying which record (its kind and id), what was done
// (Op), when (the writer's clock) and, for an edit, which fields changed.
// It never holds content or old values: a forgotten or deleted record's
// text does not survive in it, while its history stays readable.
//
// Stores keep it in their change log (the same rows that tell in-memory
// indexes what changed), written by triggers, so no write path can skip
// it.

// LedgerEntry is one entry of the ledger.
type LedgerEntry struct {
	// Seq orders entries across the whole store; it is the cursor of a
	// History page.
	Seq int64 `json:"seq"`
	// At is when the write happened (Unix ms, the writer's clock); 0 when
	// unknown (entries written before the store kept the ledger).
	At int64 `json:"at"`
	// Kind is the record's kind (LedgerKinds) and ID its id (a code
	// artifact's hash).
	Kind string `json:"kind"`
	ID   string `json:"id"`
	// Op is what was done (the Op constants).
	Op string `json:"op"`
	// Fields names the fields an update, a mark, a forget or a decision
	// changed (never their values); empty for creations and deletions.
	Fields []string `json:"fields,omitempty"`
}

// Ledger operations.
const (
	// OpCreate: the record was written (think, log, kg_entity_create, ...).
	OpCreate = "create"
	// OpImport: the record was written by an import (cairn import, cairn
	// migrate).
	OpImport = "import"
	// OpUpdate: fields of the record changed (a summary replaced, an
	// entity renamed, a forgotten artifact restored by the same code).
	OpUpdate = "update"
	// OpClose: a capsule was closed.
	OpClose = "close"
	// OpMark and OpUnmark: a thought was marked for removal, or active
	// again.
	OpMark   = "mark"
	OpUnmark = "unmark"
	// OpExport: a thought marked for removal was written to an archive.
	OpExport = "export"
	// OpStage, OpApprove and OpReject: a knowledge-graph candidate was
	// staged for moderation, then approved or rejected.
	OpStage   = "stage"
	OpApprove = "approve"
	OpReject  = "reject"
	// OpForget: the record's text was erased; the record stays, redacted.
	OpForget = "forget"
	// OpDelete: the record was deleted (a pin removed, a graph record
	// deleted, a thought finalized after its archive, a pending candidate
	// dropped with the thought it came from).
	OpDelete = "delete"
	// OpUnknown: a change logged before the store kept the ledger, whose
	// operation cannot be told.
	OpUnknown = "unknown"
)

// Ledger record kinds: the VectorKind names of searchable records, and
// these.
const (
	LedgerCapsule         = "capsule"
	LedgerPin             = "pin"
	LedgerEntityCandidate = "kg_entity_candidate"
	LedgerEdgeCandidate   = "kg_edge_candidate"
	LedgerCodeArtifact    = "code_artifact"
	LedgerVoiceSession    = "inner_voice_session"
)

// LedgerKinds lists every kind of record the ledger names.
var LedgerKinds = []string{
	string(VectorObservation), LedgerCapsule, string(VectorSummary), LedgerPin, string(VectorThought),
	string(VectorKGEntity), string(VectorKGObservation), string(VectorKGEdge),
	LedgerEntityCandidate, LedgerEdgeCandidate, LedgerCodeArtifact, LedgerVoiceSession,
}

// LedgerStore reads the ledger.
type LedgerStore interface {
	// History returns up to limit ledger entries of the record named id
	// (of any kind: ids are unique across kinds, a code artifact is named
	// by its hash), oldest first, after entry seq after (0: from the
	// start). known reports whether the store knows id at all: a record
	// of that id exists, or the ledger names it (a deleted record's
	// history stays readable).
	History(ctx context.Context, id string, after int64, limit int) (entries []LedgerEntry, known bool, err error)
}
