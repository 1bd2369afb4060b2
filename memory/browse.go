package memory

import "context"

// Browser lists records page by page, for people looking through a store
// (the web page): capsules, thoughts and knowledge-graph entities with
// keyset cursors, and the scope values in use. A store that cannot browse
// simply does not implement it; the engine then answers feature_disabled.
type Browser interface {
	// BrowseCapsules lists capsules, most recently opened first.
	BrowseCapsules(ctx context.Context, f CapsuleFilter) (CapsulePage, error)
	// BrowseThoughts lists thoughts, most recently written first.
	BrowseThoughts(ctx context.Context, f ThoughtBrowse) (ThoughtPage, error)
	// BrowseEntities lists knowledge-graph entities by name.
	BrowseEntities(ctx context.Context, f EntityBrowse) (EntityPage, error)
	// BrowseCodeEntities lists a repository's code entities by key.
	BrowseCodeEntities(ctx context.Context, f CodeEntityBrowse) (CodeEntityPage, error)
	// ScopeValues lists the values of each scope dimension that records
	// use, the most recently used first, at most limit of each.
	ScopeValues(ctx context.Context, limit int) (ScopeValues, error)
}

// Cursor is where a page ends: pass it back as After for the next page.
// Its content is the store's; an empty cursor is the first page, and a
// cursor the store did not make is invalid_params.
type Cursor = string

// CapsuleFilter selects a page of capsules.
type CapsuleFilter struct {
	// Scope filters by the capsule's scope (AND over the dimensions set).
	Scope Scope
	// Status is open or closed; empty for both.
	Status CapsuleStatus
	After  Cursor
	// Limit is the page size (1 to 1000).
	Limit int
}

// CapsuleListing is a capsule as a list shows it: without its observation
// ids, with how many it holds and its summary.
type CapsuleListing struct {
	Capsule
	Observations int      `json:"observations"`
	Summary      *Summary `json:"summary,omitempty"`
}

// CapsulePage is one page of capsules; Next is empty on the last page.
type CapsulePage struct {
	Capsules []CapsuleListing `json:"capsules"`
	Next     Cursor           `json:"next,omitempty"`
}

// ThoughtBrowse selects a page of thoughts.
type ThoughtBrowse struct {
	Scope          Scope
	IncludePrivate bool
	// Status is active or removal; empty for both.
	Status string
	// Origin keeps one origin; empty for all.
	Origin Origin
	// Tag keeps thoughts carrying this tag.
	Tag string
	// Contains keeps thoughts whose text holds this string, ignoring the
	// case of ASCII letters.
	Contains string
	After    Cursor
	Limit    int
}

// ThoughtPage is one page of thoughts; Next is empty on the last page.
type ThoughtPage struct {
	Thoughts []Thought `json:"thoughts"`
	Next     Cursor    `json:"next,omitempty"`
}

// EntityBrowse selects a page of entities.
type EntityBrowse struct {
	Scope Scope
	// Type keeps one entity type; empty for all.
	Type string
	// Prefix keeps entities whose name starts with it, ignoring case.
	Prefix string
	After  Cursor
	Limit  int
}

// EntityPage is one page of entities, by name; Next is empty on the last
// page.
type EntityPage struct {
	Entities []KGEntity `json:"entities"`
	Next     Cursor     `json:"next,omitempty"`
}

// CodeEntityBrowse selects a page of one repository's code entities.
type CodeEntityBrowse struct {
	// RepoID is the repository (required).
	RepoID string
	// Path keeps one file's entities; State one state; empty for all.
	Path  string
	State CodeState
	After Cursor
	Limit int
}

// CodeEntityPage is one page of code entities, by key (in byte order);
// Total counts every entity the filter selects, on every page; Next is
// empty on the last page.
type CodeEntityPage struct {
	Entities []CodeEntity `json:"entities"`
	Total    int          `json:"total"`
	Next     Cursor       `json:"next,omitempty"`
}

// ScopeValues are the values in use of each scope dimension.
type ScopeValues struct {
	Sessions []string `json:"sessions"`
	Repos    []string `json:"repos"`
	Agents   []string `json:"agents"`
	Users    []string `json:"users"`
}
