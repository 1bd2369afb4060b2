package code

import (
	"context"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// HydrationView is GET /introspect/hydration/{episode_id}: why each
// entity was hydrated in an episode.
type HydrationView struct {
	EpisodeID       string      `json:"episode_id"`
	SessionID       string      `json:"session_id"`
	Seq             int64       `json:"episode_seq"`
	Query           string      `json:"query"`
	HydrationBlocks []BlockView `json:"hydration_blocks"`
	TotalTokens     int         `json:"total_tokens"`
	BudgetUsed      string      `json:"budget_used"`
	Tracking        Tracking    `json:"tracking"`
}

// BlockView is one recorded hydration, without the code.
type BlockView struct {
	EntityKey    string `json:"entity_key"`
	ArtifactHash string `json:"artifact_hash"`
	Reason       string `json:"reason"`
	Method       string `json:"method"`
	TriggeredBy  string `json:"triggered_by"`
	TokenCount   int    `json:"token_count"`
	HydratedAt   string `json:"hydrated_at"`
}

// EntityView is GET /introspect/entity/{entity_key}: an entity's states,
// artifacts, verification and hydrations.
type EntityView struct {
	EntityKey        string         `json:"entity_key"`
	RepoID           string         `json:"repo_id"`
	CurrentState     string         `json:"current_state"`
	CurrentArtifact  string         `json:"current_artifact"`
	Filepath         string         `json:"filepath"`
	Kind             string         `json:"kind"`
	Method           string         `json:"method"`
	StartLine        int            `json:"start_line"`
	EndLine          int            `json:"end_line"`
	ETVStatus        ETVResult      `json:"etv_status"`
	StateHistory     []StateChange  `json:"state_history"`
	HydrationHistory []HydrationRef `json:"hydration_history"`
}

// StateChange is one ledger entry as introspection shows it.
type StateChange struct {
	FromState       *string `json:"from_state"`
	ToState         string  `json:"to_state"`
	ArtifactHash    string  `json:"artifact_hash"`
	Timestamp       string  `json:"timestamp"`
	EpisodeID       string  `json:"episode_id,omitempty"`
	Reason          string  `json:"reason,omitempty"`
	PromotionReason string  `json:"promotion_reason,omitempty"`
}

// HydrationRef is one episode that hydrated an entity.
type HydrationRef struct {
	EpisodeID  string `json:"episode_id"`
	SessionID  string `json:"session_id"`
	HydratedAt string `json:"hydrated_at"`
}

// GatesView is GET /introspect/gates/{episode_id}: every gate evaluation
// of an episode.
type GatesView struct {
	EpisodeID         string          `json:"episode_id"`
	EntitiesEvaluated []GateEvaluated `json:"entities_evaluated"`
}

// GateEvaluated is one entity's gates and the decision.
type GateEvaluated struct {
	EntityKey     string `json:"entity_key"`
	ArtifactHash  string `json:"artifact_hash"`
	GateA         Gate   `json:"gate_a"`
	GateB         Gate   `json:"gate_b"`
	GateC         Gate   `json:"gate_c"`
	FinalDecision string `json:"final_decision"`
	EvaluatedAt   string `json:"evaluated_at"`
}

func stamp(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

// knownEpisode returns an episode or a not_found error naming it.
func (m *Memory) knownEpisode(ctx context.Context, id string) (memory.Episode, error) {
	if !validID(id) {
		return memory.Episode{}, memory.Errorf(memory.CodeInvalidParams, "episode_id %q must be 1 to 128 letters, digits or _-.:@/", id)
	}
	ep, err := m.store.Episode(ctx, id)
	if memory.IsCode(err, memory.CodeNotFound) {
		return ep, memory.Errorf(memory.CodeNotFound, "no episode %s", id)
	}
	return ep, err
}

// InspectHydration explains an episode's hydration. Tracking reports
// whether the session's history verifies.
func (m *Memory) InspectHydration(ctx context.Context, episodeID string) (HydrationView, error) {
	ep, err := m.knownEpisode(ctx, episodeID)
	if err != nil {
		return HydrationView{}, err
	}
	_, track, byEp, err := m.sessionTracking(ctx, ep.SessionID)
	if err != nil {
		return HydrationView{}, err
	}
	v := HydrationView{
		EpisodeID: ep.ID, SessionID: ep.SessionID, Seq: ep.Seq, Query: ep.Query, HydrationBlocks: []BlockView{},
		Tracking: track,
	}
	for _, r := range byEp[ep.ID] {
		v.HydrationBlocks = append(v.HydrationBlocks, BlockView{
			EntityKey: r.Key, ArtifactHash: r.ArtifactHash, Reason: r.Reason, Method: r.Method,
			TriggeredBy: r.TriggeredBy, TokenCount: r.TokenCount, HydratedAt: stamp(r.HydratedAt),
		})
		v.TotalTokens += r.TokenCount
	}
	v.BudgetUsed = budgetText(v.TotalTokens, ep.BudgetToken)
	return v, nil
}

// InspectEntity shows an entity's history. repoID may be empty when only
// one repository holds the key.
func (m *Memory) InspectEntity(ctx context.Context, repoID, key string) (EntityView, error) {
	if _, _, err := ParseKey(key); err != nil {
		return EntityView{}, err
	}
	all, err := m.store.CodeEntitiesByKey(ctx, key)
	if err != nil {
		return EntityView{}, err
	}
	var e memory.CodeEntity
	var repos []string
	for _, c := range all {
		if repoID == "" || c.RepoID == repoID {
			e = c
			repos = append(repos, c.RepoID)
		}
	}
	switch {
	case len(repos) == 0:
		return EntityView{}, memory.Errorf(memory.CodeNotFound, "no entity %s", key)
	case len(repos) > 1:
		return EntityView{}, memory.Errorf(memory.CodeInvalidParams, "%s is in several repositories (%s); name one with repo_id", key, strings.Join(repos, ", "))
	}
	repo, err := m.store.CodeRepo(ctx, e.RepoID)
	if err != nil {
		return EntityView{}, err
	}
	v := EntityView{
		EntityKey: e.Key, RepoID: e.RepoID, CurrentState: string(e.State), CurrentArtifact: e.ArtifactHash,
		Filepath: e.Path, Kind: e.Kind, Method: e.Method, StartLine: e.StartLine, EndLine: e.EndLine,
		StateHistory: []StateChange{}, HydrationHistory: []HydrationRef{},
	}
	if e.State != memory.StateTombstoned {
		v.ETVStatus = m.verifier.Check(repo.Root, e, m.maxBytes)
	} else {
		v.ETVStatus = ETVResult{VaultHash: e.ArtifactHash, Reason: "not verified: the entity is TOMBSTONED"}
	}
	ledger, err := m.store.CodeLedger(ctx, e.RepoID, e.Key)
	if err != nil {
		return EntityView{}, err
	}
	for _, t := range ledger {
		c := StateChange{ToState: string(t.To), ArtifactHash: t.ArtifactHash, Timestamp: stamp(t.At), EpisodeID: t.EpisodeID}
		if t.From != "" {
			from := string(t.From)
			c.FromState = &from
		}
		if t.To == memory.StateAuthoritative {
			c.PromotionReason = t.Reason
		} else {
			c.Reason = t.Reason
		}
		v.StateHistory = append(v.StateHistory, c)
	}
	rows, err := m.store.EntityHydrationRows(ctx, e.RepoID, e.Key)
	if err != nil {
		return EntityView{}, err
	}
	for _, r := range rows {
		v.HydrationHistory = append(v.HydrationHistory, HydrationRef{EpisodeID: r.EpisodeID, SessionID: r.SessionID, HydratedAt: stamp(r.HydratedAt)})
	}
	return v, nil
}

// InspectGates lists an episode's gate evaluations as they were made.
func (m *Memory) InspectGates(ctx context.Context, episodeID string) (GatesView, error) {
	ep, err := m.knownEpisode(ctx, episodeID)
	if err != nil {
		return GatesView{}, err
	}
	gs, err := m.store.GateResults(ctx, ep.ID)
	if err != nil {
		return GatesView{}, err
	}
	v := GatesView{EpisodeID: ep.ID, EntitiesEvaluated: []GateEvaluated{}}
	for _, g := range gs {
		exists, stale := g.DiskExists, g.IsStale
		bReason := g.BReason
		v.EntitiesEvaluated = append(v.EntitiesEvaluated, GateEvaluated{
			EntityKey: g.Key, ArtifactHash: g.ArtifactHash,
			GateA:         Gate{Passed: g.AOK, Reason: g.AReason, Method: g.AMethod},
			GateB:         Gate{Passed: g.BOK, Reason: bReason},
			GateC:         Gate{Passed: g.COK, Reason: g.CReason, DiskExists: &exists, IsStale: &stale},
			FinalDecision: g.Decision, EvaluatedAt: stamp(g.At),
		})
	}
	return v, nil
}
