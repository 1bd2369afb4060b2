package browse

import (
	"context"
	"slices"

	"github.com/cairnhq/cairn/memory"
)

// MaxPageSize bounds one page of a listing.
const MaxPageSize = 1000

// Service answers what people browsing a database read, over a store.
type Service struct {
	Store memory.Store
	// Now is the clock in Unix ms (pins in force are those not expired).
	Now func() int64
	// Repo finds a code-memory repository by id or root.
	Repo func(ctx context.Context, id string) (memory.CodeRepo, error)
}

// browser returns the store's listing seam, or feature_disabled.
func (s *Service) browser() (memory.Browser, error) {
	b, ok := s.Store.(memory.Browser)
	if !ok {
		return nil, memory.Errorf(memory.CodeFeatureDisabled, "this database cannot be browsed page by page")
	}
	return b, nil
}

// CheckPage checks a page size: 0 is the default 50.
func CheckPage(limit int) (int, error) {
	switch {
	case limit == 0:
		return 50, nil
	case limit < 0 || limit > MaxPageSize:
		return 0, memory.Errorf(memory.CodeInvalidParams, "page size %d is out of range [1, %d]", limit, MaxPageSize)
	}
	return limit, nil
}

// CapsulesRequest selects a page of capsules.
type CapsulesRequest struct {
	ScopeIDs memory.Scope `json:"scopeIds,omitzero"`
	// Status is open or closed; empty for both.
	Status string `json:"status,omitempty"`
	// After is the Next of the previous page.
	After string `json:"after,omitempty"`
	// Limit is the page size (default 50, at most MaxPageSize).
	Limit int `json:"limit,omitempty"`
}

// Capsules lists capsules, most recently opened first, with their
// observation counts and summaries.
func (s *Service) Capsules(ctx context.Context, req CapsulesRequest) (memory.CapsulePage, error) {
	b, err := s.browser()
	if err != nil {
		return memory.CapsulePage{}, err
	}
	limit, err := CheckPage(req.Limit)
	if err != nil {
		return memory.CapsulePage{}, err
	}
	if err := req.ScopeIDs.Validate(); err != nil {
		return memory.CapsulePage{}, err
	}
	return b.BrowseCapsules(ctx, memory.CapsuleFilter{Scope: req.ScopeIDs, Status: memory.CapsuleStatus(req.Status), After: req.After, Limit: limit})
}

// CapsuleView is a capsule with its summary and one page of its
// observations, in order.
type CapsuleView struct {
	Capsule memory.Capsule  `json:"capsule"`
	Summary *memory.Summary `json:"summary,omitempty"`
	// Observations are those at positions Offset to Offset+len-1.
	Observations []memory.Observation `json:"observations"`
	Offset       int                  `json:"offset"`
	// Total is how many observations the capsule holds.
	Total int `json:"total"`
}

// CapsulePage reads a capsule, its summary and limit of its observations
// from position offset.
func (s *Service) CapsulePage(ctx context.Context, capsuleID string, offset, limit int) (CapsuleView, error) {
	if err := memory.ValidateRef("capsule id", capsuleID, false); err != nil {
		return CapsuleView{}, err
	}
	limit, err := CheckPage(limit)
	if err != nil {
		return CapsuleView{}, err
	}
	if offset < 0 {
		return CapsuleView{}, memory.Errorf(memory.CodeInvalidParams, "offset %d is negative", offset)
	}
	c, err := s.Store.Capsule(ctx, capsuleID)
	if err != nil {
		return CapsuleView{}, err
	}
	v := CapsuleView{Capsule: c, Total: len(c.ObservationIDs), Offset: offset, Observations: []memory.Observation{}}
	ids := c.ObservationIDs[min(offset, len(c.ObservationIDs)):min(offset+limit, len(c.ObservationIDs))]
	refs := make([]memory.EntityRef, len(ids))
	for i, id := range ids {
		refs[i] = memory.EntityRef{Type: memory.TargetObservation, ID: id}
	}
	err = s.Store.Snapshot(ctx, func(r memory.Reader) error {
		ents, err := r.Entities(ctx, refs)
		for _, en := range ents {
			if en.Observation != nil {
				v.Observations = append(v.Observations, *en.Observation)
			}
		}
		return err
	})
	if err != nil {
		return CapsuleView{}, err
	}
	if c.SummaryID != "" {
		sum, err := s.Store.Summary(ctx, c.SummaryID)
		if err != nil {
			return CapsuleView{}, err
		}
		v.Summary = &sum
	}
	return v, nil
}

// Placement is where an observation sits: its capsule and position there
// (CapsuleID empty when it joined none).
type Placement struct {
	CapsuleID string `json:"capsuleId,omitempty"`
	Position  int    `json:"position"`
}

// Placement says which capsule holds an observation, and where.
func (s *Service) Placement(ctx context.Context, observationID string) (Placement, error) {
	if err := memory.ValidateRef("observation id", observationID, false); err != nil {
		return Placement{}, err
	}
	var p Placement
	err := s.Store.Snapshot(ctx, func(r memory.Reader) error {
		recs, err := r.Records(ctx, memory.VectorObservation, []string{observationID})
		if err != nil || len(recs) == 0 {
			return err
		}
		p = Placement{CapsuleID: recs[0].CapsuleID, Position: recs[0].Position}
		return nil
	})
	return p, err
}

// PinsRequest selects the pins in force.
type PinsRequest struct {
	ScopeIDs memory.Scope `json:"scopeIds,omitzero"`
	// IncludeRedacted also lists pins whose target was forgotten.
	IncludeRedacted bool `json:"includeRedacted,omitempty"`
	// TargetID keeps the pins of one record.
	TargetID string `json:"targetId,omitempty"`
}

// Pins lists the active pins whose scope matches, with their targets,
// newest first.
func (s *Service) Pins(ctx context.Context, req PinsRequest) ([]memory.PinnedTarget, error) {
	if err := req.ScopeIDs.Validate(); err != nil {
		return nil, err
	}
	if err := memory.ValidateRef("target id", req.TargetID, true); err != nil {
		return nil, err
	}
	pins, err := s.Store.ActivePins(ctx, memory.PinQuery{Scope: req.ScopeIDs, Now: s.Now(), IncludeRedacted: req.IncludeRedacted || req.TargetID != ""})
	if err != nil {
		return nil, err
	}
	if req.TargetID != "" {
		pins = slices.DeleteFunc(pins, func(p memory.PinnedTarget) bool { return p.Pin.TargetID != req.TargetID })
	}
	if pins == nil {
		pins = []memory.PinnedTarget{}
	}
	return pins, nil
}

// ThoughtBrowseRequest selects a page of thoughts.
type ThoughtBrowseRequest struct {
	ScopeIDs       memory.Scope `json:"scopeIds,omitzero"`
	IncludePrivate bool         `json:"includePrivate,omitempty"`
	// Status is active or removal; Origin human, tool, model or logged;
	// empty for all.
	Status string `json:"status,omitempty"`
	Origin string `json:"origin,omitempty"`
	Tag    string `json:"tag,omitempty"`
	// Contains keeps thoughts whose text holds it (ASCII case ignored).
	Contains string `json:"contains,omitempty"`
	After    string `json:"after,omitempty"`
	Limit    int    `json:"limit,omitempty"`
}

// BrowseThoughts lists thoughts, most recently written first.
func (s *Service) BrowseThoughts(ctx context.Context, req ThoughtBrowseRequest) (memory.ThoughtPage, error) {
	b, err := s.browser()
	if err != nil {
		return memory.ThoughtPage{}, err
	}
	limit, err := CheckPage(req.Limit)
	if err != nil {
		return memory.ThoughtPage{}, err
	}
	if err := req.ScopeIDs.Validate(); err != nil {
		return memory.ThoughtPage{}, err
	}
	if req.Status != "" && req.Status != memory.StatusActive && req.Status != memory.StatusRemoval {
		return memory.ThoughtPage{}, memory.Errorf(memory.CodeInvalidParams, "status %q: want active or removal", req.Status)
	}
	if req.Origin != "" && !memory.Origin(req.Origin).Valid() {
		return memory.ThoughtPage{}, memory.Errorf(memory.CodeInvalidParams, "origin %q: want human, tool, model or logged", req.Origin)
	}
	for _, f := range []struct{ name, v string }{{"tag", req.Tag}, {"contains", req.Contains}} {
		if err := memory.ValidateText(f.name, f.v, 512); err != nil {
			return memory.ThoughtPage{}, err
		}
	}
	return b.BrowseThoughts(ctx, memory.ThoughtBrowse{Scope: req.ScopeIDs, IncludePrivate: req.IncludePrivate, Status: req.Status,
		Origin: memory.Origin(req.Origin), Tag: req.Tag, Contains: req.Contains, After: req.After, Limit: limit})
}

// EntityBrowseRequest selects a page of knowledge-graph entities.
type EntityBrowseRequest struct {
	ScopeIDs memory.Scope `json:"scopeIds,omitzero"`
	Type     string       `json:"type,omitempty"`
	// Prefix keeps entities whose name starts with it (any case).
	Prefix string `json:"prefix,omitempty"`
	After  string `json:"after,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// BrowseEntities lists entities by name.
func (s *Service) BrowseEntities(ctx context.Context, req EntityBrowseRequest) (memory.EntityPage, error) {
	b, err := s.browser()
	if err != nil {
		return memory.EntityPage{}, err
	}
	limit, err := CheckPage(req.Limit)
	if err != nil {
		return memory.EntityPage{}, err
	}
	if err := req.ScopeIDs.Validate(); err != nil {
		return memory.EntityPage{}, err
	}
	for _, f := range []struct{ name, v string }{{"type", req.Type}, {"prefix", req.Prefix}} {
		if err := memory.ValidateText(f.name, f.v, 512); err != nil {
			return memory.EntityPage{}, err
		}
	}
	return b.BrowseEntities(ctx, memory.EntityBrowse{Scope: req.ScopeIDs, Type: req.Type, Prefix: req.Prefix, After: req.After, Limit: limit})
}

// ScopeValues lists the scope values records use (at most 200 of each
// dimension, the most recently used first), for pickers.
func (s *Service) ScopeValues(ctx context.Context) (memory.ScopeValues, error) {
	b, err := s.browser()
	if err != nil {
		return memory.ScopeValues{}, err
	}
	return b.ScopeValues(ctx, 200)
}

// CodeRepos lists the repositories code memory has indexed.
func (s *Service) CodeRepos(ctx context.Context) ([]memory.CodeRepo, error) {
	rs, err := s.Store.CodeRepos(ctx)
	if rs == nil {
		rs = []memory.CodeRepo{}
	}
	return rs, err
}

// CodeEntityBrowseRequest selects a page of a repository's code entities.
type CodeEntityBrowseRequest struct {
	// RepoID is the repository (default: the only one indexed).
	RepoID string `json:"repo_id,omitempty"`
	// Path keeps one file's entities; State one state (PROPOSED,
	// AUTHORITATIVE, SUPERSEDED or TOMBSTONED).
	Path  string `json:"path,omitempty"`
	State string `json:"state,omitempty"`
	// After is the Next of the previous page.
	After string `json:"after,omitempty"`
	// Limit is the page size (default 50, at most MaxPageSize).
	Limit int `json:"limit,omitempty"`
}

// CodeEntityBrowsePage is one page of a repository's code entities, by
// key: Total counts them all (on every page), Next is empty on the last
// page.
type CodeEntityBrowsePage struct {
	RepoID string `json:"repo_id"`
	memory.CodeEntityPage
}

// BrowseCodeEntities lists a repository's code entities by key, a page at
// a time from a cursor: unlike CodeEntities, which stops at 10,000, every
// entity is reached, and a page costs the same wherever it starts.
func (s *Service) BrowseCodeEntities(ctx context.Context, req CodeEntityBrowseRequest) (CodeEntityBrowsePage, error) {
	b, err := s.browser()
	if err != nil {
		return CodeEntityBrowsePage{}, err
	}
	limit, err := CheckPage(req.Limit)
	if err != nil {
		return CodeEntityBrowsePage{}, err
	}
	if err := memory.ValidateRef("repository id", req.RepoID, true); err != nil {
		return CodeEntityBrowsePage{}, err
	}
	if err := memory.ValidateText("path", req.Path, 4096); err != nil {
		return CodeEntityBrowsePage{}, err
	}
	state := memory.CodeState(req.State)
	if state != "" && !state.Valid() {
		return CodeEntityBrowsePage{}, memory.Errorf(memory.CodeInvalidParams, "state %q is not one of PROPOSED, AUTHORITATIVE, SUPERSEDED, TOMBSTONED", req.State)
	}
	repo, err := s.Repo(ctx, req.RepoID)
	if err != nil {
		return CodeEntityBrowsePage{}, err
	}
	p, err := b.BrowseCodeEntities(ctx, memory.CodeEntityBrowse{RepoID: repo.ID, Path: req.Path, State: state, After: req.After, Limit: limit})
	return CodeEntityBrowsePage{RepoID: repo.ID, CodeEntityPage: p}, err
}

// CodeSessions lists the sessions that have code-memory episodes, by id.
func (s *Service) CodeSessions(ctx context.Context) ([]string, error) {
	ss, err := s.Store.CodeSessions(ctx)
	if ss == nil {
		ss = []string{}
	}
	return ss, err
}

// SessionEpisodes lists a session's code-memory episodes in order.
func (s *Service) SessionEpisodes(ctx context.Context, sessionID string) ([]memory.Episode, error) {
	if err := memory.ValidateRef("session id", sessionID, false); err != nil {
		return nil, err
	}
	eps, err := s.Store.SessionEpisodes(ctx, sessionID)
	if eps == nil {
		eps = []memory.Episode{}
	}
	return eps, err
}
