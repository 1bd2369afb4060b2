package cairn

import (
	"context"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
)

// Subcommands of maintenance_ops.
const (
	OpListRemovalCandidates = "list_removal_candidates"
	OpExportRemovals        = "export_removals"
	OpFinalizeRemoval       = "finalize_removal"
	OpMarkRemoval           = "mark_removal"
)

// MaintenanceRequest is maintenance_ops' parameters, with the
// specification's names.
type MaintenanceRequest struct {
	Subcommand string   `json:"subcommand" jsonschema:"list_removal_candidates, export_removals, finalize_removal or mark_removal"`
	DryRun     bool     `json:"dry_run,omitempty" jsonschema:"say what would be exported, finalized or marked, and write nothing"`
	Limit      int      `json:"limit,omitempty" jsonschema:"most thoughts to list, export or finalize, 1 to 10000; default 100"`
	Offset     int      `json:"offset,omitempty" jsonschema:"skip this many (paging, oldest mark first)"`
	Format     string   `json:"format,omitempty" jsonschema:"export_removals: parquet or jsonl; default SURR_ARCHIVE_FORMAT (parquet)"`
	OutputDir  string   `json:"output_dir,omitempty" jsonschema:"export_removals: a folder inside the archive directory (SURR_ARCHIVE_DIR) to write to"`
	All        bool     `json:"all,omitempty" jsonschema:"export_removals: export thoughts already exported too"`
	ThoughtIDs []string `json:"thought_ids,omitempty" jsonschema:"finalize_removal: only these thoughts, all or none; mark_removal: the thoughts to mark"`
}

// MaintenanceResult is maintenance_ops' answer: the part for its
// subcommand, and the lifecycle's settings.
type MaintenanceResult struct {
	Subcommand string `json:"subcommand"`
	// Candidates answers list_removal_candidates (absent for the others).
	Candidates *[]maintain.Candidate `json:"candidates,omitempty"`
	// Export answers export_removals; Finalize finalize_removal.
	Export   *maintain.ExportResult   `json:"export,omitempty"`
	Finalize *maintain.FinalizeResult `json:"finalize,omitempty"`
	// Marked answers mark_removal: how many thoughts changed status.
	Marked        *int `json:"marked,omitempty"`
	RetentionDays int  `json:"retention_days"`
	// ArchiveDir is the archive directory, absolute; the tool's faces
	// (MCP, HTTP, cairn call) leave it out and give every archive path
	// relative to it (see Relative).
	ArchiveDir string `json:"archive_dir,omitempty"`
	Format     string `json:"format"`
	DryRun     bool   `json:"dry_run,omitempty"`
}

// Relative is the result as the tool's faces give it: every archive path
// relative to the archive directory (a file outside it by its name alone)
// and the directory itself left out, so a caller never learns where the
// server keeps its files. Engine.Maintenance, for local programs and the
// CLI, keeps them absolute.
func (r MaintenanceResult) Relative(cfg maintain.Config) MaintenanceResult {
	r.ArchiveDir = ""
	if r.Export != nil && r.Export.Archive != nil {
		exp, f := *r.Export, *r.Export.Archive
		f.Path = cfg.Rel(f.Path)
		exp.Archive = &f
		r.Export = &exp
	}
	if r.Candidates != nil {
		cs := slices.Clone(*r.Candidates)
		for i := range cs {
			cs[i].Archive = cfg.Rel(cs[i].Archive)
		}
		r.Candidates = &cs
	}
	return r
}

// Maintenance runs maintenance_ops, the removal lifecycle of thoughts:
// list the thoughts marked for removal with whether each may be
// finalized, export them to an archive (Parquet or JSON lines, in
// SURR_ARCHIVE_DIR), finalize (delete, erasing their text) those exported
// whose retention (SURR_RETENTION_DAYS since marking) has passed, or mark
// thoughts for removal.
func (e *Engine) Maintenance(ctx context.Context, req MaintenanceRequest) (MaintenanceResult, error) {
	res := MaintenanceResult{Subcommand: req.Subcommand, DryRun: req.DryRun}
	if e.life == nil {
		return res, memory.Errorf(memory.CodeFeatureDisabled, "this store does not keep the removal lifecycle of thoughts")
	}
	cfg := e.life.Config
	res.RetentionDays, res.ArchiveDir, res.Format = cfg.RetentionDays, cfg.ArchiveDir, cfg.Format
	page := maintain.Page{Limit: req.Limit, Offset: req.Offset}
	if len(req.ThoughtIDs) > maintain.MaxLimit {
		return res, memory.Errorf(memory.CodeInvalidParams, "%d thought ids, over the limit of %d", len(req.ThoughtIDs), maintain.MaxLimit)
	}
	for _, id := range req.ThoughtIDs {
		if err := memory.ValidateRef("thought_ids[]", id, false); err != nil {
			return res, err
		}
	}
	sub := strings.ToLower(strings.TrimSpace(req.Subcommand))
	onlyFor := func(field string, set bool, ops ...string) error {
		for _, op := range ops {
			if sub == op {
				return nil
			}
		}
		if set {
			return memory.Errorf(memory.CodeInvalidParams, "%s does not apply to %s", field, req.Subcommand)
		}
		return nil
	}
	for _, err := range []error{
		onlyFor("format", req.Format != "", OpExportRemovals),
		onlyFor("output_dir", req.OutputDir != "", OpExportRemovals),
		onlyFor("all", req.All, OpExportRemovals),
		onlyFor("thought_ids", len(req.ThoughtIDs) > 0, OpFinalizeRemoval, OpMarkRemoval),
	} {
		if err != nil {
			return res, err
		}
	}
	switch sub {
	case OpListRemovalCandidates:
		list, err := e.life.List(ctx, page)
		res.Candidates = &list.Candidates
		return res, err
	case OpExportRemovals:
		out, err := e.life.Export(ctx, maintain.ExportOptions{Page: page, Format: req.Format, Subdir: req.OutputDir, All: req.All, DryRun: req.DryRun})
		if err != nil {
			return res, err
		}
		res.Export = &out
		if out.Archive != nil {
			res.Format = out.Archive.Format
		}
		return res, nil
	case OpFinalizeRemoval:
		out, err := e.life.Finalize(ctx, maintain.FinalizeOptions{Page: page, ThoughtIDs: req.ThoughtIDs, DryRun: req.DryRun})
		if err != nil {
			return res, err
		}
		if len(out.Finalized) > 0 && !req.DryRun {
			e.eraseFromIndex(ctx)
		}
		res.Finalize = &out
		return res, nil
	case OpMarkRemoval:
		if len(req.ThoughtIDs) == 0 {
			return res, memory.Errorf(memory.CodeInvalidParams, "mark_removal needs thought_ids")
		}
		for _, id := range req.ThoughtIDs {
			if _, err := e.store.Thought(ctx, id); err != nil {
				return res, err
			}
		}
		n := 0
		if req.DryRun {
			for _, id := range req.ThoughtIDs {
				if th, _ := e.store.Thought(ctx, id); th.Status != memory.StatusRemoval {
					n++
				}
			}
		} else {
			var err error
			if n, err = e.removals.MarkRemoval(ctx, req.ThoughtIDs, e.nowMs()); err != nil {
				return res, err
			}
		}
		res.Marked = &n
		return res, nil
	}
	return res, memory.Errorf(memory.CodeInvalidParams, "subcommand %q: want list_removal_candidates, export_removals, finalize_removal or mark_removal", req.Subcommand)
}
