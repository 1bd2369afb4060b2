package code

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// Phases of an index run, as IndexProgress reports them.
const (
	PhaseListing    = "listing"    // walking the root for source files
	PhaseReading    = "reading"    // reading and resolving the files that changed
	PhaseGating     = "gating"     // evaluating gates A, B and C for what was proposed
	PhaseCommitting = "committing" // writing a whole run's changes in one transaction
)

// IndexProgress is where an index run stands.
type IndexProgress struct {
	Phase string `json:"phase"`
	// FilesDone of FilesTotal source files were looked at (FilesTotal is 0
	// while the root is being listed).
	FilesDone  int `json:"files_done"`
	FilesTotal int `json:"files_total"`
	// Entities counts the symbols resolved in the files read so far;
	// Proposed those among them that are new or changed.
	Entities int `json:"entities"`
	Proposed int `json:"proposed"`
}

// advance reports the run's progress to its Step hook, if any.
func (sc *repoScan) advance(phase string, done, total int) {
	if sc.step == nil {
		return
	}
	sc.step(IndexProgress{Phase: phase, FilesDone: done, FilesTotal: total, Entities: sc.resolved, Proposed: sc.rep.Proposed})
}

// commitWhole ends a whole run (IndexRequest.Whole): it evaluates the
// gates for what the scan proposed, folds the promotions into the scan's
// change, and writes it all with the episode, its gate results and the
// repository's new indexed_at in one transaction. The scan's guards are
// on the entities as the run found them, so a writer that changed one
// meanwhile makes the whole run a conflict, with nothing written.
func (m *Memory) commitWhole(ctx context.Context, sc *repoScan, approval Approval, ep memory.Episode) error {
	change := sc.batch
	var gates []memory.GateResult
	if approval != ApprovalNone && len(sc.proposed) > 0 {
		sc.advance(PhaseGating, sc.rep.Files, sc.rep.Files)
		res, promoted, err := m.gate(memory.CodeRepo{ID: sc.repoID, Root: sc.root}, sc.proposed, approval, ep.ID)
		if err != nil {
			return err
		}
		foldPromotions(change, promoted)
		gates = res.Evaluated
		sc.rep.Promoted += res.Promoted
		sc.rep.Rejected += res.Rejected
	}
	if err := ctx.Err(); err != nil {
		return memory.Wrap(memory.CodeInvalidParams, err, "index interrupted before its changes were written; nothing was written")
	}
	sc.advance(PhaseCommitting, sc.rep.Files, sc.rep.Files)
	now := m.nowMs()
	change.Repo = &memory.CodeRepo{ID: sc.repoID, Root: sc.root, IndexedAt: now}
	ep.UpdatedAt = now
	_, err := m.store.ApplyEpisode(ctx, memory.EpisodeChange{Episode: ep, Gates: gates, Code: change})
	return err
}

// foldPromotions replaces, in a scan's change, the PROPOSED rows of the
// entities the gates promoted with their AUTHORITATIVE rows, and appends
// the promotions to the ledger after the proposals. The gates' guards
// (on the PROPOSED rows, not stored yet) are dropped: the scan's guard on
// each entity covers it.
func foldPromotions(change, promoted *memory.CodeChange) {
	at := make(map[string]int, len(change.Entities))
	for i, e := range change.Entities {
		at[e.Key] = i
	}
	for _, e := range promoted.Entities {
		if i, ok := at[e.Key]; ok {
			change.Entities[i] = e
		} else {
			change.Entities = append(change.Entities, e)
		}
	}
	change.Transitions = append(change.Transitions, promoted.Transitions...)
}
