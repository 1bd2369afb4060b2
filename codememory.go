package cairn

import (
	"context"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

type (
	// CodeEntityView is a code entity's state, verification, ledger and
	// hydrations (introspect_entity).
	CodeEntityView = code.EntityView
	// HydrationView explains an episode's hydration.
	HydrationView = code.HydrationView
	// GatesView lists an episode's gate evaluations.
	GatesView = code.GatesView
	// GateEvaluated is one entity's evaluation of gates A, B and C.
	GateEvaluated = code.GateEvaluated
	// Gate is one gate's verdict.
	Gate = code.Gate
	// CodeTracking says whether a session's hydration history verifies.
	CodeTracking = code.Tracking
	// CodeHydrateResult is the code a query needs, within its budget.
	CodeHydrateResult = code.HydrateResult
)

// CodeIndexRequest asks to index a repository's source files.
type CodeIndexRequest struct {
	Root      string `json:"root" jsonschema:"the repository's directory (absolute, or relative to the server's working directory)"`
	RepoID    string `json:"repo_id,omitempty" jsonschema:"the repository's id (default: the directory's name)"`
	Approval  string `json:"approval,omitempty" jsonschema:"gate B's input for what the index proposes: implicit (default), approved, or none (leave entities PROPOSED)"`
	EpisodeID string `json:"episode_id,omitempty" jsonschema:"the episode the gate evaluations are recorded in (default: a new one)"`
	SessionID string `json:"session_id,omitempty" jsonschema:"the session of a new episode (default code-index:REPO)"`
	Wait      bool   `json:"wait,omitempty" jsonschema:"over HTTP and MCP over HTTP: wait for the index job to end and answer with its report (timeout when the request's time limit passes first; the job goes on). Elsewhere the index always runs to its end in the call"`
}

// CodeHydrateRequest asks for the code a query needs.
type CodeHydrateRequest struct {
	Query          string `json:"query" jsonschema:"what the agent is about to work on; file names and symbols in it are anchors"`
	EpisodeID      string `json:"episode_id" jsonschema:"the current episode (turn); a new id starts a new episode"`
	SessionID      string `json:"session_id,omitempty" jsonschema:"the session, required for a new episode"`
	RepoID         string `json:"repo_id,omitempty" jsonschema:"the repository (default: the only one indexed)"`
	BudgetTokens   int    `json:"budget_tokens,omitempty" jsonschema:"hard token budget, 1 to 1000000 (default 8000)"`
	BudgetEntities int    `json:"budget_entities,omitempty" jsonschema:"hard entity budget, 1 to 10000 (default 50)"`
}

// CodeProposeRequest records a new artifact for an entity.
type CodeProposeRequest struct {
	EntityKey    string `json:"entity_key" jsonschema:"path::Symbol (path::Type.Method for methods), path relative to the repository root"`
	Content      string `json:"content" jsonschema:"the entity's complete new text, exactly as it will be on disk"`
	ArtifactType string `json:"artifact_type,omitempty" jsonschema:"code (default), diff, decision or user_paste"`
	EpisodeID    string `json:"episode_id" jsonschema:"the current episode"`
	SessionID    string `json:"session_id,omitempty" jsonschema:"the session, required for a new episode"`
	RepoID       string `json:"repo_id,omitempty" jsonschema:"the repository (default: the only one indexed)"`
}

// CodePromoteRequest asks for gates A, B and C to be evaluated.
type CodePromoteRequest struct {
	EpisodeID  string   `json:"episode_id" jsonschema:"the current episode; the evaluations are recorded in it"`
	SessionID  string   `json:"session_id,omitempty" jsonschema:"the session, required for a new episode"`
	RepoID     string   `json:"repo_id,omitempty" jsonschema:"the repository (default: the only one indexed)"`
	EntityKeys []string `json:"entity_keys,omitempty" jsonschema:"the PROPOSED entities to evaluate (default: every PROPOSED entity)"`
	Approval   string   `json:"approval" jsonschema:"gate B's input: approved, implicit (no rejection), rejected or none"`
}

// CodeVerifyRequest asks for External Truth Verification.
type CodeVerifyRequest struct {
	RepoID     string   `json:"repo_id,omitempty" jsonschema:"the repository (default: the only one indexed)"`
	EntityKeys []string `json:"entity_keys,omitempty" jsonschema:"entities to verify (default: every AUTHORITATIVE entity)"`
}

// CodeEntitiesRequest lists code entities.
type CodeEntitiesRequest struct {
	RepoID string `json:"repo_id,omitempty" jsonschema:"the repository (default: the only one indexed)"`
	Path   string `json:"path,omitempty" jsonschema:"only this file (path relative to the root)"`
	State  string `json:"state,omitempty" jsonschema:"only this state: PROPOSED, AUTHORITATIVE, SUPERSEDED or TOMBSTONED"`
	Limit  int    `json:"limit,omitempty" jsonschema:"1 to 10000 (default 500)"`
}

// CodeEntityList is a page of code entities.
type CodeEntityList struct {
	RepoID   string              `json:"repo_id"`
	Entities []memory.CodeEntity `json:"entities"`
	Total    int                 `json:"total"`
}

// EpisodeRef names an episode.
type EpisodeRef struct {
	EpisodeID string `json:"episode_id" jsonschema:"the episode's id"`
}

// CodeEntityRef names a code entity.
type CodeEntityRef struct {
	EntityKey string `json:"entity_key" jsonschema:"path::Symbol (URL-escaped in the HTTP path)"`
	RepoID    string `json:"repo_id,omitempty" jsonschema:"the repository, when several hold the key"`
}

// IndexCode indexes a repository; progress, when set, follows the files.
func (e *Engine) IndexCode(ctx context.Context, in CodeIndexRequest, progress func(done, total int)) (code.IndexReport, error) {
	root := in.Root
	if e.codeRoots != nil {
		r, err := code.AllowedRoot(root, *e.codeRoots)
		if err != nil {
			return code.IndexReport{}, err
		}
		root = r
	}
	return e.code.Index(ctx, code.IndexRequest{
		Root: root, RepoID: in.RepoID, Approval: code.Approval(in.Approval),
		EpisodeID: in.EpisodeID, SessionID: in.SessionID, Progress: progress,
	})
}

// reachableRepo refuses, on an engine limited to code roots (the network
// faces), a repository indexed elsewhere (through the CLI): its code is
// neither hydrated nor read from disk over the network. The refusal is
// the one a root outside the code roots gets.
func (e *Engine) reachableRepo(ctx context.Context, repoID string) error {
	if e.codeRoots == nil {
		return nil
	}
	repo, err := e.code.Repo(ctx, repoID)
	if err != nil {
		return err
	}
	_, err = code.AllowedRoot(repo.Root, *e.codeRoots)
	return err
}

// Hydrate returns the code entities a query needs within a budget.
func (e *Engine) Hydrate(ctx context.Context, in CodeHydrateRequest) (code.HydrateResult, error) {
	if err := e.reachableRepo(ctx, in.RepoID); err != nil {
		return code.HydrateResult{}, err
	}
	return e.code.Hydrate(ctx, code.HydrateRequest{
		Query: in.Query, EpisodeID: in.EpisodeID, SessionID: in.SessionID, RepoID: in.RepoID,
		BudgetTokens: in.BudgetTokens, BudgetEntities: in.BudgetEntities,
	})
}

// ProposeCode records a new artifact for an entity.
func (e *Engine) ProposeCode(ctx context.Context, in CodeProposeRequest) (code.Proposal, error) {
	return e.code.Propose(ctx, code.ProposeRequest{
		RepoID: in.RepoID, Key: in.EntityKey, Content: in.Content, Type: memory.ArtifactType(in.ArtifactType),
		EpisodeID: in.EpisodeID, SessionID: in.SessionID,
	})
}

// PromoteCode evaluates the gates for proposed entities.
func (e *Engine) PromoteCode(ctx context.Context, in CodePromoteRequest) (code.PromoteResult, error) {
	if in.Approval == "" {
		return code.PromoteResult{}, memory.Errorf(memory.CodeInvalidParams, "approval is required: approved, implicit, rejected or none")
	}
	if err := e.reachableRepo(ctx, in.RepoID); err != nil {
		return code.PromoteResult{}, err
	}
	return e.code.Promote(ctx, code.PromoteRequest{
		EpisodeID: in.EpisodeID, SessionID: in.SessionID, RepoID: in.RepoID, Keys: in.EntityKeys, Approval: code.Approval(in.Approval),
	})
}

// VerifyCode runs External Truth Verification.
func (e *Engine) VerifyCode(ctx context.Context, in CodeVerifyRequest) (code.VerifyReport, error) {
	if err := e.reachableRepo(ctx, in.RepoID); err != nil {
		return code.VerifyReport{}, err
	}
	return e.code.Verify(ctx, in.RepoID, in.EntityKeys)
}

// CodeEntities lists code entities.
func (e *Engine) CodeEntities(ctx context.Context, in CodeEntitiesRequest) (CodeEntityList, error) {
	if in.Limit < 0 || in.Limit > 10000 {
		return CodeEntityList{}, memory.Errorf(memory.CodeInvalidParams, "limit must be 1 to 10000 (default 500)")
	}
	if in.Limit == 0 {
		in.Limit = 500
	}
	repo, ents, err := e.code.Entities(ctx, in.RepoID, in.Path, memory.CodeState(in.State))
	if err != nil {
		return CodeEntityList{}, err
	}
	return CodeEntityList{RepoID: repo, Entities: ents[:min(len(ents), in.Limit)], Total: len(ents)}, nil
}

// InspectHydration explains an episode's hydration.
func (e *Engine) InspectHydration(ctx context.Context, in EpisodeRef) (code.HydrationView, error) {
	return e.code.InspectHydration(ctx, in.EpisodeID)
}

// InspectCodeEntity shows an entity's states, verification and hydrations.
func (e *Engine) InspectCodeEntity(ctx context.Context, in CodeEntityRef) (code.EntityView, error) {
	return e.code.InspectEntity(ctx, in.RepoID, in.EntityKey)
}

// InspectGates lists an episode's gate evaluations.
func (e *Engine) InspectGates(ctx context.Context, in EpisodeRef) (code.GatesView, error) {
	return e.code.InspectGates(ctx, in.EpisodeID)
}

// CodeVerification reports code memory's verification cache counters
// since the engine opened.
func (e *Engine) CodeVerification() code.ETVStats { return e.code.ETVStats() }
