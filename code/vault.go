package code

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/cairnhq/cairn/memory"
)

// HashArtifact returns the vault address of content: its lowercase hex
// SHA-256.
func HashArtifact(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// NewArtifact builds an artifact of type t holding content, created at
// ms (Unix milliseconds).
func NewArtifact(t memory.ArtifactType, content string, ms int64) memory.Artifact {
	return memory.Artifact{Hash: HashArtifact(content), Type: t, Content: content, CreatedAt: ms}
}

// short abbreviates a hash for reasons and logs.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
