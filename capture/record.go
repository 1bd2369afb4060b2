package capture

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Batch is everything one hook call writes, decided before any database
// is opened: it is what the spool keeps when the write cannot happen now,
// and applying it twice writes it once (every record has its id).
type Batch struct {
	// ID names the batch (its spool file); ULID-like, time-ordered.
	ID    string       `json:"id"`
	Agent Agent        `json:"agent"`
	Event EventKind    `json:"event"`
	Scope memory.Scope `json:"scopeIds"`
	// TS is when the hook ran, in Unix milliseconds.
	TS int64 `json:"ts"`
	// Branch is the repository's branch when the hook ran.
	Branch string `json:"branch,omitempty"`
	// Open asks for the session's capsule to be open (opened with this
	// id and intent when the session has none).
	Open *CapsuleOpen `json:"open,omitempty"`
	// Observations are appended in order; they join the session's open
	// capsule.
	Observations []Observation `json:"observations,omitempty"`
	// Summarize writes the running summary of the session's open capsule
	// (PreCompact); Close closes it with a final summary (SessionEnd).
	Summarize bool `json:"summarize,omitempty"`
	Close     bool `json:"close,omitempty"`
}

// CapsuleOpen is the capsule a session's first hook opens.
type CapsuleOpen struct {
	ID     string `json:"id"`
	Intent string `json:"intent"`
}

// Observation is an observation a batch writes.
type Observation struct {
	ID         string          `json:"id"`
	Kind       memory.Kind     `json:"kind"`
	Content    string          `json:"content"`
	Provenance json.RawMessage `json:"provenance"`
	TS         int64           `json:"ts"`
}

// Options decide what a hook records.
type Options struct {
	// Redactor replaces secrets; nil records text as it is (not the
	// default: see DefaultOptions).
	Redactor *Redactor
	// Deny is the repository's deny list: paths whose content is never
	// recorded.
	Deny *DenyList
	// NoPrompts leaves user prompts out.
	NoPrompts bool
	// MaxOutputBytes caps a tool's output (head and tail kept); default
	// DefaultMaxOutputBytes.
	MaxOutputBytes int
	// NewID makes record ids ("obs", "cap", "hook" prefixes).
	NewID func(prefix string) string
}

// DefaultMaxOutputBytes is how much of a tool's output an observation
// keeps by default: its first and last 2 KiB.
const DefaultMaxOutputBytes = 4 << 10

// MaxInputBytes is how much of a tool's input summary an observation
// keeps.
const MaxInputBytes = 1 << 10

// Repo is where the agent works: the git root of its working directory
// (the directory itself outside a repository) and the branch.
type Repo struct {
	Root   string
	Branch string
}

// Build decides what ev records. tsMs is the hook's time. Every text is
// redacted (when o.Redactor is set) and content under a denied path is
// left out; ids come from o.NewID.
func Build(ev Event, repo Repo, tsMs int64, o Options) (Batch, error) {
	if ev.SessionID == "" {
		return Batch{}, memory.Errorf(memory.CodeInvalidParams, "%s %s payload has no session id", ev.Agent, ev.Native)
	}
	if o.NewID == nil {
		return Batch{}, memory.Errorf(memory.CodeInternal, "capture: no id source")
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	b := Batch{ID: o.NewID("hook"), Agent: ev.Agent, Event: ev.Kind, TS: tsMs, Branch: repo.Branch,
		Scope: memory.Scope{SessionID: ev.SessionID, RepoID: repo.Root, AgentID: string(ev.Agent)}}
	if err := b.Scope.Validate(); err != nil {
		return Batch{}, err
	}
	intent := fmt.Sprintf("%s session in %s", ev.Agent, filepath.Base(repo.Root))
	if repo.Branch != "" {
		intent += " (branch " + repo.Branch + ")"
	}
	open := &CapsuleOpen{ID: o.NewID("cap"), Intent: intent}
	prov := func(extra map[string]any) json.RawMessage {
		m := map[string]any{"source": "hook", "agent": string(ev.Agent), "event": ev.Native}
		if repo.Branch != "" {
			m["branch"] = repo.Branch
		}
		for k, v := range extra {
			m[k] = v
		}
		p, _ := json.Marshal(m)
		return p
	}
	add := func(kind memory.Kind, content string, p json.RawMessage) {
		content, found := o.Redactor.Redact(storable(content))
		if len(found) > 0 {
			var m map[string]any
			json.Unmarshal(p, &m)
			m["redactions"] = countKinds(found)
			p, _ = json.Marshal(m)
		}
		if strings.TrimSpace(content) == "" {
			return
		}
		b.Observations = append(b.Observations, Observation{ID: o.NewID("obs"), Kind: kind, Content: content, Provenance: p, TS: tsMs})
	}
	switch ev.Kind {
	case EventSessionStart:
		b.Open = open
	case EventPrompt:
		b.Open = open
		if !o.NoPrompts && strings.TrimSpace(ev.Prompt) != "" {
			var extra map[string]any
			if len(ev.ContextIDs) > 0 {
				// The memories the agent had in context with this prompt.
				extra = map[string]any{"contextIds": ev.ContextIDs}
			}
			add(memory.KindMessage, "user: "+capText(ev.Prompt, o.MaxOutputBytes), prov(extra))
		}
	case EventStop:
		if ev.Message != "" {
			add(memory.KindMessage, "assistant: "+capText(ev.Message, o.MaxOutputBytes), prov(nil))
		}
		// Cursor has no compaction or session-end hook: each turn's end
		// keeps the running summary current instead.
		b.Summarize = ev.Agent == Cursor
	case EventPreCompact:
		b.Summarize = true
	case EventSessionEnd:
		b.Close = true
	case EventTool:
		if ev.Tool == nil {
			break
		}
		kind, content, extra := describeTool(ev.Tool, repo.Root, o)
		add(kind, content, prov(extra))
	}
	return b, nil
}

// storable makes a tool's output text the store takes: bytes that are
// not UTF-8 and NULs (a binary file's content) become U+FFFD. The store
// refuses either, and a refused batch would stay in the spool.
func storable(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

func countKinds(found []Finding) map[string]int {
	m := map[string]int{}
	for _, f := range found {
		m[f.Kind]++
	}
	return m
}

// describeTool renders a tool call as an observation: its kind, its
// content and provenance fields.
func describeTool(t *ToolCall, root string, o Options) (memory.Kind, string, map[string]any) {
	extra := map[string]any{"tool": t.Name}
	if t.File != "" {
		extra["file"] = relPath(root, t.File)
		if o.Deny.Match(root, t.File) {
			extra["denied"] = true
			verb := "used"
			if isEditTool(t.Name) {
				verb = "changed"
			}
			return memory.KindToolCall, fmt.Sprintf("%s %s %s (content not recorded: the path is on the deny list)", t.Name, verb, relPath(root, t.File)), extra
		}
	}
	switch {
	case t.Shell != nil:
		s := t.Shell
		var b strings.Builder
		b.WriteString("$ " + s.Command + "\n")
		out, cut := capHeadTail(s.Output, o.MaxOutputBytes)
		if out != "" {
			b.WriteString(out)
			if !strings.HasSuffix(out, "\n") {
				b.WriteString("\n")
			}
		}
		kind := memory.KindCommand
		switch {
		case s.Interrupted:
			b.WriteString("[interrupted]")
			extra["interrupted"] = true
		case s.ExitCode != nil:
			fmt.Fprintf(&b, "[exit %d]", *s.ExitCode)
			extra["exitCode"] = *s.ExitCode
			if *s.ExitCode != 0 {
				kind = memory.KindError
			}
		case t.Error != "":
			b.WriteString("[failed]")
			kind = memory.KindError
		}
		if cut > 0 {
			extra["cutBytes"] = cut
		}
		return kind, strings.TrimRight(b.String(), "\n"), extra
	case t.Error != "":
		in, _ := capHeadTail(inputSummary(t.Input), MaxInputBytes)
		msg, cut := capHeadTail(t.Error, o.MaxOutputBytes)
		if cut > 0 {
			extra["cutBytes"] = cut
		}
		return memory.KindError, fmt.Sprintf("%s %s failed: %s", t.Name, in, msg), extra
	case t.File != "" && (len(t.Edits) > 0 || len(t.Patch) > 0 || t.Written != nil):
		diff := fileDiff(relPath(root, t.File), t)
		d, cut := capHeadTail(diff, o.MaxOutputBytes*2)
		if cut > 0 {
			extra["cutBytes"] = cut
		}
		return memory.KindFileDiff, d, extra
	}
	in, _ := capHeadTail(inputSummary(t.Input), MaxInputBytes)
	content := t.Name
	if in != "" {
		content += " " + in
	}
	if out := jsonText(t.Output); out != "" {
		text, cut := capHeadTail(out, o.MaxOutputBytes)
		if cut > 0 {
			extra["cutBytes"] = cut
		}
		content += "\n→ " + text
	}
	return memory.KindToolCall, content, extra
}

// inputSummary renders a tool's input: its compact JSON (a string input
// as itself), capped by the caller.
func inputSummary(in json.RawMessage) string { return jsonText(in) }

// fileDiff renders a file change as a unified diff.
func fileDiff(path string, t *ToolCall) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", path, path)
	switch {
	case len(t.Patch) > 0:
		for _, h := range t.Patch {
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
			for _, l := range h.Lines {
				b.WriteString(l + "\n")
			}
		}
	case len(t.Edits) > 0:
		for _, e := range t.Edits {
			b.WriteString("@@\n")
			for _, l := range splitLines(e.Old) {
				b.WriteString("-" + l + "\n")
			}
			for _, l := range splitLines(e.New) {
				b.WriteString("+" + l + "\n")
			}
		}
	case t.Written != nil:
		lines := splitLines(*t.Written)
		fmt.Fprintf(&b, "@@ -0,0 +1,%d @@ (file written)\n", len(lines))
		for _, l := range lines {
			b.WriteString("+" + l + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// relPath shows path relative to the repository root when it lies inside.
func relPath(root, path string) string {
	if root == "" || !filepath.IsAbs(path) {
		return filepath.ToSlash(path)
	}
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(path)
}

// capText caps s to max bytes, keeping head and tail.
func capText(s string, max int) string {
	out, _ := capHeadTail(s, max)
	return out
}

// capHeadTail keeps the first and last max/2 bytes of s (on UTF-8
// boundaries) and says in the middle how many bytes were cut. It returns
// the text and the number of bytes cut.
func capHeadTail(s string, max int) (string, int) {
	if len(s) <= max || max <= 0 {
		return s, 0
	}
	half := max / 2
	head := s[:half]
	for len(head) > 0 && !utf8Start(s[len(head)]) {
		head = head[:len(head)-1]
	}
	tailStart := len(s) - half
	for tailStart < len(s) && !utf8Start(s[tailStart]) {
		tailStart++
	}
	tail := s[tailStart:]
	cut := len(s) - len(head) - len(tail)
	return fmt.Sprintf("%s\n… [%d bytes cut] …\n%s", head, cut, tail), cut
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }
