package cairn

import (
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// SetHealHooks gives the healer of an engine opened with o a timer the
// test controls (after is called with each wait and returns the channel
// that ends it) and tells pass what every pass did.
func SetHealHooks(o *Options, after func(time.Duration) <-chan time.Time, pass func(HealPass)) {
	o.healAfter, o.healPass = after, pass
}

// SetScrubHooks gives the write-ahead log's scrubber of an engine opened
// with o a timer the test controls and tells pass what every pass found.
func SetScrubHooks(o *Options, after func(time.Duration) <-chan time.Time, pass func(pending bool, err error)) {
	o.scrubAfter, o.scrubPass = after, pass
}

// OpenWrapped opens the database at path as Open does, with the engine
// over the store wrap makes of it (a store that fails on purpose).
func OpenWrapped(path string, opts *Options, wrap func(*sqlite.DB) memory.Store) (*Engine, error) {
	return open(path, opts, wrap)
}
