package maintain

import (
	"context"
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"log/slog"
	"slices"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// Limits of one maintenance call.
const (
	DefaultLimit = 100
	MaxLimit     = 10000
	dayMs        = int64(24 * time.Hour / time.Millisecond)
)

// Lifecycle lists, exports and finalizes thoughts marked for removal.
type Lifecycle struct {
	Store  memory.RemovalStore
	Config Config
	// Now is the clock.
	Now func() time.Time
	// Logger gets one line per export and finalize (ids and counts, never
	// text).
	Logger *slog.Logger
}

// Candidate is a thought marked for removal and where it stands.
type Candidate struct {
	ThoughtID string `json:"thought_id"`
	// Excerpt is the start of its text (at most 160 characters).
	Excerpt string `json:"excerpt"`
	// MarkedAt, ExportedAt and EligibleAt are RFC 3339 times ("" when
	// unknown or not yet).
	MarkedAt   string `json:"marked_at,omitempty"`
	ExportedAt string `json:"exported_at,omitempty"`
	Archive    string `json:"archive,omitempty"`
	// EligibleAt is when the retention period ends: the mark time (the
	// export time when the mark time is unknown) plus the retention.
	EligibleAt string `json:"eligible_at,omitempty"`
	// Finalizable says finalize_removal would delete it now; Reason says
	// why not otherwise.
	Finalizable bool   `json:"finalizable"`
	Reason      string `json:"reason,omitempty"`
}

// Page selects a page of thoughts marked for removal.
type Page struct {
	// Limit is 1 to MaxLimit (default DefaultLimit); Offset skips that many.
	Limit, Offset int
}

// ListResult is a page of thoughts marked for removal.
type ListResult struct {
	Candidates    []Candidate `json:"candidates"`
	RetentionDays int         `json:"retention_days"`
}

func (p Page) limit() (int, error) {
	if p.Limit < 0 || p.Limit > MaxLimit || p.Offset < 0 {
		return 0, memory.Errorf(memory.CodeInvalidParams, "limit %d / offset %d: limit is 1 to %d, offset at least 0", p.Limit, p.Offset, MaxLimit)
	}
	if p.Limit == 0 {
		return DefaultLimit, nil
	}
	return p.Limit, nil
}

func (l *Lifecycle) nowMs() int64 { return l.Now().UnixMilli() }

func rfc3339(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

// status says whether r may be finalized at now and why not; sums holds
// the archives' checksums computed so far in this call.
func (l *Lifecycle) status(r memory.Removal, now int64, sums fileSums) Candidate {
	c := Candidate{ThoughtID: r.Thought.ID, Excerpt: text.Excerpt(r.Thought.Content, 160), MarkedAt: rfc3339(r.MarkedAt),
		ExportedAt: rfc3339(r.ExportedAt), Archive: r.Archive}
	from := r.MarkedAt
	if from == 0 {
		from = r.ExportedAt
	}
	retention := int64(l.Config.RetentionDays) * dayMs
	if from > 0 {
		c.EligibleAt = rfc3339(from + retention)
	}
	switch {
	case r.ExportedAt == 0:
		c.Reason = "not exported yet: run export_removals first"
	case !sums.intact(r):
		c.Reason = fmt.Sprintf("its archive %s is missing or changed since the export: run export_removals again", l.Config.Rel(r.Archive))
	case now < from+retention:
		c.Reason = fmt.Sprintf("within the retention period of %d days: eligible at %s", l.Config.RetentionDays, c.EligibleAt)
	default:
		c.Finalizable = true
	}
	return c
}

// fileSums are archives' checksums by path, computed once per call: the
// thoughts of one export share its file.
type fileSums map[string]string

// intact reports whether r's recorded archive still exists with the
// checksum it had when it was written.
func (s fileSums) intact(r memory.Removal) bool {
	if r.Archive == "" {
		return false
	}
	sum, ok := s[r.Archive]
	if !ok {
		var err error
		if sum, err = FileSHA256(r.Archive); err != nil {
			sum = ""
		}
		s[r.Archive] = sum
	}
	return sum != "" && sum == r.ArchiveSHA256
}

// List lists thoughts marked for removal, the earliest marked first, with
// whether each may be finalized now.
func (l *Lifecycle) List(ctx context.Context, p Page) (ListResult, error) {
	limit, err := p.limit()
	if err != nil {
		return ListResult{}, err
	}
	rs, err := l.Store.Removals(ctx, p.Offset, limit)
	if err != nil {
		return ListResult{}, err
	}
	out := ListResult{Candidates: []Candidate{}, RetentionDays: l.Config.RetentionDays}
	now, sums := l.nowMs(), fileSums{}
	for _, r := range rs {
		out.Candidates = append(out.Candidates, l.status(r, now, sums))
	}
	return out, nil
}

// ExportOptions choose what export_removals writes.
type ExportOptions struct {
	Page
	// Format overrides the configured format ("" keeps it).
	Format string
	// Subdir, when set, is a folder inside the archive directory to
	// write to.
	Subdir string
	// All exports thoughts already exported too (by default only those
	// never exported, or whose archive is missing or changed).
	All bool
	// DryRun says what would be written, and writes nothing.
	DryRun bool
}

// ExportResult reports an export.
type ExportResult struct {
	// Archive is the file written (absent when nothing was to export or on
	// a dry run).
	Archive *ArchiveFile `json:"archive,omitempty"`
	// ThoughtIDs are the thoughts in it (or that would be).
	ThoughtIDs []string `json:"thought_ids"`
	Exported   int      `json:"exported"`
	DryRun     bool     `json:"dry_run,omitempty"`
}

// Export writes the marked thoughts to a new archive file and records it.
func (l *Lifecycle) Export(ctx context.Context, o ExportOptions) (ExportResult, error) {
	limit, err := o.limit()
	if err != nil {
		return ExportResult{}, err
	}
	format := l.Config.Format
	if o.Format != "" {
		if format, err = ParseFormat(o.Format); err != nil {
			return ExportResult{}, err
		}
	}
	parts, err := l.outputParts(o.Subdir)
	if err != nil {
		return ExportResult{}, err
	}
	if _, err := l.outputDir(o.Subdir, parts, false); err != nil {
		return ExportResult{}, err
	}
	var pick []memory.Removal
	sums := fileSums{}
	for offset := o.Offset; len(pick) < limit; {
		rs, err := l.Store.Removals(ctx, offset, DefaultLimit)
		if err != nil {
			return ExportResult{}, err
		}
		for _, r := range rs {
			if len(pick) < limit && (o.All || r.ExportedAt == 0 || !sums.intact(r)) {
				pick = append(pick, r)
			}
		}
		if len(rs) < DefaultLimit {
			break
		}
		offset += len(rs)
	}
	res := ExportResult{ThoughtIDs: []string{}, DryRun: o.DryRun}
	for _, r := range pick {
		res.ThoughtIDs = append(res.ThoughtIDs, r.Thought.ID)
	}
	if len(pick) == 0 || o.DryRun {
		return res, nil
	}
	dir, err := l.outputDir(o.Subdir, parts, true)
	if err != nil {
		return ExportResult{}, err
	}
	now := l.Now()
	removeStaleTemps(dir, now)
	rows := make([]ArchivedThought, len(pick))
	for i, r := range pick {
		rows[i] = Archived(r, now.UnixMilli())
	}
	f, err := WriteArchive(dir, format, now, rows)
	if err != nil {
		return ExportResult{}, err
	}
	n, err := l.Store.RecordExport(ctx, res.ThoughtIDs, f.Path, f.SHA256, now.UnixMilli())
	if err != nil {
		// The file stays: the thoughts are still marked and unexported,
		// so the next export writes them again.
		return ExportResult{}, err
	}
	crashPoint("export-recorded")
	res.Archive, res.Exported = &f, n
	if l.Logger != nil {
		l.Logger.Info("exported thoughts marked for removal", "archive", f.Path, "rows", f.Rows, "recorded", n)
	}
	return res, nil
}

// FinalizeOptions choose what finalize_removal deletes.
type FinalizeOptions struct {
	Page
	// ThoughtIDs, when set, names the thoughts to finalize: each must be
	// finalizable, or nothing is deleted (conflict, saying why).
	ThoughtIDs []string
	// DryRun says what would be deleted, and deletes nothing.
	DryRun bool
}

// Refusal is a thought finalize left alone, and why.
type Refusal struct {
	ThoughtID string `json:"thought_id"`
	Reason    string `json:"reason"`
}

// FinalizeResult reports a finalize.
type FinalizeResult struct {
	// Finalized are the thoughts deleted (or that would be, on a dry run).
	Finalized []string  `json:"finalized"`
	Refused   []Refusal `json:"refused"`
	DryRun    bool      `json:"dry_run,omitempty"`
}

// Finalize deletes marked thoughts that were exported to an archive that
// is still intact and whose retention period has passed; it refuses the
// others, saying why.
func (l *Lifecycle) Finalize(ctx context.Context, o FinalizeOptions) (FinalizeResult, error) {
	limit, err := o.limit()
	if err != nil {
		return FinalizeResult{}, err
	}
	now, sums := l.nowMs(), fileSums{}
	res := FinalizeResult{Finalized: []string{}, Refused: []Refusal{}, DryRun: o.DryRun}
	var eligible []string
	if len(o.ThoughtIDs) > 0 {
		if len(o.ThoughtIDs) > MaxLimit {
			return res, memory.Errorf(memory.CodeInvalidParams, "%d thought ids, over the limit of %d", len(o.ThoughtIDs), MaxLimit)
		}
		marked := map[string]memory.Removal{}
		for offset := 0; ; {
			rs, err := l.Store.Removals(ctx, offset, MaxLimit)
			if err != nil {
				return res, err
			}
			for _, r := range rs {
				if slices.Contains(o.ThoughtIDs, r.Thought.ID) {
					marked[r.Thought.ID] = r
				}
			}
			if len(rs) < MaxLimit {
				break
			}
			offset += len(rs)
		}
		for _, id := range o.ThoughtIDs {
			r, ok := marked[id]
			if !ok {
				return res, memory.Errorf(memory.CodeNotFound, "thought %s is not marked for removal (or does not exist)", id)
			}
			if c := l.status(r, now, sums); !c.Finalizable {
				return res, memory.Errorf(memory.CodeConflict, "thought %s cannot be finalized: %s; nothing was deleted", id, c.Reason)
			}
			if !slices.Contains(eligible, id) {
				eligible = append(eligible, id)
			}
		}
	} else {
		rs, err := l.Store.Removals(ctx, o.Offset, limit)
		if err != nil {
			return res, err
		}
		for _, r := range rs {
			if c := l.status(r, now, sums); c.Finalizable {
				eligible = append(eligible, r.Thought.ID)
			} else {
				res.Refused = append(res.Refused, Refusal{ThoughtID: r.Thought.ID, Reason: c.Reason})
			}
		}
	}
	if o.DryRun || len(eligible) == 0 {
		res.Finalized = append(res.Finalized, eligible...)
		return res, nil
	}
	crashPoint("finalize-before-delete")
	cutoff := now - int64(l.Config.RetentionDays)*dayMs
	done, err := l.Store.FinalizeRemoval(ctx, eligible, cutoff)
	if err != nil {
		return res, err
	}
	res.Finalized = done
	for _, id := range eligible {
		if !slices.Contains(done, id) {
			res.Refused = append(res.Refused, Refusal{ThoughtID: id, Reason: "changed while finalizing (marked active again, or finalized by another process)"})
		}
	}
	if l.Logger != nil {
		l.Logger.Info("finalized thoughts marked for removal", "deleted", len(done), "refused", len(res.Refused))
	}
	return res, nil
}
