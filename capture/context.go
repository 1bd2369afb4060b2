package capture

import (
	"fmt"
	"strings"
	"time"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/memory"
)

// DefaultContextTokens is the default token budget of session-start
// context.
const DefaultContextTokens = 1500

// MaxContextTokens bounds a context's token budget.
const MaxContextTokens = 32000

// Session is a capsule with its summary, for context.
type Session struct {
	Capsule memory.Capsule  `json:"capsule"`
	Summary *memory.Summary `json:"summary,omitempty"`
}

// ContextInput is what session-start context is made of, most important
// first.
type ContextInput struct {
	// Repo and Branch say where the agent works.
	Repo, Branch string
	// Pins are the repository's active pins.
	Pins []memory.PinnedTarget
	// Open is the session's open capsule (a resumed or compacted
	// session), or the repository's newest open one.
	Open *Session
	// Last is the repository's last closed session.
	Last *Session
	// Memories are the records most relevant to the repository and
	// branch, best first.
	Memories []memory.Entity
	// TokenBudget caps the whole text (ceil(chars/4) tokens); default
	// DefaultContextTokens.
	TokenBudget int
	// Now dates records relative to it.
	Now time.Time
}

// ContextItem is a record the context shows, by id.
type ContextItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Section string `json:"section"`
}

// Context is rendered session-start context.
type Context struct {
	// Markdown is the text for the agent's context.
	Markdown string `json:"markdown"`
	// Items are the records it shows, in order, so an agent can cite
	// and fetch them.
	Items []ContextItem `json:"items"`
	// Tokens is the text's size (ceil(chars/4)); Omitted counts records
	// left out for the budget.
	Tokens  int `json:"tokens"`
	Omitted int `json:"omitted"`
}

// maxItemChars caps one record's text in the context.
const maxItemChars = 400

// RenderContext renders in as Markdown within its token budget: a header,
// then pins, the open session, the last session and the relevant
// memories, each record with its id; records that would overrun the
// budget are left out (and counted), the footer always fits.
func RenderContext(in ContextInput) Context {
	budget := in.TokenBudget
	if budget <= 0 {
		budget = DefaultContextTokens
	}
	var out Context
	var b strings.Builder
	head := "# cairn: memory of " + in.Repo
	if in.Branch != "" {
		head += " (branch " + in.Branch + ")"
	}
	head += "\n"
	footer := fmt.Sprintf("\nCite records by id; read one with observation_get, summary_get or capsule_get, and ask retrieve for more (scopeIds.repoId %q).\n", in.Repo)
	b.WriteString(head)
	used := func(extra string) int { return content.EstimateTokens(b.String() + extra + footer) }
	section := ""
	add := func(sec, line string, item ContextItem) bool {
		text := line + "\n"
		if sec != section {
			text = "\n## " + sec + "\n" + text
		}
		if used(text) > budget {
			out.Omitted++
			return false
		}
		b.WriteString(text)
		section = sec
		item.Section = sec
		out.Items = append(out.Items, item)
		return true
	}
	shown := map[string]bool{}
	for _, p := range in.Pins {
		t := p.Target
		line := fmt.Sprintf("- `%s` %s", t.ID(), describe(t, in.Now))
		if p.Pin.Reason != "" {
			line += " — pinned: " + oneLine(p.Pin.Reason, 120)
		}
		if add("Pinned", line, ContextItem{ID: t.ID(), Type: string(t.Type())}) {
			shown[t.ID()] = true
		}
	}
	session := func(sec string, s *Session) {
		if s == nil {
			return
		}
		c := s.Capsule
		when := "opened " + ago(in.Now, c.OpenedAt)
		if c.ClosedAt != nil {
			when = "closed " + ago(in.Now, *c.ClosedAt)
		}
		line := fmt.Sprintf("- `%s` %s, %s, %d observations", c.ID, oneLine(c.Intent, 120), when, len(c.ObservationIDs))
		if add(sec, line, ContextItem{ID: c.ID, Type: "capsule"}) && s.Summary != nil && !s.Summary.Redacted {
			text := s.Summary.Content
			if len(text) > 2*maxItemChars {
				text = capText(text, 2*maxItemChars)
			}
			sl := fmt.Sprintf("  summary `%s`: %s", s.Summary.ID, strings.ReplaceAll(text, "\n", "\n  "))
			if add(sec, sl, ContextItem{ID: s.Summary.ID, Type: "summary"}) {
				shown[s.Summary.ID] = true
			}
		}
	}
	session("Open session", in.Open)
	session("Last session", in.Last)
	for _, e := range in.Memories {
		if shown[e.ID()] {
			continue
		}
		line := fmt.Sprintf("- `%s` %s", e.ID(), describe(e, in.Now))
		if add("Relevant memories", line, ContextItem{ID: e.ID(), Type: string(e.Type())}) {
			shown[e.ID()] = true
		}
	}
	if len(out.Items) == 0 {
		b.WriteString("\nNothing recorded for this repository yet.\n")
	}
	b.WriteString(footer)
	out.Markdown = b.String()
	out.Tokens = content.EstimateTokens(out.Markdown)
	if out.Items == nil {
		out.Items = []ContextItem{}
	}
	return out
}

// describe renders a record for the context: its kind and age, then its
// text on one line, capped.
func describe(e memory.Entity, now time.Time) string {
	kind := "summary"
	if o := e.Observation; o != nil {
		kind = string(o.Kind)
	}
	return fmt.Sprintf("(%s, %s): %s", kind, ago(now, e.Time()), oneLine(e.Content(), maxItemChars))
}

// ago says how long before now a Unix-ms time was, coarsely.
func ago(now time.Time, ms int64) string {
	if now.IsZero() {
		return time.UnixMilli(ms).UTC().Format("2006-01-02")
	}
	d := now.Sub(time.UnixMilli(ms))
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02")
}

// ContextQuery is the retrieval query that finds the memories most
// relevant to where the agent works: the repository's and branch's
// words, and the intent and summary of the last session.
func ContextQuery(repo, branch string, last *Session) string {
	var words []string
	split := func(s string) {
		for _, w := range strings.FieldsFunc(s, func(r rune) bool {
			return r == '/' || r == '-' || r == '_' || r == '.' || r == ' ' || r == '\n'
		}) {
			if len(w) > 1 {
				words = append(words, w)
			}
		}
	}
	if repo != "" {
		split(lastPathElem(repo))
	}
	split(branch)
	if last != nil {
		if last.Summary != nil && !last.Summary.Redacted {
			split(oneLine(last.Summary.Content, 300))
		} else {
			split(last.Capsule.Intent)
		}
	}
	return strings.Join(words, " ")
}

func lastPathElem(p string) string {
	p = strings.TrimRight(strings.ReplaceAll(p, "\\", "/"), "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// MarkdownText returns the context's Markdown.
func (c Context) MarkdownText() string { return c.Markdown }
