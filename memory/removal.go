package memory

import "context"

// Removal is a thought marked for removal, with where it is in the
// removal lifecycle: marked, exported to an archive, then finalized
// (deleted) once the retention period has passed.
type Removal struct {
	Thought Thought `json:"thought"`
	// MarkedAt is when the thought was marked (Unix ms); 0 when unknown
	// (marked before cairn recorded it, or imported already marked).
	MarkedAt int64 `json:"marked_at"`
	// ExportedAt is when it was last written to an archive (0: never);
	// Archive is that file's path and ArchiveSHA256 its checksum.
	ExportedAt    int64  `json:"exported_at,omitempty"`
	Archive       string `json:"archive,omitempty"`
	ArchiveSHA256 string `json:"archive_sha256,omitempty"`
}

// RemovalStore keeps the removal lifecycle of thoughts. Marking a thought
// active again (SetThoughtStatus) clears its removal record, export
// included.
type RemovalStore interface {
	// MarkRemoval sets status removal on the thoughts named and records
	// at as when they were marked; a thought already marked keeps its
	// mark time (one marked without a recorded time gets at). Ids that
	// name no thought are skipped. It returns how many thoughts changed
	// status.
	MarkRemoval(ctx context.Context, ids []string, at int64) (int, error)
	// Removals lists thoughts marked for removal, the earliest marked
	// first (unknown mark times first), then by id; after skips that
	// many; limit caps the page (default 100).
	Removals(ctx context.Context, after, limit int) ([]Removal, error)
	// RecordExport notes that the thoughts named were written to archive
	// (with its checksum) at time at; thoughts no longer marked are
	// skipped. It returns how many it recorded.
	RecordExport(ctx context.Context, ids []string, archive, sha256 string, at int64) (int, error)
	// FinalizeRemoval deletes, in one transaction, those of the thoughts
	// named that are still marked, were exported, and whose mark time
	// (their export time when the mark time is unknown) is at or before
	// cutoff; their text is erased from disk and their vectors deleted.
	// It returns the ids it deleted, in the order given.
	FinalizeRemoval(ctx context.Context, ids []string, cutoff int64) ([]string, error)
}
