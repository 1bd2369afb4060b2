// Package maintain runs the removal lifecycle of thoughts (the
// maintenance_ops tool): thoughts marked for removal are listed, exported
// to an archive file (Parquet or JSON lines) with their provenance and
// metadata, and finalized, that is deleted with their text erased, only
// once they were exported and the retention period since their marking
// has passed.
//
// An export writes its file completely (to a temporary name, synced, then
// renamed) before it records, in the store, which thoughts it holds and
// the file's SHA-256; finalize deletes only thoughts whose recorded file
// still exists with that checksum. A process killed at any point between
// the two loses nothing: the thoughts stay marked and are exported again.
package maintain
