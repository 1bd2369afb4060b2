package sqlstore

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// ImportSummary writes an imported summary: a capsule that has one, or a
// summary id that is taken, is a conflict.
func (s *Store) ImportSummary(ctx context.Context, q Querier, m memory.Summary) error {
	ok, err := Exists(ctx, q, "SELECT 1 FROM summaries WHERE capsule_id = ?", m.CapsuleID)
	if err != nil {
		return err
	}
	if ok {
		return memory.Errorf(memory.CodeConflict, "summary %q: capsule %q already has a summary", m.ID, m.CapsuleID)
	}
	if ok, err := Exists(ctx, q, "SELECT 1 FROM summaries WHERE id = ?", m.ID); err != nil || ok {
		if ok {
			return memory.Errorf(memory.CodeConflict, "summary id %q already exists", m.ID)
		}
		return err
	}
	_, err = s.putSummary(ctx, q, m)
	return err
}

// ImportPin writes an imported pin; its target must exist.
func (s *Store) ImportPin(ctx context.Context, q Querier, p memory.Pin) error {
	if _, err := PinTarget(ctx, q, p.TargetType, p.TargetID); err != nil {
		if memory.IsCode(err, memory.CodeNotFound) {
			return memory.Errorf(memory.CodeNotFound, "pin %q points at %s %q, which does not exist", p.ID, p.TargetType, p.TargetID)
		}
		return err
	}
	return s.InsertPin(ctx, q, p)
}
