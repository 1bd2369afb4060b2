package memory

import (
	"context"
	"strings"
)

// CandidateKind says what a knowledge-graph candidate would become.
type CandidateKind string

// Candidate kinds.
const (
	CandidateEntity CandidateKind = "entity"
	CandidateEdge   CandidateKind = "edge"
)

// Candidate statuses: staged candidates are pending until a moderator
// approves (promotes) or rejects them.
const (
	CandidatePending  = "pending"
	CandidateApproved = "approved"
	CandidateRejected = "rejected"
)

// KGCandidate is a proposed entity or edge, staged from a thought for
// moderation: nothing of it is in the graph until it is approved. An
// entity candidate has Name and EntityType; an edge candidate has
// SourceName, Relation and TargetName (entity names, not ids: the
// entities may not exist yet).
type KGCandidate struct {
	ID   string        `json:"id"`
	Kind CandidateKind `json:"kind"`
	// Name and EntityType describe an entity candidate.
	Name       string `json:"name,omitempty"`
	EntityType string `json:"entity_type,omitempty"`
	// SourceName, Relation and TargetName describe an edge candidate
	// (rel_type in the specification).
	SourceName string `json:"source_name,omitempty"`
	Relation   string `json:"rel_type,omitempty"`
	TargetName string `json:"target_name,omitempty"`
	// Data is a JSON object: what the extractor saw (the sentence, the
	// pattern).
	Data RawObject `json:"data"`
	// Confidence is in [0, 1].
	Confidence float64 `json:"confidence"`
	// SourceThoughtID is the thought the candidate was extracted from.
	SourceThoughtID string `json:"source_thought_id"`
	// Status is pending, approved or rejected.
	Status string `json:"status"`
	// CreatedAt and DecidedAt are Unix milliseconds (DecidedAt 0 while
	// pending).
	CreatedAt int64 `json:"created_at"`
	DecidedAt int64 `json:"decided_at,omitempty"`
	// PromotedID is the entity or edge an approved candidate created or
	// was merged into.
	PromotedID string `json:"promoted_id,omitempty"`
	// Feedback is the moderator's note on the decision.
	Feedback string `json:"feedback,omitempty"`
	Scope    Scope  `json:"scopeIds"`
}

// Key is what deduplicates candidates and blocklist entries: an entity
// candidate's name in lower case; an edge candidate's source name,
// relation and target name, lower case, separated by " -> ".
func (c KGCandidate) Key() string {
	if c.Kind == CandidateEdge {
		return EdgeKey(c.SourceName, c.Relation, c.TargetName)
	}
	return NameKey(c.Name)
}

// NameKey is an entity name as the graph matches it: in any case.
func NameKey(name string) string { return strings.ToLower(name) }

// EdgeKey is an edge's key by entity names and relation, in any case.
func EdgeKey(source, relation, target string) string {
	return NameKey(source) + " -> " + strings.ToLower(relation) + " -> " + NameKey(target)
}

// CandidateFilter selects candidates. Zero fields select everything.
type CandidateFilter struct {
	// IDs restricts to these candidates.
	IDs  []string
	Kind CandidateKind
	// Status is pending, approved or rejected ("" for all).
	Status          string
	MinConfidence   float64
	SourceThoughtID string
	// Offset skips that many matches; Limit caps the page (default 100).
	Offset, Limit int
}

// StageResult reports what StageCandidates stored and what it left out.
type StageResult struct {
	// Staged are the candidates stored, as stored.
	Staged []KGCandidate
	// Skipped are the candidates left out, each with Feedback saying why:
	// "blocked", "pending" (an equal candidate waits for moderation),
	// "exists" (the graph has the entity or edge already).
	Skipped []KGCandidate
}

// BlockedKey is an entry of the candidate blocklist: a key (see
// KGCandidate.Key) that is never staged again.
type BlockedKey struct {
	Kind CandidateKind `json:"kind"`
	Key  string        `json:"key"`
	// CandidateID is the rejected candidate that blocked it.
	CandidateID string `json:"candidate_id"`
	CreatedAt   int64  `json:"created_at"`
}

// CandidateDecision approves or rejects one pending candidate.
type CandidateDecision struct {
	ID string
	// Status is CandidateApproved or CandidateRejected.
	Status    string
	DecidedAt int64
	Feedback  string
	// Entities are written (PutEntity semantics: created, or an existing
	// id updated) and Edge added, in the same transaction, when a
	// candidate is approved: the entities it creates or merges into, and
	// for an edge candidate its edge (nil when it merges into an edge
	// that exists). PromotedID names the record the candidate became.
	Entities   []KGEntity
	Edge       *KGEdge
	PromotedID string
	// Block adds the candidate's key to the blocklist (on reject).
	Block bool
}

// CandidateStore keeps knowledge-graph candidates and the blocklist. A
// store that implements it lets inner_voice stage candidates and
// knowledgegraph_moderate decide them. Candidates follow their source
// thought: when it is forgotten (RedactThought) its pending candidates
// are deleted and its decided ones lose the sentence they quote
// (data.sentence); when it is deleted (FinalizeRemoval) its candidates
// stay, without that sentence.
type CandidateStore interface {
	// StageCandidates stores new pending candidates (complete records: ids,
	// times, status pending) in one transaction. A candidate is skipped,
	// not stored, when its key is on the blocklist (an edge also when
	// either entity name is), when a pending candidate of the same kind has
	// its key (or an earlier one of the batch does), or when the graph
	// already has it: an entity of that name (any case), or an edge of
	// that relation between entities of those names.
	StageCandidates(ctx context.Context, cs []KGCandidate) (StageResult, error)
	// Candidates lists candidates by filter, highest confidence first,
	// then oldest, then by id.
	Candidates(ctx context.Context, f CandidateFilter) ([]KGCandidate, error)
	// DecideCandidate approves or rejects a pending candidate, writing
	// what an approval creates and what a block adds, all in one
	// transaction; it returns the candidate as decided. A candidate that
	// does not exist is not_found; one already decided is a conflict (and
	// nothing is written).
	DecideCandidate(ctx context.Context, d CandidateDecision) (KGCandidate, error)
	// Blocklist lists the blocked keys, oldest first.
	Blocklist(ctx context.Context) ([]BlockedKey, error)
	// Unblock removes a key from the blocklist; not_found when it is not
	// there.
	Unblock(ctx context.Context, kind CandidateKind, key string) error
}
