package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// SettingsScope says which of an agent's settings files hooks go into.
type SettingsScope string

// Settings scopes.
const (
	// ScopeUser is the user's own settings (every project).
	ScopeUser SettingsScope = "user"
	// ScopeProject is the project's shared settings (committed).
	ScopeProject SettingsScope = "project"
	// ScopeLocal is the project's local settings (Claude Code only: not
	// committed).
	ScopeLocal SettingsScope = "local"
)

// SettingsPath is the settings file of agent a in scope s: home is the
// user's home directory, project the project's root.
func SettingsPath(a Agent, s SettingsScope, home, project string) (string, error) {
	dir := map[Agent]string{ClaudeCode: ".claude", GeminiCLI: ".gemini", Cursor: ".cursor"}[a]
	file := map[Agent]string{ClaudeCode: "settings.json", GeminiCLI: "settings.json", Cursor: "hooks.json"}[a]
	switch s {
	case ScopeUser, "":
		return filepath.Join(home, dir, file), nil
	case ScopeProject:
		return filepath.Join(project, dir, file), nil
	case ScopeLocal:
		if a != ClaudeCode {
			return "", memory.Errorf(memory.CodeInvalidParams, "--scope local is Claude Code's settings.local.json; %s has user and project settings", a)
		}
		return filepath.Join(project, dir, "settings.local.json"), nil
	}
	return "", memory.Errorf(memory.CodeInvalidParams, "unknown settings scope %q (want user, project or local)", s)
}

// HookCommand is the command an agent runs for one of its events: bin is
// the cairn executable, db the database (empty: cairn's default).
func HookCommand(bin, db string, a Agent, native string, o InstallOptions) string {
	parts := []string{shellQuote(bin)}
	if db != "" {
		parts = append(parts, "--db", shellQuote(db))
	}
	parts = append(parts, "hook", native, "--agent", string(a))
	if o.NoPrompts && nativeEvents[a][native] == EventPrompt {
		parts = append(parts, "--no-prompts")
	}
	return strings.Join(parts, " ")
}

// InstallOptions tune the installed hooks.
type InstallOptions struct {
	// NoPrompts leaves the user's prompts out of what is recorded.
	NoPrompts bool
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// IsCairnCommand reports whether a hook command is one cairn installed:
// it runs a program named cairn with the hook subcommand.
func IsCairnCommand(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) < 2 {
		return false
	}
	bin := strings.Trim(f[0], `'"`)
	base := strings.TrimSuffix(filepath.Base(bin), ".exe")
	return strings.Contains(base, "cairn") && slices.Contains(f[1:], "hook") && slices.Contains(f[1:], "--agent")
}

// hookTimeout is how long an agent lets a cairn hook run: session start
// renders context; the others write one batch.
func hookTimeout(native string) int {
	switch native {
	case "SessionStart":
		return 30
	}
	return 10
}

// Change is what installing or removing hooks does to a settings file.
type Change struct {
	Agent Agent  `json:"agent"`
	Path  string `json:"path"`
	// Before and After are the file's text ("" when it does not exist or
	// would be removed empty).
	Before string `json:"-"`
	After  string `json:"-"`
	// Changed says the file would change; Events are the events cairn's
	// entries are (after the change) installed for.
	Changed bool     `json:"changed"`
	Events  []string `json:"events"`
	// Backup is where the old file was copied before writing ("" when
	// nothing was written or there was no file).
	Backup string `json:"backup,omitempty"`
}

// Diff is the change as a unified diff.
func (c Change) Diff() string { return UnifiedDiff(c.Path, c.Before, c.After) }

// PlanInstall computes the settings file with cairn's hooks for every
// event of a (replacing cairn's earlier entries, keeping everything
// else), from its current text ("" for none).
func PlanInstall(a Agent, path, current, bin, db string, o InstallOptions) (Change, error) {
	root, err := parseObject([]byte(current))
	if err != nil {
		return Change{}, memory.Errorf(memory.CodeInvalidParams, "%s is not a JSON object; fix or move it first (%v)", path, err)
	}
	hooks, err := hooksOf(root, path)
	if err != nil {
		return Change{}, err
	}
	hooks, err = withoutCairn(a, hooks)
	if err != nil {
		return Change{}, memory.Errorf(memory.CodeInvalidParams, "%s: %v", path, err)
	}
	events := NativeEvents(a)
	for _, ev := range events {
		cmd := HookCommand(bin, db, a, ev, o)
		var entry any
		switch a {
		case ClaudeCode:
			group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": hookTimeout(ev)}}}
			if ev == "PostToolUse" || ev == "PostToolUseFailure" {
				group = map[string]any{"matcher": "*", "hooks": group["hooks"]}
			}
			entry = group
		case GeminiCLI:
			entry = map[string]any{"matcher": "*", "hooks": []any{map[string]any{"name": "cairn", "type": "command", "command": cmd, "timeout": hookTimeout(ev) * 1000}}}
		case Cursor:
			entry = map[string]any{"command": cmd}
		}
		raw, _ := marshalOrdered(entry)
		list, _ := hooks.get(ev)
		var arr []json.RawMessage
		if len(list) > 0 {
			if err := json.Unmarshal(list, &arr); err != nil {
				return Change{}, memory.Errorf(memory.CodeInvalidParams, "%s: hooks.%s is not a list", path, ev)
			}
		}
		arr = append(arr, raw)
		b, _ := marshal(arr)
		hooks = hooks.set(ev, b)
	}
	if a == Cursor {
		if _, ok := root.get("version"); !ok {
			root = append(object{{Key: "version", Value: json.RawMessage("1")}}, root...)
		}
	}
	root = root.set("hooks", hooks.marshal())
	return finish(a, path, current, root, events)
}

// PlanUninstall computes the settings file without cairn's entries.
func PlanUninstall(a Agent, path, current string) (Change, error) {
	root, err := parseObject([]byte(current))
	if err != nil {
		return Change{}, memory.Errorf(memory.CodeInvalidParams, "%s is not a JSON object (%v)", path, err)
	}
	hooks, err := hooksOf(root, path)
	if err != nil {
		return Change{}, err
	}
	hooks, err = withoutCairn(a, hooks)
	if err != nil {
		return Change{}, memory.Errorf(memory.CodeInvalidParams, "%s: %v", path, err)
	}
	if len(hooks) == 0 {
		root = root.del("hooks")
	} else {
		root = root.set("hooks", hooks.marshal())
	}
	return finish(a, path, current, root, nil)
}

// Installed lists the events whose entries in a settings file's text are
// cairn's, and their commands.
func Installed(a Agent, current string) (map[string]string, error) {
	root, err := parseObject([]byte(current))
	if err != nil {
		return nil, err
	}
	hooks, err := hooksOf(root, "")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range hooks {
		var arr []json.RawMessage
		if json.Unmarshal(m.Value, &arr) != nil {
			continue
		}
		for _, g := range arr {
			for _, cmd := range commandsIn(a, g) {
				if IsCairnCommand(cmd) {
					out[m.Key] = cmd
				}
			}
		}
	}
	return out, nil
}

func finish(a Agent, path, current string, root object, events []string) (Change, error) {
	after := ""
	if len(root) > 0 || current != "" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, root.marshal(), "", "  "); err != nil {
			return Change{}, memory.Wrap(memory.CodeInternal, err, "formatting %s", path)
		}
		buf.WriteByte('\n')
		after = buf.String()
	}
	c := Change{Agent: a, Path: path, Before: current, After: after, Events: events}
	c.Changed = !sameJSON(current, after)
	if !c.Changed {
		c.After = current
	}
	if c.Events == nil {
		c.Events = []string{}
	}
	return c, nil
}

func sameJSON(a, b string) bool {
	if strings.TrimSpace(a) == "" || strings.TrimSpace(b) == "" {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	var x, y bytes.Buffer
	if json.Compact(&x, []byte(a)) != nil || json.Compact(&y, []byte(b)) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// hooksOf returns the "hooks" object of a settings file.
func hooksOf(root object, path string) (object, error) {
	raw, ok := root.get("hooks")
	if !ok || len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return object{}, nil
	}
	h, err := parseObject(raw)
	if err != nil {
		return nil, memory.Errorf(memory.CodeInvalidParams, "%s: \"hooks\" is not an object", path)
	}
	return h, nil
}

// withoutCairn removes cairn's entries from every event's list, dropping
// groups and events left empty.
func withoutCairn(a Agent, hooks object) (object, error) {
	var out object
	for _, m := range hooks {
		var arr []json.RawMessage
		if err := json.Unmarshal(m.Value, &arr); err != nil {
			out = append(out, m) // not a list: not cairn's to touch
			continue
		}
		var kept []json.RawMessage
		changed := false
		for _, g := range arr {
			ng, drop, err := dropCairn(a, g)
			if err != nil {
				return nil, err
			}
			if drop {
				changed = true
				continue
			}
			if !bytes.Equal(ng, g) {
				changed = true
			}
			kept = append(kept, ng)
		}
		if !changed {
			out = append(out, m)
			continue
		}
		if len(kept) == 0 {
			continue
		}
		b, _ := marshal(kept)
		out = append(out, member{Key: m.Key, Value: b})
	}
	return out, nil
}

// dropCairn removes cairn's commands from one group (Claude Code, Gemini
// CLI: {"matcher", "hooks": [...]}) or entry (Cursor: {"command"}). It
// says whether the whole group goes.
func dropCairn(a Agent, g json.RawMessage) (json.RawMessage, bool, error) {
	obj, err := parseObject(g)
	if err != nil {
		return g, false, nil // not an object: leave it
	}
	if cmd, ok := obj.get("command"); ok {
		var s string
		if json.Unmarshal(cmd, &s) == nil && IsCairnCommand(s) {
			return nil, true, nil
		}
		return g, false, nil
	}
	inner, ok := obj.get("hooks")
	if !ok {
		return g, false, nil
	}
	var entries []json.RawMessage
	if json.Unmarshal(inner, &entries) != nil {
		return g, false, nil
	}
	var kept []json.RawMessage
	for _, e := range entries {
		var c struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(e, &c) == nil && IsCairnCommand(c.Command) {
			continue
		}
		kept = append(kept, e)
	}
	if len(kept) == len(entries) {
		return g, false, nil
	}
	if len(kept) == 0 {
		return nil, true, nil
	}
	b, _ := marshal(kept)
	return obj.set("hooks", b).marshal(), false, nil
}

// commandsIn lists the commands of a group or entry.
func commandsIn(a Agent, g json.RawMessage) []string {
	var e struct {
		Command string `json:"command"`
		Hooks   []struct {
			Command string `json:"command"`
		} `json:"hooks"`
	}
	if json.Unmarshal(g, &e) != nil {
		return nil
	}
	out := []string{}
	if e.Command != "" {
		out = append(out, e.Command)
	}
	for _, h := range e.Hooks {
		out = append(out, h.Command)
	}
	return out
}

// Apply writes a change: the old file is copied to a timestamped backup
// beside it first (never over an earlier backup), the new text is written
// to a temporary file and renamed over the old one. A settings file that
// is a symbolic link stays one: the file it points to is the one
// replaced. An unchanged file is left alone.
func Apply(c *Change, now time.Time) error {
	if !c.Changed {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o755); err != nil {
		return memory.Wrap(memory.CodeInternal, err, "creating %s: %v", filepath.Dir(c.Path), err)
	}
	target := c.Path
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(c.Path); err == nil {
		mode = fi.Mode().Perm()
		if target, err = filepath.EvalSymlinks(c.Path); err != nil {
			return memory.Wrap(memory.CodeInternal, err, "reading %s: %v", c.Path, err)
		}
		if c.Backup, err = backup(c.Path, now, mode); err != nil {
			return memory.Wrap(memory.CodeInternal, err, "backing up %s: %v", c.Path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return memory.Wrap(memory.CodeInternal, err, "reading %s: %v", c.Path, err)
	}
	tmp := target + ".cairn-tmp"
	if err := os.WriteFile(tmp, []byte(c.After), mode); err != nil {
		return memory.Wrap(memory.CodeInternal, err, "writing %s: %v", tmp, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return memory.Wrap(memory.CodeInternal, err, "replacing %s: %v", target, err)
	}
	return nil
}

// backup copies path to PATH.cairn-TIME.bak, or PATH.cairn-TIME-N.bak
// when a backup of that second exists: an earlier backup (perhaps of the
// user's own file) is never overwritten.
func backup(path string, now time.Time, mode os.FileMode) (string, error) {
	stamp := path + ".cairn-" + now.UTC().Format("20060102T150405Z")
	for n := 1; ; n++ {
		name := stamp + ".bak"
		if n > 1 {
			name = fmt.Sprintf("%s-%d.bak", stamp, n)
		}
		err := copyFile(path, name, mode)
		if !errors.Is(err, os.ErrExist) {
			return name, err
		}
	}
}

// copyFile copies from to a new file to; it fails with os.ErrExist when
// to exists.
func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// object is a JSON object that keeps its keys' order, so a settings file
// comes back with its own keys where they were.
type object []member

type member struct {
	Key   string
	Value json.RawMessage
}

// parseObject reads a JSON object ("" or only space reads as empty).
func parseObject(b []byte) (object, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return object{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var o object
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o = o.set(k, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the object")
	}
	return o, nil
}

func (o object) get(k string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.Key == k {
			return m.Value, true
		}
	}
	return nil, false
}

func (o object) set(k string, v json.RawMessage) object {
	for i, m := range o {
		if m.Key == k {
			out := slices.Clone(o)
			out[i].Value = v
			return out
		}
	}
	return append(slices.Clone(o), member{Key: k, Value: v})
}

func (o object) del(k string) object {
	return slices.DeleteFunc(slices.Clone(o), func(m member) bool { return m.Key == k })
}

func (o object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		var c bytes.Buffer
		if json.Compact(&c, m.Value) == nil {
			b.Write(c.Bytes())
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshalOrdered encodes v with map keys in the order cairn writes them
// (matcher first, then hooks; type before command), for readable files.
func marshalOrdered(v any) (json.RawMessage, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return marshal(v)
	}
	order := []string{"matcher", "name", "type", "command", "timeout", "hooks"}
	var o object
	for _, k := range order {
		if x, ok := m[k]; ok {
			var raw json.RawMessage
			if arr, ok := x.([]any); ok {
				var parts []json.RawMessage
				for _, e := range arr {
					p, err := marshalOrdered(e)
					if err != nil {
						return nil, err
					}
					parts = append(parts, p)
				}
				raw, _ = marshal(parts)
			} else {
				raw, _ = marshal(x)
			}
			o = append(o, member{Key: k, Value: raw})
		}
	}
	return o.marshal(), nil
}

// marshal encodes v as JSON without escaping <, > and & (json.Marshal
// writes them as \u003c ...): a user's hook command "make fmt && make
// lint" stays as they wrote it.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
