package code

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// ValidHash reports whether h is a vault address: 64 lowercase hex digits.
func ValidHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := range len(h) {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ForgetArtifact forgets an artifact of the vault: its text becomes
// memory.RedactedContent and is overwritten on disk. Its hash, type and
// time stay, so the ledger, hydration history and gate results that name
// it still resolve; the entities whose artifact it is are neither searched
// nor hydrated any more (a hydration that tracked one reports it stale),
// until their text is stored again (a proposal of the same text, or an
// index that reads the file anew). The entities leave the retrieval index,
// and its files no longer hold their text when the call returns (should
// that step fail, the next maintenance rewrites them). Forgetting twice
// changes nothing.
func (m *Memory) ForgetArtifact(ctx context.Context, hash string) (memory.Artifact, error) {
	if !ValidHash(hash) {
		return memory.Artifact{}, memory.Errorf(memory.CodeInvalidParams, "artifact hash %q: want 64 lowercase hex digits (the SHA-256 of its content)", hash)
	}
	a, err := m.store.RedactArtifact(ctx, hash, m.nowMs())
	if err != nil {
		return a, err
	}
	if m.snap != nil {
		if err := m.snap.Snapshot(ctx, func(r memory.Reader) error { return m.index.Forget(ctx, r) }); err != nil {
			m.log.Warn("the forgotten code stays in the retrieval index's files until its next maintenance", "err", memory.Public(err).Message)
		}
	}
	m.log.Info("artifact forgotten", "artifact", short(hash))
	return a, nil
}
