package cairn

import "time"

// SetHealHooks gives the healer of an engine opened with o a timer the
// test controls (after is called with each wait and returns the channel
// that ends it) and tells pass what every pass did.
func SetHealHooks(o *Options, after func(time.Duration) <-chan time.Time, pass func(HealPass)) {
	o.healAfter, o.healPass = after, pass
}
