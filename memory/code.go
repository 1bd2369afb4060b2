package memory

import (
	"context"
	"errors"
)

// ErrEpisodeChanged is the cause of the conflict ApplyEpisode returns when
// another writer appended to the episode after the caller read it: the
// caller reads the episode again and redoes its change.
var ErrEpisodeChanged = errors.New("the episode changed while this change was prepared")

// CodeState is the lifecycle state of a code entity.
type CodeState string

// Code entity states. An entity is PROPOSED when a new artifact is recorded
// for it, AUTHORITATIVE once gates A, B and C pass, SUPERSEDED when a newer
// artifact replaces its authoritative one, TOMBSTONED when it left the disk.
const (
	StateProposed      CodeState = "PROPOSED"
	StateAuthoritative CodeState = "AUTHORITATIVE"
	StateSuperseded    CodeState = "SUPERSEDED"
	StateTombstoned    CodeState = "TOMBSTONED"
)

// Valid reports whether s is one of the four states.
func (s CodeState) Valid() bool {
	return s == StateProposed || s == StateAuthoritative || s == StateSuperseded || s == StateTombstoned
}

// ArtifactType says where an artifact's content came from.
type ArtifactType string

// Artifact types.
const (
	ArtifactCode      ArtifactType = "code"
	ArtifactDiff      ArtifactType = "diff"
	ArtifactDecision  ArtifactType = "decision"
	ArtifactUserPaste ArtifactType = "user_paste"
)

// Valid reports whether t is one of the four artifact types.
func (t ArtifactType) Valid() bool {
	return t == ArtifactCode || t == ArtifactDiff || t == ArtifactDecision || t == ArtifactUserPaste
}

// Artifact is content-addressed text in the vault: Hash is the lowercase
// hex SHA-256 of Content. Storing the same hash twice keeps the first,
// unless the first was forgotten: storing its content again restores it.
type Artifact struct {
	Hash      string       `json:"hash"`
	Type      ArtifactType `json:"type"`
	Content   string       `json:"content"`
	CreatedAt int64        `json:"created_at"`
	// Redacted marks a forgotten artifact: Content is RedactedContent
	// (so no longer hashes to Hash), and code memory neither searches nor
	// hydrates it.
	Redacted bool `json:"redacted,omitempty"`
}

// CodeRepo is a registered repository root: the only place code memory
// reads files from.
type CodeRepo struct {
	ID        string `json:"repo_id"`
	Root      string `json:"root"`
	IndexedAt int64  `json:"indexed_at"`
}

// CodeFile is what the last index saw of one file, so a re-index reads only
// files whose size or modification time changed.
type CodeFile struct {
	RepoID   string `json:"repo_id"`
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	ModTime  int64  `json:"mod_time_ns"`
	FileHash string `json:"file_hash"`
	Language string `json:"language"`
	// Method is how its entities were resolved: "ast", "regex", or "skipped".
	Method string `json:"method"`
	// Reason says why a file was skipped or fell back to regex.
	Reason   string `json:"reason,omitempty"`
	Entities int    `json:"entities"`
}

// CodeEntity is a symbol of a source file: a function, method, type,
// class, interface or constant. Key is "path::Symbol" ("path::Type.Method"
// for methods), path relative to the repository root with '/' separators.
type CodeEntity struct {
	RepoID    string `json:"repo_id"`
	Key       string `json:"entity_key"`
	Path      string `json:"filepath"`
	Symbol    string `json:"symbol"`
	Kind      string `json:"kind"`
	Language  string `json:"language"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	// Method is "ast" or "regex".
	Method       string    `json:"method"`
	State        CodeState `json:"state"`
	ArtifactHash string    `json:"artifact_hash"`
	UpdatedAt    int64     `json:"updated_at"`
}

// CodeTransition is one ledger entry: an entity moving between states.
// From is empty for an entity's first entry.
type CodeTransition struct {
	Seq          int64     `json:"seq"`
	RepoID       string    `json:"repo_id"`
	Key          string    `json:"entity_key"`
	From         CodeState `json:"from_state,omitempty"`
	To           CodeState `json:"to_state"`
	ArtifactHash string    `json:"artifact_hash"`
	EpisodeID    string    `json:"episode_id,omitempty"`
	Reason       string    `json:"reason"`
	At           int64     `json:"timestamp"`
}

// CodeChange is one atomic change to code memory: artifacts to keep,
// entities to write (as given, replacing the stored row), transitions to
// append to the ledger, and file records to write or delete. Guards are
// compare-and-set checks on the stored entities, made before anything is
// written; one that fails makes the whole change a conflict.
type CodeChange struct {
	Artifacts   []Artifact
	Entities    []CodeEntity
	Transitions []CodeTransition
	// Files are written (replacing the record of the same RepoID and Path).
	Files []CodeFile
	// DeleteFiles removes the file records named by RepoID and Path.
	DeleteFiles []CodeFile
	Guards      []CodeGuard
	// Repo, when set, registers or updates the repository in the same
	// transaction (a whole index's last step: its indexed_at).
	Repo *CodeRepo
}

// CodeGuard expects a stored entity to be in State with ArtifactHash
// (State empty: the entity must not exist).
type CodeGuard struct {
	RepoID, Key  string
	State        CodeState
	ArtifactHash string
}

// CodeEntityFilter selects entities; empty fields match everything.
type CodeEntityFilter struct {
	RepoID string
	Path   string
	States []CodeState
	Keys   []string
	// Names keeps the entities any of these words may name: the word is
	// the entity's symbol or its symbol's last dotted segment, or its path
	// or the end of its path after a '/'.
	Names []string
	// Readable keeps only the entities whose artifact is not forgotten.
	Readable bool
}

// Episode is one turn of a session in which code was hydrated or gates were
// evaluated. Seq numbers a session's episodes from 1 in creation order.
// Rows and Digest seal its hydration rows: Rows counts them and Digest is
// the SHA-256 chain over their checksums, so lost or altered rows are
// detected.
type Episode struct {
	ID          string `json:"episode_id"`
	SessionID   string `json:"session_id"`
	RepoID      string `json:"repo_id"`
	Seq         int64  `json:"seq"`
	Query       string `json:"query"`
	BudgetToken int    `json:"budget_tokens"`
	BudgetCount int    `json:"budget_entities"`
	TotalTokens int    `json:"total_tokens"`
	Rows        int    `json:"rows"`
	Digest      string `json:"digest"`
	CreatedAt   int64  `json:"created_at"`
	UpdatedAt   int64  `json:"updated_at"`
}

// HydrationRow records one entity hydrated in an episode. Checksum is the
// SHA-256 of the row's other fields (see code.RowChecksum).
type HydrationRow struct {
	EpisodeID    string `json:"episode_id"`
	SessionID    string `json:"session_id"`
	Seq          int    `json:"seq"`
	RepoID       string `json:"repo_id"`
	Key          string `json:"entity_key"`
	ArtifactHash string `json:"artifact_hash"`
	Reason       string `json:"reason"`
	Method       string `json:"method"`
	TriggeredBy  string `json:"triggered_by"`
	TokenCount   int    `json:"token_count"`
	HydratedAt   int64  `json:"hydrated_at"`
	Checksum     string `json:"checksum"`
}

// GateResult is the evaluation of gates A, B and C for one entity in one
// episode, and the decision taken.
type GateResult struct {
	EpisodeID    string `json:"episode_id"`
	RepoID       string `json:"repo_id"`
	Key          string `json:"entity_key"`
	ArtifactHash string `json:"artifact_hash"`
	AOK          bool   `json:"gate_a_passed"`
	AReason      string `json:"gate_a_reason"`
	AMethod      string `json:"gate_a_method"`
	BOK          bool   `json:"gate_b_passed"`
	BReason      string `json:"gate_b_reason"`
	COK          bool   `json:"gate_c_passed"`
	CReason      string `json:"gate_c_reason"`
	DiskExists   bool   `json:"disk_exists"`
	IsStale      bool   `json:"is_stale"`
	Decision     string `json:"final_decision"`
	At           int64  `json:"evaluated_at"`
}

// EpisodeChange is one atomic write to an episode: the episode row as it
// should be stored (created when new), hydration rows to append, gate
// results to append, and a code change applied in the same transaction.
// When Episode.Seq is 0 the store assigns the next number of the session.
// Episode.Rows counts the stored rows and Rows together: when the stored
// episode already holds a different number than Episode.Rows - len(Rows),
// someone else appended meanwhile and the change is a conflict wrapping
// ErrEpisodeChanged, with nothing written.
type EpisodeChange struct {
	Episode Episode
	Rows    []HydrationRow
	Gates   []GateResult
	Code    *CodeChange
}

// CodeStore keeps code memory: repositories, files, entities, the vault of
// artifacts, the ledger, episodes, hydration tracking and gate results.
type CodeStore interface {
	// PutCodeRepo registers or updates a repository root.
	PutCodeRepo(ctx context.Context, r CodeRepo) error
	CodeRepo(ctx context.Context, id string) (CodeRepo, error)
	CodeRepos(ctx context.Context) ([]CodeRepo, error)
	// ApplyCode applies a change atomically.
	ApplyCode(ctx context.Context, c CodeChange) error
	CodeFiles(ctx context.Context, repoID string) ([]CodeFile, error)
	// CodeEntities lists entities matching f, by repository and key.
	CodeEntities(ctx context.Context, f CodeEntityFilter) ([]CodeEntity, error)
	// CodeEntitiesByKey finds an entity key in every repository holding it.
	CodeEntitiesByKey(ctx context.Context, key string) ([]CodeEntity, error)
	Artifact(ctx context.Context, hash string) (Artifact, error)
	// Artifacts returns the artifacts of hashes that exist, by hash.
	Artifacts(ctx context.Context, hashes []string) (map[string]Artifact, error)
	// RedactArtifact forgets an artifact: its content becomes
	// RedactedContent and the original text is overwritten. Its hash, type
	// and time remain, so the entities, ledger entries, hydration rows and
	// gate results naming it still resolve. Every repository with an
	// entity on it has its IndexedAt raised to at least at, so every
	// process rebuilds its search index. Redacting a redacted artifact
	// changes nothing.
	RedactArtifact(ctx context.Context, hash string, at int64) (Artifact, error)
	// CodeLedger lists an entity's transitions in order.
	CodeLedger(ctx context.Context, repoID, key string) ([]CodeTransition, error)
	// ApplyEpisode writes an episode change atomically and returns the
	// episode as stored. An episode id already used by another session is
	// a conflict.
	ApplyEpisode(ctx context.Context, c EpisodeChange) (Episode, error)
	// Episode returns one episode (not_found when unknown).
	Episode(ctx context.Context, id string) (Episode, error)
	// CodeSessions lists the sessions that have episodes, by id.
	CodeSessions(ctx context.Context) ([]string, error)
	// SessionEpisodes lists a session's episodes by Seq.
	SessionEpisodes(ctx context.Context, sessionID string) ([]Episode, error)
	// HydrationRows lists an episode's rows by Seq.
	HydrationRows(ctx context.Context, episodeID string) ([]HydrationRow, error)
	// SessionHydrationRows lists the rows of every episode of a session,
	// by episode Seq and row Seq.
	SessionHydrationRows(ctx context.Context, sessionID string) ([]HydrationRow, error)
	// EntityHydrationRows lists the rows that hydrated an entity, oldest
	// first.
	EntityHydrationRows(ctx context.Context, repoID, key string) ([]HydrationRow, error)
	// GateResults lists an episode's gate results in evaluation order.
	GateResults(ctx context.Context, episodeID string) ([]GateResult, error)
}
