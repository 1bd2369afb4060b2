// Package capture turns what coding agents report through their hooks
// into cairn records: it parses each agent's hook payloads (Claude Code,
// Gemini CLI, Cursor) into events, decides what an event records (tool
// calls with their input summarised and output capped, shell commands
// with exit codes, file edits as diffs, errors, prompts), redacts secrets
// before anything is written, merges cairn's entries into an agent's
// settings file, renders the context a new session starts with (and
// answers the context tools of agents without hooks, Contexts), and keeps
// a spool of writes that could not reach the database.
//
// It never opens a database: its Writer applies a batch to the store the
// root package gives it, with the engine's record checks and id
// generator.
package capture
