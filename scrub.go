package cairn

import (
	"context"
	"time"
)

// walScrubInterval is how often a long-running process looks for a
// write-ahead log that a forget left marked for a scrub.
const walScrubInterval = 5 * time.Second

// walScrubber is the store's seam for a write-ahead log that still holds
// forgotten text (SQLite: another connection's read held it during the
// forget). ScrubWAL tries again and reports whether it is still pending.
type walScrubber interface {
	ScrubWAL(ctx context.Context) (pending bool, err error)
}

// scrubber calls the store's ScrubWAL every walScrubInterval, in a
// goroutine the engine owns, so the log is scrubbed soon after the reader
// ends even when nothing is written.
type scrubber struct {
	store  walScrubber
	after  func(time.Duration) <-chan time.Time
	onPass func(pending bool, err error)
	cancel context.CancelFunc
	done   chan struct{}
}

// startScrubber starts the scrubber when the store has a log to scrub.
func (e *Engine) startScrubber(o Options) {
	ws, ok := e.store.(walScrubber)
	if !ok {
		return
	}
	s := &scrubber{store: ws, after: o.scrubAfter, onPass: o.scrubPass, done: make(chan struct{})}
	if s.after == nil {
		s.after = time.After
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	e.scrub = s
	go s.run(ctx)
}

func (s *scrubber) run(ctx context.Context) {
	defer close(s.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.after(walScrubInterval):
		}
		pending, err := s.store.ScrubWAL(ctx)
		if s.onPass != nil {
			s.onPass(pending, err)
		}
	}
}

// stop ends the scrubber and waits for it.
func (s *scrubber) stop() {
	s.cancel()
	<-s.done
}
