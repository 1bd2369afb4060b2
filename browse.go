package cairn

import (
	"context"

	"github.com/cairnhq/cairn/browse"
	"github.com/cairnhq/cairn/memory"
)

// What people browsing a database read (the web page) is served by
// browse.Service over the engine's store; these are its types and the
// Engine's one-line methods.

// MaxPageSize bounds one page of a listing.
const MaxPageSize = browse.MaxPageSize

type (
	// CapsulesRequest selects a page of capsules.
	CapsulesRequest = browse.CapsulesRequest
	// CapsuleView is a capsule with its summary and a page of its
	// observations.
	CapsuleView = browse.CapsuleView
	// Placement is where an observation sits in its capsule.
	Placement = browse.Placement
	// PinsRequest selects the pins in force.
	PinsRequest = browse.PinsRequest
	// ThoughtBrowseRequest selects a page of thoughts.
	ThoughtBrowseRequest = browse.ThoughtBrowseRequest
	// EntityBrowseRequest selects a page of knowledge-graph entities.
	EntityBrowseRequest = browse.EntityBrowseRequest
	// CodeEntityBrowseRequest selects a page of a repository's code
	// entities.
	CodeEntityBrowseRequest = browse.CodeEntityBrowseRequest
	// CodeEntityBrowsePage is a page of code entities.
	CodeEntityBrowsePage = browse.CodeEntityBrowsePage
)

// Capsules lists capsules, most recently opened first.
func (e *Engine) Capsules(ctx context.Context, req CapsulesRequest) (memory.CapsulePage, error) {
	return e.browse.Capsules(ctx, req)
}

// CapsulePage reads a capsule, its summary and a page of its observations.
func (e *Engine) CapsulePage(ctx context.Context, capsuleID string, offset, limit int) (CapsuleView, error) {
	return e.browse.CapsulePage(ctx, capsuleID, offset, limit)
}

// Placement says which capsule holds an observation, and where.
func (e *Engine) Placement(ctx context.Context, observationID string) (Placement, error) {
	return e.browse.Placement(ctx, observationID)
}

// Pins lists the active pins whose scope matches, newest first.
func (e *Engine) Pins(ctx context.Context, req PinsRequest) ([]memory.PinnedTarget, error) {
	return e.browse.Pins(ctx, req)
}

// BrowseThoughts lists a page of thoughts.
func (e *Engine) BrowseThoughts(ctx context.Context, req ThoughtBrowseRequest) (memory.ThoughtPage, error) {
	return e.browse.BrowseThoughts(ctx, req)
}

// BrowseEntities lists a page of knowledge-graph entities.
func (e *Engine) BrowseEntities(ctx context.Context, req EntityBrowseRequest) (memory.EntityPage, error) {
	return e.browse.BrowseEntities(ctx, req)
}

// ScopeValues lists the scope values in use.
func (e *Engine) ScopeValues(ctx context.Context) (memory.ScopeValues, error) {
	return e.browse.ScopeValues(ctx)
}

// CodeRepos lists code memory's repositories.
func (e *Engine) CodeRepos(ctx context.Context) ([]memory.CodeRepo, error) {
	return e.browse.CodeRepos(ctx)
}

// BrowseCodeEntities lists a repository's code entities a page at a time.
func (e *Engine) BrowseCodeEntities(ctx context.Context, req CodeEntityBrowseRequest) (CodeEntityBrowsePage, error) {
	return e.browse.BrowseCodeEntities(ctx, req)
}

// CodeSessions lists the sessions that have code-memory episodes.
func (e *Engine) CodeSessions(ctx context.Context) ([]string, error) {
	return e.browse.CodeSessions(ctx)
}

// SessionEpisodes lists a session's code-memory episodes in order.
func (e *Engine) SessionEpisodes(ctx context.Context, sessionID string) ([]memory.Episode, error) {
	return e.browse.SessionEpisodes(ctx, sessionID)
}
