package main

import (
	"path/filepath"
	"testing"
)

// The command line's creating commands take --idempotency-key: running one
// again with the same key returns the first record.
func TestIdempotencyKeyFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	type rec struct {
		ID string `json:"id"`
	}
	for _, args := range [][]string{
		{"capsule", "open", "--scope", "session=s1", "--idempotency-key", "c"},
		{"log", "--scope", "session=s1", "--idempotency-key", "l", "a message"},
		{"think", "--idempotency-key", "t", "a thought"},
	} {
		first := decode[rec](t, mustCLI(t, db, append([]string{"--json"}, args...)...))
		again := decode[rec](t, mustCLI(t, db, append([]string{"--json"}, args...)...))
		if first.ID == "" || again.ID != first.ID {
			t.Errorf("cairn %v twice: %q then %q", args, first.ID, again.ID)
		}
	}
}
