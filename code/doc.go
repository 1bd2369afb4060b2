// Package code is cairn's code memory: it resolves source files into
// entities ("path::Symbol"), keeps their text as content-addressed
// artifacts in a vault, moves them through the states PROPOSED,
// AUTHORITATIVE, SUPERSEDED and TOMBSTONED with every transition in a
// ledger, evaluates promotion gates (A structural, B authority, C external
// truth), verifies entities against the disk (External Truth
// Verification, with a TTL cache confined to registered repository roots),
// tracks what each episode of a session hydrated (checksummed, so loss is
// detected), hydrates the entities a query needs within a hard budget, and
// forgets an artifact on request (its text erased, its hash kept for the
// ledger).
//
// It stores everything through memory.CodeStore.
package code
