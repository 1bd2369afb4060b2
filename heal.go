package cairn

import (
	"context"
	"sync"
	"time"

	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/memory"
)

// Healing: a record whose embedding failed (the embedder was down) or was
// interrupted (the process was killed between storing the record and its
// vector) waits, pending, for a vector. A long-running process embeds such
// records in the background; see Options.HealEmbeddings.

// Healing's pace.
const (
	// DefaultHealInterval is how often the healer looks for pending
	// records while the embedder answers.
	DefaultHealInterval = time.Minute
	// healBackoffMin is the first wait after a failed pass; each further
	// failure doubles it, up to healBackoffMax.
	healBackoffMin = 5 * time.Second
	healBackoffMax = 10 * time.Minute
	// healScan is how many pending records a pass reads at a time; they
	// are embedded and stored embedBatch at a time.
	healScan = 512
)

// healBackoff is the wait after the failures-th failed pass in a row (0:
// the pass succeeded, wait interval).
func healBackoff(failures int, interval time.Duration) time.Duration {
	if failures == 0 {
		return interval
	}
	d := healBackoffMin
	for i := 1; i < failures && d < healBackoffMax; i++ {
		d *= 2
	}
	return min(d, healBackoffMax)
}

// HealPass is what one pass of the background healer did.
type HealPass struct {
	// Healed counts the vectors this pass stored.
	Healed int
	// Pending counts the records still without a vector of the active
	// space when the pass ended.
	Pending int
	// Yielded says another process stored vectors of records this pass
	// was embedding: it left the rest to that process until its next pass.
	Yielded bool
	// Err is why the pass stopped early (the embedder or the store
	// failed); the records it did not reach stay pending.
	Err error
	// Next is how long the healer waits before its next pass: the
	// interval, or a backoff that doubles with each failed pass in a row.
	Next time.Duration
}

// HealStatus is what the background healer did since the engine opened.
type HealStatus struct {
	// Enabled says this engine heals (Options.HealEmbeddings).
	Enabled bool `json:"enabled"`
	// Healed counts the vectors it stored; Passes its passes; Failures
	// the passes that failed.
	Healed   int64 `json:"healed"`
	Passes   int64 `json:"passes"`
	Failures int64 `json:"failures"`
	// Pending is how many records waited for a vector after the last pass.
	Pending int `json:"pending"`
	// LastError says why the last pass failed ("" when it succeeded).
	LastError string `json:"lastError,omitempty"`
}

// healer embeds pending records in a goroutine the engine owns.
type healer struct {
	e        *Engine
	interval time.Duration
	after    func(time.Duration) <-chan time.Time
	onPass   func(HealPass)
	cancel   context.CancelFunc
	done     chan struct{}

	mu     sync.Mutex
	status HealStatus
}

// startHealer starts the background healer: a first pass now, then one
// every interval.
func (e *Engine) startHealer(o Options) {
	h := &healer{e: e, interval: o.HealInterval, after: o.healAfter, onPass: o.healPass, done: make(chan struct{})}
	if h.interval <= 0 {
		h.interval = DefaultHealInterval
	}
	if h.after == nil {
		h.after = time.After
	}
	h.status.Enabled = true
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	e.heal = h
	go h.run(ctx)
}

// stop ends the healer and waits for it: a pass under way is abandoned,
// what it stored is kept.
func (h *healer) stop() {
	h.cancel()
	<-h.done
}

func (h *healer) run(ctx context.Context) {
	defer close(h.done)
	failures := 0
	for {
		p := h.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		if p.Err != nil {
			failures++
		} else {
			failures = 0
		}
		p.Next = healBackoff(failures, h.interval)
		h.report(p, failures)
		select {
		case <-ctx.Done():
			return
		case <-h.after(p.Next):
		}
	}
}

// report records a pass, logs what matters and tells the test hook.
func (h *healer) report(p HealPass, failures int) {
	h.mu.Lock()
	h.status.Passes++
	h.status.Healed += int64(p.Healed)
	h.status.Pending = p.Pending
	h.status.LastError = ""
	if p.Err != nil {
		h.status.Failures++
		h.status.LastError = memory.Public(p.Err).Message
	}
	h.mu.Unlock()
	log := h.e.log
	if p.Healed > 0 {
		log.Info("embedded pending records in the background", "records", p.Healed, "pending", p.Pending)
	}
	switch {
	case p.Err != nil && failures == 1:
		log.Warn("background embedding of pending records failed; retrying with backoff",
			"pending", p.Pending, "retry_in", p.Next.String(), "err", memory.Public(p.Err).Message)
	case p.Err != nil:
		log.Debug("background embedding failed again", "failures", failures, "retry_in", p.Next.String(), "err", memory.Public(p.Err).Message)
	}
	if h.onPass != nil {
		h.onPass(p)
	}
}

// pass embeds pending records until none is left, the embedder or the
// store fails, or another process turns out to be embedding the same ones.
func (h *healer) pass(ctx context.Context) HealPass {
	var p HealPass
	for ctx.Err() == nil {
		jobs, pending, err := h.e.pendingJobs(ctx, healScan)
		p.Pending = pending
		if err != nil || len(jobs) == 0 {
			p.Err = err
			return p
		}
		for i := 0; i < len(jobs); i += embedBatch {
			batch := jobs[i:min(i+embedBatch, len(jobs))]
			n, err := h.e.embedRecords(ctx, batch)
			p.Healed += n
			p.Pending -= n
			if err != nil {
				p.Err = err
				return p
			}
			if n < len(batch) {
				// Someone stored some of these first: rather than
				// embed the same records in step with it, leave them.
				p.Yielded = true
				if _, left, err := h.e.pendingJobs(ctx, 0); err == nil {
					p.Pending = left
				}
				return p
			}
		}
	}
	return p
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
	e.heal.mu.Lock()
	defer e.heal.mu.Unlock()
	return e.heal.status
}
