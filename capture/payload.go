package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Agent names a coding agent whose hooks cairn understands.
type Agent string

// The agents cairn installs hooks for.
const (
	ClaudeCode Agent = "claude-code"
	GeminiCLI  Agent = "gemini-cli"
	Cursor     Agent = "cursor"
)

// Agents lists the supported agents, in the order help text shows them.
var Agents = []Agent{ClaudeCode, GeminiCLI, Cursor}

// ParseAgent reads an agent's name (a few aliases are accepted: claude,
// gemini).
func ParseAgent(s string) (Agent, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "claude-code", "claude", "claudecode":
		return ClaudeCode, nil
	case "gemini-cli", "gemini":
		return GeminiCLI, nil
	case "cursor":
		return Cursor, nil
	}
	names := make([]string, len(Agents))
	for i, a := range Agents {
		names[i] = string(a)
	}
	return "", memory.Errorf(memory.CodeInvalidParams, "unknown agent %q (agents: %s)", s, strings.Join(names, ", "))
}

// EventKind is what happened, whatever the agent calls it.
type EventKind string

// The events cairn records.
const (
	// EventSessionStart opens the session's capsule and returns context.
	EventSessionStart EventKind = "session-start"
	// EventPrompt is a prompt the user submitted.
	EventPrompt EventKind = "prompt"
	// EventTool is a finished tool call (shell commands and file edits
	// included), successful or not.
	EventTool EventKind = "tool"
	// EventPreCompact comes before the agent compacts its context: the
	// running summary is saved.
	EventPreCompact EventKind = "pre-compact"
	// EventStop ends a turn (the agent's answer, when the agent sends it).
	EventStop EventKind = "stop"
	// EventSessionEnd closes the session's capsule with a summary.
	EventSessionEnd EventKind = "session-end"
)

// EventKinds lists the events, in a session's order.
var EventKinds = []EventKind{EventSessionStart, EventPrompt, EventTool, EventPreCompact, EventStop, EventSessionEnd}

// Event is one hook call, read from the agent's payload.
type Event struct {
	Agent Agent     `json:"agent"`
	Kind  EventKind `json:"kind"`
	// Native is the agent's own name for the event (PostToolUse,
	// AfterTool, afterShellExecution, ...).
	Native    string `json:"native"`
	SessionID string `json:"sessionId"`
	// Cwd is the working directory (Cursor: the first workspace root).
	Cwd string `json:"cwd"`
	// Source says why a session started (startup, resume, clear,
	// compact); Reason why it ended or compacts (exit, clear, auto,
	// manual, ...).
	Source string `json:"source,omitempty"`
	Reason string `json:"reason,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	// ContextIDs are the ids of the records in the session-start context
	// the agent put before the prompt (Gemini CLI, non-interactive).
	ContextIDs []string `json:"contextIds,omitempty"`
	// Message is the agent's last answer (Stop, AfterAgent).
	Message string    `json:"message,omitempty"`
	Tool    *ToolCall `json:"tool,omitempty"`
}

// ToolCall is a finished tool call.
type ToolCall struct {
	// Name is the agent's tool name (Bash, run_shell_command, Edit, ...).
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
	// Output is the tool's result as the agent reported it (text or
	// JSON).
	Output json.RawMessage `json:"output,omitempty"`
	// Error is the failure message of a failed call ("" on success).
	Error string `json:"error,omitempty"`
	// Shell, File and Edits are what the call was, when it ran a shell
	// command or changed a file.
	Shell *ShellRun   `json:"shell,omitempty"`
	File  string      `json:"file,omitempty"`
	Edits []FileEdit  `json:"edits,omitempty"`
	Patch []PatchHunk `json:"patch,omitempty"`
	// Written is the whole new text of a file the call wrote.
	Written *string `json:"written,omitempty"`
}

// ShellRun is a shell command and its outcome.
type ShellRun struct {
	Command string `json:"command"`
	Output  string `json:"output"`
	// ExitCode is nil when the agent does not say.
	ExitCode    *int `json:"exitCode,omitempty"`
	Interrupted bool `json:"interrupted,omitempty"`
	DurationMs  int  `json:"durationMs,omitempty"`
}

// FileEdit replaces Old with New in a file.
type FileEdit struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// PatchHunk is one hunk of a unified diff (Claude Code's structuredPatch).
type PatchHunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// nativeEvents maps each agent's event names to cairn's.
var nativeEvents = map[Agent]map[string]EventKind{
	ClaudeCode: {
		"SessionStart": EventSessionStart, "UserPromptSubmit": EventPrompt, "PostToolUse": EventTool,
		"PostToolUseFailure": EventTool, "PreCompact": EventPreCompact, "Stop": EventStop, "SessionEnd": EventSessionEnd,
	},
	GeminiCLI: {
		"SessionStart": EventSessionStart, "BeforeAgent": EventPrompt, "AfterTool": EventTool,
		"PreCompress": EventPreCompact, "AfterAgent": EventStop, "SessionEnd": EventSessionEnd,
	},
	Cursor: {
		"beforeSubmitPrompt": EventPrompt, "afterShellExecution": EventTool, "afterFileEdit": EventTool,
		"afterMCPExecution": EventTool, "stop": EventStop,
	},
}

// NativeEvents lists the agent's hook events that cairn installs, in a
// session's order.
func NativeEvents(a Agent) []string {
	var out []string
	for _, k := range EventKinds {
		var names []string
		for name, kind := range nativeEvents[a] {
			if kind == k {
				names = append(names, name)
			}
		}
		// Several native events of one kind: in a stable order.
		slices.Sort(names)
		out = append(out, names...)
	}
	return out
}

// MaxPayloadBytes bounds one hook payload.
const MaxPayloadBytes = 16 << 20

// Parse reads one hook payload of agent a. The event is the payload's
// hook_event_name; native, when not empty, is the event the hook was
// installed for, used when the payload does not say. Unknown fields are
// ignored (agents add fields often); a payload that is not a JSON object,
// or names an event cairn does not record, is invalid_params.
func Parse(a Agent, native string, payload []byte) (Event, error) {
	if len(payload) > MaxPayloadBytes {
		return Event{}, memory.Errorf(memory.CodeInvalidParams, "hook payload is %d bytes, over the %d-byte limit", len(payload), MaxPayloadBytes)
	}
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 || payload[0] != '{' {
		return Event{}, memory.Errorf(memory.CodeInvalidParams, "hook payload must be a JSON object")
	}
	var p rawPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return Event{}, memory.Errorf(memory.CodeInvalidParams, "hook payload is not valid JSON for %s", a)
	}
	name := p.HookEventName
	if name == "" {
		name = native
	}
	kind, ok := nativeEvents[a][name]
	if !ok {
		return Event{}, memory.Errorf(memory.CodeInvalidParams, "%s hook event %q is not one cairn records (events: %s)", a, name, strings.Join(NativeEvents(a), ", "))
	}
	ev := Event{Agent: a, Kind: kind, Native: name, SessionID: p.SessionID, Cwd: p.Cwd}
	switch a {
	case Cursor:
		ev.SessionID = p.ConversationID
		if len(p.WorkspaceRoots) > 0 {
			ev.Cwd = p.WorkspaceRoots[0]
		}
		if p.CwdShell != "" && ev.Cwd == "" {
			ev.Cwd = p.CwdShell
		}
		err := parseCursor(&ev, p)
		return ev, err
	}
	switch kind {
	case EventSessionStart:
		ev.Source = firstNonEmpty(p.Source, p.Trigger)
	case EventPrompt:
		ev.Prompt, ev.ContextIDs = withoutHookContext(p.Prompt)
	case EventPreCompact:
		ev.Reason = firstNonEmpty(p.Trigger, p.Reason)
	case EventStop:
		ev.Message = firstNonEmpty(p.LastAssistantMessage, p.PromptResponse)
	case EventSessionEnd:
		ev.Reason = firstNonEmpty(p.Reason, p.Trigger)
	case EventTool:
		ev.Tool = toolCall(a, p)
	}
	return ev, nil
}

// rawPayload holds the fields of every agent's payloads cairn reads.
type rawPayload struct {
	SessionID      string `json:"session_id"`
	HookEventName  string `json:"hook_event_name"`
	Cwd            string `json:"cwd"`
	TranscriptPath string `json:"transcript_path"`
	Source         string `json:"source"`
	Trigger        string `json:"trigger"`
	Reason         string `json:"reason"`
	Prompt         string `json:"prompt"`
	// LastAssistantMessage (Claude Code's Stop) and PromptResponse
	// (Gemini CLI's AfterAgent) are the agent's answer.
	LastAssistantMessage string          `json:"last_assistant_message"`
	PromptResponse       string          `json:"prompt_response"`
	ToolName             string          `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	Error                json.RawMessage `json:"error"`
	IsInterrupt          bool            `json:"is_interrupt"`

	// Cursor.
	ConversationID string          `json:"conversation_id"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	Command        string          `json:"command"`
	CwdShell       string          `json:"cwd_shell"`
	Output         string          `json:"output"`
	Duration       float64         `json:"duration"`
	FilePath       string          `json:"file_path"`
	Edits          []cursorEdit    `json:"edits"`
	ResultJSON     json.RawMessage `json:"result_json"`
	Status         string          `json:"status"`
}

type cursorEdit struct {
	Old string `json:"old_string"`
	New string `json:"new_string"`
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// toolCall reads a Claude Code or Gemini CLI tool call.
func toolCall(a Agent, p rawPayload) *ToolCall {
	t := &ToolCall{Name: p.ToolName, Input: compactJSON(p.ToolInput), Output: compactJSON(p.ToolResponse)}
	t.Error = errorText(p.Error)
	var in struct {
		Command     string          `json:"command"`
		FilePath    string          `json:"file_path"`
		Path        string          `json:"path"`
		Notebook    string          `json:"notebook_path"`
		AbsPath     string          `json:"absolute_path"`
		OldString   string          `json:"old_string"`
		NewString   string          `json:"new_string"`
		Content     *string         `json:"content"`
		Edits       []cursorEdit    `json:"edits"`
		Instruction json.RawMessage `json:"instruction"`
	}
	json.Unmarshal(p.ToolInput, &in)
	switch {
	case in.Command != "" && isShellTool(a, p.ToolName):
		t.Shell = shellRun(a, in.Command, p.ToolResponse, t.Error, p.IsInterrupt)
	case in.FilePath != "" || in.Path != "" || in.Notebook != "" || in.AbsPath != "":
		t.File = firstNonEmpty(in.FilePath, in.Path, in.Notebook, in.AbsPath)
		if isEditTool(p.ToolName) {
			switch {
			case in.OldString != "" || in.NewString != "":
				t.Edits = []FileEdit{{Old: in.OldString, New: in.NewString}}
			case len(in.Edits) > 0:
				for _, e := range in.Edits {
					t.Edits = append(t.Edits, FileEdit{Old: e.Old, New: e.New})
				}
			case in.Content != nil:
				t.Written = in.Content
			}
			var resp struct {
				StructuredPatch []PatchHunk `json:"structuredPatch"`
			}
			if json.Unmarshal(p.ToolResponse, &resp) == nil && len(resp.StructuredPatch) > 0 {
				t.Patch = resp.StructuredPatch
			}
		}
	}
	if t.Error == "" {
		t.Error = responseError(a, p.ToolResponse)
	}
	return t
}

// isShellTool reports whether the tool runs a shell command.
func isShellTool(a Agent, name string) bool {
	switch name {
	case "Bash", "run_shell_command", "Shell", "shell", "BashOutput":
		return true
	}
	return false
}

// isEditTool reports whether the tool changes a file.
func isEditTool(name string) bool {
	switch name {
	case "Edit", "MultiEdit", "Write", "NotebookEdit", "replace", "write_file", "edit", "write":
		return true
	}
	return false
}

// shellRun reads a shell command's outcome from the tool's response.
func shellRun(a Agent, command string, resp json.RawMessage, failure string, interrupted bool) *ShellRun {
	s := &ShellRun{Command: command, Interrupted: interrupted}
	var r struct {
		Stdout        string          `json:"stdout"`
		Stderr        string          `json:"stderr"`
		Interrupted   bool            `json:"interrupted"`
		ExitCode      *int            `json:"exitCode"`
		ExitCodeSnake *int            `json:"exit_code"`
		LLMContent    json.RawMessage `json:"llmContent"`
		ReturnDisplay json.RawMessage `json:"returnDisplay"`
		Output        string          `json:"output"`
	}
	if len(resp) > 0 && resp[0] == '"' {
		var text string
		json.Unmarshal(resp, &text)
		s.Output = text
	} else if json.Unmarshal(resp, &r) == nil {
		s.Interrupted = s.Interrupted || r.Interrupted
		s.ExitCode = r.ExitCode
		if s.ExitCode == nil {
			s.ExitCode = r.ExitCodeSnake
		}
		switch {
		case r.Stdout != "" || r.Stderr != "":
			s.Output = joinNonEmpty("\n", r.Stdout, r.Stderr)
		case r.Output != "":
			s.Output = r.Output
		case len(r.LLMContent) > 0:
			s.Output = jsonText(r.LLMContent)
		case len(r.ReturnDisplay) > 0:
			s.Output = jsonText(r.ReturnDisplay)
		}
	}
	if s.ExitCode == nil {
		// Gemini CLI reports "Exit Code: N" in the tool's text; Claude
		// Code reports a failure's exit code in its error text.
		if c, ok := exitCodeIn(s.Output); ok {
			s.ExitCode = &c
		} else if c, ok := exitCodeIn(failure); ok {
			s.ExitCode = &c
		}
	}
	if failure != "" && s.Output == "" {
		s.Output = failure
	}
	return s
}

// exitCodeIn finds "Exit code N" / "Exit Code: N" / "exit status N" in text.
func exitCodeIn(text string) (int, bool) {
	l := strings.ToLower(text)
	for _, p := range []string{"exit code: ", "exit code ", "exit status "} {
		if i := strings.Index(l, p); i >= 0 {
			var n int
			if _, err := fmt.Sscanf(l[i+len(p):], "%d", &n); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// errorText reads an "error" field given as a string or an object with
// a message.
func errorText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return o.Message
	}
	return string(raw)
}

// responseError reads the failure inside a tool's response (Gemini CLI's
// error field, an MCP result's isError).
func responseError(a Agent, resp json.RawMessage) string {
	var r struct {
		Error   json.RawMessage `json:"error"`
		IsError bool            `json:"isError"`
		Content json.RawMessage `json:"content"`
	}
	if len(resp) == 0 || resp[0] != '{' || json.Unmarshal(resp, &r) != nil {
		return ""
	}
	if e := errorText(r.Error); e != "" {
		return e
	}
	if r.IsError {
		return firstNonEmpty(jsonText(r.Content), "the tool reported an error")
	}
	return ""
}

// parseCursor reads Cursor's event-specific fields.
func parseCursor(ev *Event, p rawPayload) error {
	switch ev.Native {
	case "beforeSubmitPrompt":
		ev.Prompt = p.Prompt
	case "stop":
		ev.Reason = p.Status
	case "afterShellExecution":
		ev.Tool = &ToolCall{Name: "shell", Input: mustJSON(map[string]string{"command": p.Command}),
			Shell: &ShellRun{Command: p.Command, Output: p.Output, DurationMs: int(p.Duration)}}
		if c, ok := exitCodeIn(p.Output); ok {
			ev.Tool.Shell.ExitCode = &c
		}
	case "afterFileEdit":
		t := &ToolCall{Name: "edit", File: p.FilePath, Input: mustJSON(map[string]string{"file_path": p.FilePath})}
		for _, e := range p.Edits {
			t.Edits = append(t.Edits, FileEdit{Old: e.Old, New: e.New})
		}
		ev.Tool = t
	case "afterMCPExecution":
		in := compactJSON(p.ToolInput)
		// Cursor sends the MCP tool's input as a JSON string.
		var s string
		if json.Unmarshal(in, &s) == nil && json.Valid([]byte(s)) {
			in = compactJSON(json.RawMessage(s))
		}
		out := compactJSON(p.ResultJSON)
		if json.Unmarshal(out, &s) == nil && json.Valid([]byte(s)) {
			out = compactJSON(json.RawMessage(s))
		}
		ev.Tool = &ToolCall{Name: p.ToolName, Input: in, Output: out}
		ev.Tool.Error = responseError(Cursor, out)
	}
	return nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return nil
	}
	return buf.Bytes()
}

// jsonText renders a JSON value as text: a string as itself, an MCP
// content list as its text parts, anything else as compact JSON.
func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil && len(parts) > 0 {
		var texts []string
		for _, p := range parts {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
	}
	return string(compactJSON(raw))
}

func joinNonEmpty(sep string, ss ...string) string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, sep)
}

// withoutHookContext removes the <hook_context> blocks Gemini CLI puts
// before a prompt in non-interactive mode: session-start context (cairn's
// own) that the user did not write. It returns the prompt and the ids of
// the records the context showed.
func withoutHookContext(prompt string) (string, []string) {
	var ids []string
	for {
		i := strings.Index(prompt, "<hook_context>")
		if i < 0 {
			return prompt, ids
		}
		j := strings.Index(prompt[i:], "</hook_context>")
		if j < 0 {
			return prompt, ids
		}
		for _, m := range recordID.FindAllStringSubmatch(prompt[i:i+j], -1) {
			if !slices.Contains(ids, m[1]) {
				ids = append(ids, m[1])
			}
		}
		prompt = strings.TrimSpace(prompt[:i] + prompt[i+j+len("</hook_context>"):])
	}
}

// recordID is a cairn record id as context shows it.
var recordID = regexp.MustCompile("`((?:obs|sum|cap|th|ent)_[0-9A-Za-z_-]+)`")
