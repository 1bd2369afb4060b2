package cairn

import (
	"context"

	"github.com/cairnhq/cairn/heal"
	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/memory"
)

// Healing: a long-running process embeds pending records in the
// background (package heal); see Options.HealEmbeddings.

type (
	// HealPass is what one pass of the background healer did.
	HealPass = heal.Pass
	// HealStatus is what the background healer did since the engine
	// opened.
	HealStatus = heal.Status
)

// DefaultHealInterval is how often the healer looks for pending records
// while the embedder answers.
const DefaultHealInterval = heal.DefaultInterval

// startHealer starts the background healer: a first pass now, then one
// every interval.
func (e *Engine) startHealer(o Options) {
	e.heal = heal.Start(healSource{e}, heal.Options{Interval: o.HealInterval, Batch: embedBatch, After: o.healAfter, OnPass: o.healPass, Logger: e.log})
}

// healSource is the engine as the healer reads it.
type healSource struct{ e *Engine }

func (s healSource) Pending(ctx context.Context, limit int) ([]memory.EmbedJob, int, error) {
	return s.e.pendingJobs(ctx, limit)
}

func (s healSource) Embed(ctx context.Context, jobs []memory.EmbedJob) (int, error) {
	return s.e.embedRecords(ctx, jobs)
}

// embeddedKinds are the kinds of record that have vectors.
var embeddedKinds = []memory.VectorKind{memory.VectorObservation, memory.VectorSummary, memory.VectorThought,
	memory.VectorKGEntity, memory.VectorKGObservation, memory.VectorKGEdge, memory.VectorCodeEntity}

// pendingJobs returns up to limit records without a vector of the active
// space, with the text to embed, and how many there are in all. The
// retrieval index knows which records have a vector, so finding none
// pending costs no scan of the database.
func (e *Engine) pendingJobs(ctx context.Context, limit int) ([]memory.EmbedJob, int, error) {
	var jobs []memory.EmbedJob
	pending := 0
	err := e.store.Snapshot(ctx, func(r memory.Reader) error {
		if err := e.index.Sync(ctx, r); err != nil {
			return err
		}
		ids := map[memory.VectorKind][]string{}
		list := func(v *index.View) error {
			n := 0
			pending = 0 // a retry after a repair starts over
			clear(ids)
			for _, kind := range embeddedKinds {
				alive, _, vec, _ := v.Counts(kind)
				pending += alive - vec
				if alive == vec || n >= limit {
					continue
				}
				v.Each(kind, func(doc uint32) {
					if n < limit && !v.HasVector(doc) {
						ids[kind] = append(ids[kind], v.ID(doc))
						n++
					}
				})
			}
			return nil
		}
		err := e.index.Read(list)
		if index.IsCorrupt(err) {
			if err := e.index.Repair(ctx, r); err != nil {
				return err
			}
			err = e.index.Read(list)
		}
		if err != nil {
			return err
		}
		for _, kind := range embeddedKinds {
			if len(ids[kind]) == 0 {
				continue
			}
			recs, err := r.Records(ctx, kind, ids[kind])
			if err != nil {
				return err
			}
			for _, rec := range recs {
				if !rec.Gone {
					jobs = append(jobs, memory.EmbedJob{Kind: kind, ID: rec.ID, Content: rec.Content})
				}
			}
		}
		return nil
	})
	return jobs, pending, err
}

// Healing reports what the background embedding of pending records did
// since the engine opened (Enabled false when it does not run).
func (e *Engine) Healing() HealStatus {
	if e.heal == nil {
		return HealStatus{}
	}
	return e.heal.Status()
}
