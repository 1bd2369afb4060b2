// Package sample holds a small, hand-written memory of a coding agent's two
// working sessions (observations, capsules, summaries and a pin) in cairn's
// JSON Lines import format. `cairn demo` loads it into a temporary database;
// tests use it as a realistic fixture.
package sample

import _ "embed"

// AgentSessions is the sample in JSON Lines.
//
//go:embed agent-sessions.jsonl
var AgentSessions []byte

// Now is a clock reading shortly after the sample's last record
// (2026-03-04T10:00:00Z), in Unix milliseconds, for deterministic demos.
const Now = 1772618400000
