package code

import (
	"context"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Approval is gate B's explicit input: what the user said about a
// proposed artifact.
type Approval string

// Approvals.
const (
	// ApprovalApproved: the user approved it explicitly.
	ApprovalApproved Approval = "approved"
	// ApprovalImplicit: the user saw it and did not reject it.
	ApprovalImplicit Approval = "implicit"
	// ApprovalRejected: the user rejected it.
	ApprovalRejected Approval = "rejected"
	// ApprovalNone: no decision yet; gate B fails and nothing is promoted.
	ApprovalNone Approval = "none"
)

// Valid reports whether a is one of the approvals.
func (a Approval) Valid() bool {
	return a == ApprovalApproved || a == ApprovalImplicit || a == ApprovalRejected || a == ApprovalNone
}

// Gate is one gate's verdict.
type Gate struct {
	Passed bool   `json:"passed"`
	Reason string `json:"reason"`
	Method string `json:"method,omitempty"`
	// DiskExists and IsStale are gate C's findings.
	DiskExists *bool `json:"disk_exists,omitempty"`
	IsStale    *bool `json:"is_stale,omitempty"`
}

// evaluate runs gates A, B and C for a PROPOSED entity and decides.
// Gate A passes only for entities resolved by an AST parser; gate B only
// for an approval (explicit or implicit); gate C only when the disk holds
// exactly the entity's artifact. The entity is promoted when all three
// pass, and never when gate C finds it stale (invariant 3).
func evaluate(e memory.CodeEntity, a Approval, etv ETVResult, episode string, at int64) memory.GateResult {
	g := memory.GateResult{EpisodeID: episode, RepoID: e.RepoID, Key: e.Key, ArtifactHash: e.ArtifactHash, At: at, AMethod: e.Method}
	if e.Method == "ast" {
		g.AOK, g.AReason = true, "AST resolved successfully"
	} else {
		g.AReason = "resolved by the regex fallback, not an AST: structure unconfirmed"
	}
	switch a {
	case ApprovalApproved:
		g.BOK, g.BReason = true, "User approved"
	case ApprovalImplicit:
		g.BOK, g.BReason = true, "User implicit approval (no rejection)"
	case ApprovalRejected:
		g.BReason = "User rejected"
	default:
		g.BReason = "No user decision"
	}
	g.DiskExists, g.IsStale = etv.DiskExists, etv.IsStale
	g.COK = !etv.IsStale
	g.CReason = etv.Reason
	var failed []string
	for _, f := range []struct {
		ok   bool
		name string
	}{{g.AOK, "A"}, {g.BOK, "B"}, {g.COK, "C"}} {
		if !f.ok {
			failed = append(failed, f.name)
		}
	}
	switch len(failed) {
	case 0:
		g.Decision = "PROMOTED to AUTHORITATIVE"
	case 1:
		g.Decision = "REJECTED (Gate " + failed[0] + " failed)"
	default:
		g.Decision = "REJECTED (Gates " + strings.Join(failed, " and ") + " failed)"
	}
	return g
}

// promotion returns the ledger reason of a promotion.
func promotion(g memory.GateResult) string {
	return "Gate A: " + g.AReason + ", Gate B: " + g.BReason + ", Gate C: " + g.CReason
}

// PromoteRequest asks for the gates to be evaluated for proposed entities
// in an episode.
type PromoteRequest struct {
	EpisodeID string
	SessionID string
	RepoID    string
	// Keys are the entities to evaluate; empty means every PROPOSED entity
	// of the repository.
	Keys     []string
	Approval Approval
}

// PromoteResult lists the gate results, and the entities promoted.
type PromoteResult struct {
	EpisodeID string              `json:"episode_id"`
	Evaluated []memory.GateResult `json:"evaluated"`
	Promoted  int                 `json:"promoted"`
	Rejected  int                 `json:"rejected"`
}

// Promote evaluates gates A, B and C for PROPOSED entities in an episode,
// records every evaluation under the episode, and promotes those that pass
// all three, superseding nothing else. Entities in other states are
// invalid_params; unknown keys are not_found.
func (m *Memory) Promote(ctx context.Context, in PromoteRequest) (PromoteResult, error) {
	return retryEpisode(ctx, func() (PromoteResult, error) { return m.promoteOnce(ctx, in) })
}

// promoteOnce is one attempt at Promote; it reads the episode afresh.
func (m *Memory) promoteOnce(ctx context.Context, in PromoteRequest) (PromoteResult, error) {
	if in.Approval == "" {
		in.Approval = ApprovalNone
	}
	if !in.Approval.Valid() {
		return PromoteResult{}, memory.Errorf(memory.CodeInvalidParams, "approval %q is not one of approved, implicit, rejected, none", in.Approval)
	}
	repo, err := m.repo(ctx, in.RepoID)
	if err != nil {
		return PromoteResult{}, err
	}
	ep, err := m.episode(ctx, in.EpisodeID, in.SessionID, repo.ID)
	if err != nil {
		return PromoteResult{}, err
	}
	f := memory.CodeEntityFilter{RepoID: repo.ID, Keys: in.Keys}
	if len(in.Keys) == 0 {
		f.States = []memory.CodeState{memory.StateProposed}
	}
	for _, k := range in.Keys {
		if _, _, err := ParseKey(k); err != nil {
			return PromoteResult{}, err
		}
	}
	ents, err := m.store.CodeEntities(ctx, f)
	if err != nil {
		return PromoteResult{}, err
	}
	if len(in.Keys) > 0 {
		found := map[string]bool{}
		for _, e := range ents {
			found[e.Key] = true
		}
		for _, k := range in.Keys {
			if !found[k] {
				return PromoteResult{}, memory.Errorf(memory.CodeNotFound, "no entity %s in repository %s", k, repo.ID)
			}
		}
		for _, e := range ents {
			if e.State != memory.StateProposed {
				return PromoteResult{}, memory.Errorf(memory.CodeInvalidParams, "%s is %s; only PROPOSED entities go through the gates", e.Key, e.State)
			}
		}
	}
	res, change, err := m.gate(repo, ents, in.Approval, ep.ID)
	if err != nil {
		return PromoteResult{}, err
	}
	ep.UpdatedAt = m.nowMs()
	if _, err := m.store.ApplyEpisode(ctx, memory.EpisodeChange{Episode: ep, Gates: res.Evaluated, Code: change}); err != nil {
		return PromoteResult{}, err
	}
	return res, nil
}

// gate evaluates ents and builds the change that promotes those passing.
func (m *Memory) gate(repo memory.CodeRepo, ents []memory.CodeEntity, a Approval, episode string) (PromoteResult, *memory.CodeChange, error) {
	res := PromoteResult{EpisodeID: episode, Evaluated: []memory.GateResult{}}
	change := &memory.CodeChange{}
	for _, e := range ents {
		at := m.nowMs()
		etv := m.verifier.Check(repo.Root, e, m.maxBytes)
		g := evaluate(e, a, etv, episode, at)
		res.Evaluated = append(res.Evaluated, g)
		m.log.Info("gate evaluation", "entity", e.Key, "episode", episode,
			"gate_a", g.AOK, "method", e.Method, "gate_b", g.BOK, "gate_c", g.COK,
			"stale", g.IsStale, "exists", g.DiskExists, "decision", g.Decision)
		if !(g.AOK && g.BOK && g.COK) {
			res.Rejected++
			continue
		}
		next, log, err := Update(e, e.ArtifactHash, memory.StateAuthoritative, episode, promotion(g), at)
		if err != nil {
			return res, nil, err
		}
		change.Guards = append(change.Guards, memory.CodeGuard{RepoID: e.RepoID, Key: e.Key, State: e.State, ArtifactHash: e.ArtifactHash})
		change.Entities = append(change.Entities, next)
		change.Transitions = append(change.Transitions, log...)
		res.Promoted++
	}
	return res, change, nil
}
