package cairn

import (
	"slices"
	"time"

	"github.com/cairnhq/cairn/capture"
)

// The capture hooks as the CLI runs them: parsing an agent's hook
// payload, deciding the batch it records, the spool, and installing
// cairn's entries in an agent's settings (see the capture package).

type (
	// HookAgent is a coding agent whose hooks cairn reads.
	HookAgent = capture.Agent
	// HookEvent is one hook call, parsed.
	HookEvent = capture.Event
	// HookBatch is everything one hook call writes.
	HookBatch = capture.Batch
	// HookSpool keeps the batches a hook could not write yet.
	HookSpool = capture.Spool
	// HookChange is a planned change of an agent's settings file.
	HookChange = capture.Change
	// HookInstallOptions tune the hooks installed.
	HookInstallOptions = capture.InstallOptions
	// HookSettingsScope says which of an agent's settings files.
	HookSettingsScope = capture.SettingsScope
)

// The agents, the session-start event, and the bound of a payload.
const (
	AgentClaudeCode     = capture.ClaudeCode
	AgentGeminiCLI      = capture.GeminiCLI
	AgentCursor         = capture.Cursor
	HookSessionStart    = capture.EventSessionStart
	MaxHookPayloadBytes = capture.MaxPayloadBytes
)

// HookAgents lists the supported agents, in the order help text shows
// them.
func HookAgents() []HookAgent { return slices.Clone(capture.Agents) }

// ParseHookAgent reads an agent's name.
func ParseHookAgent(s string) (HookAgent, error) { return capture.ParseAgent(s) }

// NativeHookEvents are the agent's own names of the events cairn hooks.
func NativeHookEvents(a HookAgent) []string { return capture.NativeEvents(a) }

// ParseHook reads one hook call's payload, as the agent sends it for its
// event native.
func ParseHook(a HookAgent, native string, payload []byte) (HookEvent, error) {
	return capture.Parse(a, native, payload)
}

// HookBatchOptions decide what a hook records beyond its payload.
type HookBatchOptions struct {
	// Now is the hook's time; it dates the batch and its ids.
	Now func() time.Time
	// NoPrompts leaves the user's prompts out; NoRedact keeps secrets.
	NoPrompts, NoRedact bool
}

// BuildHookBatch decides what a hook call records, in the repository it
// ran in: its deny list applied, secrets redacted, every record with its
// id (made by the one id generator).
func BuildHookBatch(ev HookEvent, o HookBatchOptions) (HookBatch, error) {
	repo := capture.FindRepo(ev.Cwd)
	co := capture.Options{Deny: capture.LoadDeny(repo.Root), NewID: NewIDs(o.Now).New, NoPrompts: o.NoPrompts}
	if !o.NoRedact {
		co.Redactor = &capture.Redactor{}
	}
	return capture.Build(ev, repo, o.Now().UnixMilli(), co)
}

// HookSettingsPath is the agent's settings file of a scope.
func HookSettingsPath(a HookAgent, s HookSettingsScope, home, project string) (string, error) {
	return capture.SettingsPath(a, s, home, project)
}

// PlanHookInstall plans adding cairn's hooks to the settings file at
// path (current is its text).
func PlanHookInstall(a HookAgent, path, current, bin, db string, o HookInstallOptions) (HookChange, error) {
	return capture.PlanInstall(a, path, current, bin, db, o)
}

// PlanHookUninstall plans removing cairn's hooks from a settings file.
func PlanHookUninstall(a HookAgent, path, current string) (HookChange, error) {
	return capture.PlanUninstall(a, path, current)
}

// ApplyHookChange writes a planned change, backing the file up first.
func ApplyHookChange(c *HookChange, now time.Time) error { return capture.Apply(c, now) }

// InstalledHooks lists cairn's hooks in a settings file's text.
func InstalledHooks(a HookAgent, current string) (map[string]string, error) {
	return capture.Installed(a, current)
}
