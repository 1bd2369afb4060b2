package heal

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// Healing's pace.
const (
	// DefaultInterval is how often the healer looks for pending records
	// while the embedder answers.
	DefaultInterval = time.Minute
	// backoffMin is the first wait after a failed pass; each further
	// failure doubles it, up to backoffMax.
	backoffMin = 5 * time.Second
	backoffMax = 10 * time.Minute
	// scan is how many pending records a pass reads at a time.
	scan = 512
)

// Backoff is the wait after the failures-th failed pass in a row (0: the
// pass succeeded, wait interval).
func Backoff(failures int, interval time.Duration) time.Duration {
	if failures == 0 {
		return interval
	}
	d := backoffMin
	for i := 1; i < failures && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// Source is where the healer finds pending records and has them embedded.
type Source interface {
	// Pending returns up to limit records without a vector of the active
	// space, with the text to embed, and how many there are in all.
	Pending(ctx context.Context, limit int) ([]memory.EmbedJob, int, error)
	// Embed embeds records and stores the vectors of those still waiting
	// for one; it returns how many it stored.
	Embed(ctx context.Context, jobs []memory.EmbedJob) (int, error)
}

// Pass is what one pass of the healer did.
type Pass struct {
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

// Status is what the healer did since it started.
type Status struct {
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

// Options tune a healer.
type Options struct {
	// Interval is the wait between passes (0: DefaultInterval).
	Interval time.Duration
	// Batch is how many records go to Embed at once.
	Batch int
	// After replaces the timer and OnPass observes each pass (tests).
	After  func(time.Duration) <-chan time.Time
	OnPass func(Pass)
	Logger *slog.Logger
}

// Healer embeds pending records in a goroutine of its own.
type Healer struct {
	src    Source
	o      Options
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	status Status
}

// Start starts a healer: a first pass now, then one every interval.
func Start(src Source, o Options) *Healer {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Batch <= 0 {
		o.Batch = 64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Healer{src: src, o: o, done: make(chan struct{})}
	h.status.Enabled = true
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.run(ctx)
	return h
}

// Stop ends the healer and waits for it: a pass under way is abandoned,
// what it stored is kept.
func (h *Healer) Stop() {
	h.cancel()
	<-h.done
}

// Status reports what the healer did since it started.
func (h *Healer) Status() Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status
}

func (h *Healer) run(ctx context.Context) {
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
		p.Next = Backoff(failures, h.o.Interval)
		h.report(p, failures)
		select {
		case <-ctx.Done():
			return
		case <-h.o.After(p.Next):
		}
	}
}

// report records a pass, logs what matters and tells the test hook.
func (h *Healer) report(p Pass, failures int) {
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
	log := h.o.Logger
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
	if h.o.OnPass != nil {
		h.o.OnPass(p)
	}
}

// pass embeds pending records until none is left, the embedder or the
// store fails, or another process turns out to be embedding the same ones.
func (h *Healer) pass(ctx context.Context) Pass {
	var p Pass
	for ctx.Err() == nil {
		jobs, pending, err := h.src.Pending(ctx, scan)
		p.Pending = pending
		if err != nil || len(jobs) == 0 {
			p.Err = err
			return p
		}
		for i := 0; i < len(jobs); i += h.o.Batch {
			batch := jobs[i:min(i+h.o.Batch, len(jobs))]
			n, err := h.src.Embed(ctx, batch)
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
				if _, left, err := h.src.Pending(ctx, 0); err == nil {
					p.Pending = left
				}
				return p
			}
		}
	}
	return p
}
