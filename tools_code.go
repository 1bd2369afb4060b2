package cairn

import (
	"context"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// codeTools are code memory: indexing, hydration, proposals, gates,
// verification and introspection.
var codeTools = []Tool{
	newTool(Tool{
		Name: "code_index", Title: "Index a repository's code", Method: "POST", Path: "/v1/code/index",
		Description: `Index a repository's source files into code entities (path::Symbol; path::Type.Method for methods): Go through its AST; Python, JavaScript, TypeScript, Rust, Java and C through tree-sitter; a file with syntax errors that entities depend on, or in another language, through a regex fallback (marked method "regex"). Only files whose size or modification time changed are read again; removed symbols are TOMBSTONED. New and changed entities are PROPOSED, then gates A (AST), B (approval: implicit by default) and C (the disk agrees) promote them to AUTHORITATIVE. Files over the size limit, binary files and symlinks leading outside the root are skipped with a reason. Through the HTTP server (REST, MCP over HTTP) only directories under the operator's CAIRN_CODE_ROOTS can be indexed, and the index runs as a background job: the call answers at once with state "queued" or "running", the job (job_id) and the repository as its last completed index left it (files, entities, indexed_at); follow it with code_index_status, stop it with code_index_cancel, or pass wait: true to wait for its report within the request's time limit. A job writes everything in one transaction at its end, so a cancelled or failed job leaves the previous index as it was. A second call for a repository being indexed returns its running job. Elsewhere (the CLI, MCP over stdio) the index runs to its end in the call (state "done"). Call it once per repository and again after edits; returns counts, skipped files and regex fallbacks.`,
	}, func(e *Engine, ctx context.Context, in CodeIndexRequest) (CodeIndexResult, error) {
		return e.codeIndex(ctx, in)
	}),
	newTool(Tool{
		Name: "code_index_status", Title: "Follow an index job", Method: "GET", Path: "/v1/code/index/jobs/{job_id}", ReadOnly: true, Idempotent: true,
		Description: `Report a background index job that code_index started on the HTTP server: its state (queued, running, done, failed, cancelled), its progress (phase listing, reading, gating or committing; files_done of files_total; entities resolved and proposed so far), the index's report (result) once done, and error (a stable code and message) once failed. Nothing of a job is visible in the repository before it is done. Jobs are kept until the server restarts, the last 64 finished ones only; elsewhere than the HTTP server there are no jobs (feature_disabled).`,
	}, func(e *Engine, ctx context.Context, in CodeIndexJobRef) (CodeIndexJob, error) {
		return e.CodeIndexStatus(ctx, in)
	}),
	newTool(Tool{
		Name: "code_index_jobs", Title: "List index jobs", Method: "GET", Path: "/v1/code/index/jobs", ReadOnly: true, Idempotent: true,
		Description: `List the background index jobs the HTTP server keeps (queued, running and the last 64 finished), newest first, optionally of one repository, each as code_index_status reports it.`,
	}, func(e *Engine, ctx context.Context, in CodeIndexJobsRequest) (CodeIndexJobList, error) {
		return e.CodeIndexJobs(ctx, in)
	}),
	newTool(Tool{
		Name: "code_index_cancel", Title: "Cancel an index job", Method: "DELETE", Path: "/v1/code/index/jobs/{job_id}", Idempotent: true,
		Description: `Stop a background index job: a queued one never runs, a running one stops at its next file; either leaves the repository's index exactly as it was (a job writes nothing before its end). A job whose changes were already committed ends done. Returns the job as it stands once it has ended; cancelling a finished job changes nothing.`,
	}, func(e *Engine, ctx context.Context, in CodeIndexJobRef) (CodeIndexJob, error) {
		return e.CancelCodeIndex(ctx, in)
	}),
	newTool(Tool{
		Name: "code_hydrate", Title: "Hydrate code for a query", Method: "POST", Path: "/v1/code/hydrate",
		Description: `Get the code you need for the current turn. Give the query (file names and symbols in it are anchors), the episode_id of this turn and the session_id. Returns blocks in priority order: entities of files the query names, then symbols it names, then everything hydrated in earlier episodes of the session (never lost), then lexical and semantic matches; each block has its code (secrets replaced by [REDACTED:kind] markers, counted in redactions), why it was included, the method and its token count. Entities the disk no longer agrees with are left out and listed in stale. The budget is hard (budget_tokens default 8000, budget_entities default 50): what does not fit is listed in pruned. tracking.ok false means the session's hydration history was damaged and says what is missing.`,
	}, func(e *Engine, ctx context.Context, in CodeHydrateRequest) (code.HydrateResult, error) {
		return e.Hydrate(ctx, in)
	}),
	newTool(Tool{
		Name: "code_propose", Title: "Propose new code for an entity", Method: "POST", Path: "/v1/code/proposals", Creates: true,
		Description: `Record code you wrote (or a diff, a decision, a user paste) as the new artifact of an entity, new or existing: it is stored content-addressed (SHA-256) and the entity becomes PROPOSED; an AUTHORITATIVE version is SUPERSEDED and stays in the ledger. It becomes AUTHORITATIVE only through code_promote, once the file on disk holds exactly this text. Returns the entity and the artifact hash.`,
	}, func(e *Engine, ctx context.Context, in CodeProposeRequest) (code.Proposal, error) {
		return e.ProposeCode(ctx, in)
	}),
	newTool(Tool{
		Name: "code_promote", Title: "Evaluate promotion gates", Method: "POST", Path: "/v1/code/promote",
		Description: `Evaluate gates A (resolved by an AST, not regex), B (the user's approval: approved, implicit, rejected or none) and C (External Truth Verification: the file on disk holds the entity's artifact) for PROPOSED entities, record each evaluation in the episode, and promote those passing all three to AUTHORITATIVE. Stale entities are never promoted. Returns every evaluation with its reasons.`,
	}, func(e *Engine, ctx context.Context, in CodePromoteRequest) (code.PromoteResult, error) {
		return e.PromoteCode(ctx, in)
	}),
	newTool(Tool{
		Name: "code_verify", Title: "Verify code against the disk", Method: "POST", Path: "/v1/code/verify", ReadOnly: true, Idempotent: true,
		Description: `Check every AUTHORITATIVE entity (or those named) against the files on disk: each file is read, its entity re-resolved and hashed, and compared with the vault. Returns the stale entities with the reason and the verification cache's hit rate. Changes nothing; index again to record what changed.`,
	}, func(e *Engine, ctx context.Context, in CodeVerifyRequest) (code.VerifyReport, error) {
		return e.VerifyCode(ctx, in)
	}),
	newTool(Tool{
		Name: "code_artifact_forget", Title: "Forget a code artifact", Method: "POST", Path: "/v1/code/artifacts/{hash}/forget", Destructive: true, Idempotent: true,
		Description: `Forget an artifact of the code vault (code, a diff, a decision or a user paste that must not be kept, e.g. it holds a secret): its text becomes "[redacted]" and is overwritten on disk; its hash stays, so the ledger and the hydration history still resolve. The entities whose artifact it is are no longer searched or hydrated (code_hydrate reports one hydrated earlier in the session as stale) until their text is stored again, by code_propose or by code_index reading the changed file. Forgetting it again changes nothing. Returns the redacted artifact.`,
	}, func(e *Engine, ctx context.Context, in ArtifactRef) (memory.Artifact, error) {
		return e.ForgetArtifact(ctx, in)
	}),
	newTool(Tool{
		Name: "code_entities", Title: "List code entities", Method: "GET", Path: "/v1/code/entities", ReadOnly: true, Idempotent: true,
		Description: `List a repository's code entities, by key, optionally of one file or one state (PROPOSED, AUTHORITATIVE, SUPERSEDED, TOMBSTONED), with their kind, lines, resolution method and artifact hash.`,
	}, func(e *Engine, ctx context.Context, in CodeEntitiesRequest) (CodeEntityList, error) {
		return e.CodeEntities(ctx, in)
	}),
	newTool(Tool{
		Name: "introspect_hydration", Title: "Explain an episode's hydration", Method: "GET", Path: "/introspect/hydration/{episode_id}", ReadOnly: true, Idempotent: true,
		Description: `Explain why each entity was hydrated in an episode: for every block its reason, method, trigger, token count and time, the total against the budget, and whether the session's tracking history verifies.`,
	}, func(e *Engine, ctx context.Context, in EpisodeRef) (code.HydrationView, error) {
		return e.InspectHydration(ctx, in)
	}),
	newTool(Tool{
		Name: "introspect_entity", Title: "Show a code entity's history", Method: "GET", Path: "/introspect/entity/{entity_key}", ReadOnly: true, Idempotent: true,
		Description: `Show a code entity's current state and artifact, a fresh External Truth Verification, every state transition with its episode and reason, and every episode that hydrated it.`,
	}, func(e *Engine, ctx context.Context, in CodeEntityRef) (code.EntityView, error) {
		return e.InspectCodeEntity(ctx, in)
	}),
	newTool(Tool{
		Name: "introspect_gates", Title: "Show an episode's gate evaluations", Method: "GET", Path: "/introspect/gates/{episode_id}", ReadOnly: true, Idempotent: true,
		Description: `Show gates A, B and C as they were evaluated for every entity in an episode, each with its reason, and the decision taken.`,
	}, func(e *Engine, ctx context.Context, in EpisodeRef) (code.GatesView, error) {
		return e.InspectGates(ctx, in)
	}),
}
