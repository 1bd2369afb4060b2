package maintain

import (
	"context"
	"os"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Subcommands of maintenance_ops.
const (
	OpListRemovalCandidates = "list_removal_candidates"
	OpExportRemovals        = "export_removals"
	OpFinalizeRemoval       = "finalize_removal"
	OpMarkRemoval           = "mark_removal"
)

// Request is maintenance_ops' parameters, with the
// specification's names.
type Request struct {
	Subcommand string   `json:"subcommand" jsonschema:"list_removal_candidates, export_removals, finalize_removal or mark_removal"`
	DryRun     bool     `json:"dry_run,omitempty" jsonschema:"say what would be exported, finalized or marked, and write nothing"`
	Limit      int      `json:"limit,omitempty" jsonschema:"most thoughts to list, export or finalize, 1 to 10000; default 100"`
	Offset     int      `json:"offset,omitempty" jsonschema:"skip this many (paging, oldest mark first)"`
	Format     string   `json:"format,omitempty" jsonschema:"export_removals: parquet or jsonl; default SURR_ARCHIVE_FORMAT (parquet)"`
	OutputDir  string   `json:"output_dir,omitempty" jsonschema:"export_removals: a folder inside the archive directory (SURR_ARCHIVE_DIR) to write to"`
	All        bool     `json:"all,omitempty" jsonschema:"export_removals: export thoughts already exported too"`
	ThoughtIDs []string `json:"thought_ids,omitempty" jsonschema:"finalize_removal: only these thoughts, all or none; mark_removal: the thoughts to mark"`
}

// Result is maintenance_ops' answer: the part for its
// subcommand, and the lifecycle's settings.
type Result struct {
	Subcommand string `json:"subcommand"`
	// Candidates answers list_removal_candidates (absent for the others).
	Candidates *[]Candidate `json:"candidates,omitempty"`
	// Export answers export_removals; Finalize finalize_removal.
	Export   *ExportResult   `json:"export,omitempty"`
	Finalize *FinalizeResult `json:"finalize,omitempty"`
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
// server keeps its files. Ops.Run, for local programs and the CLI,
// keeps them absolute.
func (r Result) Relative(cfg Config) Result {
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

// ThoughtReader reads a thought by id.
type ThoughtReader interface {
	Thought(ctx context.Context, id string) (memory.Thought, error)
}

// Ops runs maintenance_ops and serves the archives of the removal
// lifecycle.
type Ops struct {
	// Life is the removal lifecycle; nil when the store keeps none, and
	// then every call is feature_disabled.
	Life *Lifecycle
	// Thoughts reads the thoughts mark_removal names.
	Thoughts ThoughtReader
	// Erase makes finalized thoughts leave the retrieval index's files.
	Erase func(ctx context.Context)
}

func (o *Ops) need() error {
	if o.Life == nil {
		return memory.Errorf(memory.CodeFeatureDisabled, "this store does not keep the removal lifecycle of thoughts")
	}
	return nil
}

// Run runs maintenance_ops, the removal lifecycle of thoughts: list the
// thoughts marked for removal with whether each may be finalized, export
// them to an archive (Parquet or JSON lines, in SURR_ARCHIVE_DIR),
// finalize (delete, erasing their text) those exported whose retention
// (SURR_RETENTION_DAYS since marking) has passed, or mark thoughts for
// removal.
func (o *Ops) Run(ctx context.Context, req Request) (Result, error) {
	res := Result{Subcommand: req.Subcommand, DryRun: req.DryRun}
	if err := o.need(); err != nil {
		return res, err
	}
	cfg := o.Life.Config
	res.RetentionDays, res.ArchiveDir, res.Format = cfg.RetentionDays, cfg.ArchiveDir, cfg.Format
	sub, err := req.check()
	if err != nil {
		return res, err
	}
	page := Page{Limit: req.Limit, Offset: req.Offset}
	switch sub {
	case OpListRemovalCandidates:
		list, err := o.Life.List(ctx, page)
		res.Candidates = &list.Candidates
		return res, err
	case OpExportRemovals:
		out, err := o.Life.Export(ctx, ExportOptions{Page: page, Format: req.Format, Subdir: req.OutputDir, All: req.All, DryRun: req.DryRun})
		if err != nil {
			return res, err
		}
		res.Export = &out
		if out.Archive != nil {
			res.Format = out.Archive.Format
		}
		return res, nil
	case OpFinalizeRemoval:
		out, err := o.Life.Finalize(ctx, FinalizeOptions{Page: page, ThoughtIDs: req.ThoughtIDs, DryRun: req.DryRun})
		if err != nil {
			return res, err
		}
		if len(out.Finalized) > 0 && !req.DryRun {
			o.Erase(ctx)
		}
		res.Finalize = &out
		return res, nil
	case OpMarkRemoval:
		n, err := o.mark(ctx, req)
		if err != nil {
			return res, err
		}
		res.Marked = &n
		return res, nil
	}
	return res, memory.Errorf(memory.CodeInvalidParams, "subcommand %q: want list_removal_candidates, export_removals, finalize_removal or mark_removal", req.Subcommand)
}

// check validates the thought ids and that each field given applies to
// the subcommand; it returns the subcommand, lower-cased.
func (req Request) check() (string, error) {
	if len(req.ThoughtIDs) > MaxLimit {
		return "", memory.Errorf(memory.CodeInvalidParams, "%d thought ids, over the limit of %d", len(req.ThoughtIDs), MaxLimit)
	}
	for _, id := range req.ThoughtIDs {
		if err := memory.ValidateRef("thought_ids[]", id, false); err != nil {
			return "", err
		}
	}
	sub := strings.ToLower(strings.TrimSpace(req.Subcommand))
	onlyFor := func(field string, set bool, ops ...string) error {
		if set && !slices.Contains(ops, sub) {
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
			return "", err
		}
	}
	return sub, nil
}

// mark runs mark_removal: every thought named must exist; a dry run
// counts those not marked yet.
func (o *Ops) mark(ctx context.Context, req Request) (int, error) {
	if len(req.ThoughtIDs) == 0 {
		return 0, memory.Errorf(memory.CodeInvalidParams, "mark_removal needs thought_ids")
	}
	for _, id := range req.ThoughtIDs {
		if _, err := o.Thoughts.Thought(ctx, id); err != nil {
			return 0, err
		}
	}
	if !req.DryRun {
		return o.Life.Store.MarkRemoval(ctx, req.ThoughtIDs, o.Life.Now().UnixMilli())
	}
	n := 0
	for _, id := range req.ThoughtIDs {
		if th, _ := o.Thoughts.Thought(ctx, id); th.Status != memory.StatusRemoval {
			n++
		}
	}
	return n, nil
}

// Archives lists the archives export_removals wrote to the archive
// directory (SURR_ARCHIVE_DIR; not its sub-folders), the newest first,
// for the web page. They stay after their thoughts are finalized: they
// are then the only copy.
func (o *Ops) Archives() ([]ArchiveEntry, error) {
	if err := o.need(); err != nil {
		return nil, err
	}
	return ListArchives(o.Life.Config.ArchiveDir)
}

// OpenArchive opens the archive named name (a file name that Archives
// lists) for reading; the caller closes it. Any other name is not_found.
func (o *Ops) OpenArchive(name string) (*os.File, ArchiveEntry, error) {
	if err := o.need(); err != nil {
		return nil, ArchiveEntry{}, err
	}
	return OpenArchive(o.Life.Config.ArchiveDir, name)
}
