package cairn

import (
	"context"
	"os"

	"github.com/cairnhq/cairn/maintain"
)

// The removal lifecycle of thoughts (maintenance_ops) and its archives,
// served by the maintain package.

// Subcommands of maintenance_ops, and the bounds and format names of
// the removal lifecycle.
const (
	MaintenanceMaxLimit = maintain.MaxLimit
	ArchiveFormatJSONL  = maintain.FormatJSONL

	OpListRemovalCandidates = maintain.OpListRemovalCandidates
	OpExportRemovals        = maintain.OpExportRemovals
	OpFinalizeRemoval       = maintain.OpFinalizeRemoval
	OpMarkRemoval           = maintain.OpMarkRemoval
)

type (
	// MaintenanceRequest is maintenance_ops' parameters.
	MaintenanceRequest = maintain.Request
	// MaintenanceResult is maintenance_ops' answer.
	MaintenanceResult = maintain.Result
	// ArchiveEntry is an archive of the removal lifecycle.
	ArchiveEntry = maintain.ArchiveEntry
	// RemovalCandidate is a thought marked for removal and where it stands.
	RemovalCandidate = maintain.Candidate
	// MaintenanceConfig configures the removal lifecycle.
	MaintenanceConfig = maintain.Config
)

// IsArchiveName reports whether name is the name export_removals gives
// an archive.
func IsArchiveName(name string) bool { return maintain.IsArchiveName(name) }

// Maintenance runs maintenance_ops (see maintain.Ops.Run), with archive
// paths absolute.
func (e *Engine) Maintenance(ctx context.Context, req MaintenanceRequest) (MaintenanceResult, error) {
	return e.maint.Run(ctx, req)
}

// RemovalArchives lists the archives in the archive directory, the
// newest first.
func (e *Engine) RemovalArchives(ctx context.Context) ([]ArchiveEntry, error) {
	return e.maint.Archives()
}

// OpenRemovalArchive opens the archive named name (one RemovalArchives
// lists) for reading; the caller closes it. Any other name is not_found.
func (e *Engine) OpenRemovalArchive(ctx context.Context, name string) (*os.File, ArchiveEntry, error) {
	return e.maint.OpenArchive(name)
}
