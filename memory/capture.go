package memory

import "context"

// CapsuleQuery selects capsules.
type CapsuleQuery struct {
	// Scope filters capsules by their scope (AND over the keys set).
	Scope Scope
	// Status is open, closed or "" for both.
	Status CapsuleStatus
	// Limit caps the result (default 20, at most 1000).
	Limit int
}

// CapsuleLister finds capsules without knowing their ids: the context a
// session starts with, and the resources an MCP client lists.
type CapsuleLister interface {
	// OpenCapsuleOf returns the open capsule of a session (not_found when
	// it has none), with its observation ids.
	OpenCapsuleOf(ctx context.Context, sessionID string) (Capsule, error)
	// Capsules returns the capsules q selects, most recent first (by
	// closedAt for closed ones, else openedAt; ties by id), with their
	// observation ids.
	Capsules(ctx context.Context, q CapsuleQuery) ([]Capsule, error)
	// CompleteScope returns up to limit distinct values of one scope
	// dimension ("sessionId", "repoId", "agentId", "userId") that start
	// with prefix, found on observations and capsules, sorted.
	CompleteScope(ctx context.Context, key, prefix string, limit int) ([]string, error)
}
