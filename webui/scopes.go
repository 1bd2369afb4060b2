package webui

import (
	"context"
	"sync"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// scopeTTL is how long the scope pickers' values are reused before they
// are read again (in the background, the page answering meanwhile with
// the values it has).
const scopeTTL = 30 * time.Second

// scopeCache keeps the scope values in use for the pickers: reading them
// scans every record, too slow to do for every page of a large memory.
type scopeCache struct {
	mu         sync.Mutex
	vals       memory.ScopeValues
	at         time.Time
	refreshing bool
}

// scopes returns the scope values for the pickers: read now the first
// time, then at most scopeTTL old, refreshed in the background.
func (u *UI) scopes(ctx context.Context) memory.ScopeValues {
	c := &u.scopeCache
	c.mu.Lock()
	if c.at.IsZero() {
		c.mu.Unlock()
		return u.readScopes(ctx)
	}
	vals := c.vals
	if time.Since(c.at) > scopeTTL && !c.refreshing {
		c.refreshing = true
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), u.opts.RequestTimeout)
			defer cancel()
			u.readScopes(ctx)
		}()
	}
	c.mu.Unlock()
	return vals
}

func (u *UI) readScopes(ctx context.Context) memory.ScopeValues {
	v, err := u.eng.ScopeValues(ctx)
	c := &u.scopeCache
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshing = false
	if err != nil {
		u.opts.Logger.Warn("reading the scope values for the pickers failed", "code", string(memory.CodeOf(err)))
		return c.vals
	}
	c.vals, c.at = v, time.Now()
	return v
}
