package capture

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// MaxSummaryBytes caps a session summary.
const MaxSummaryBytes = 2000

// Summarize writes a session's extractive summary from its observations
// in order: what was asked, what changed, what ran and failed, and how it
// ended. It invents nothing: every phrase comes from an observation.
func Summarize(intent string, obs []memory.Observation) string {
	var prompts, files, failed []string
	var answer string
	tools, commands, errs := 0, 0, 0
	for _, o := range obs {
		if o.Redacted {
			continue
		}
		var p struct {
			File     string `json:"file"`
			ExitCode *int   `json:"exitCode"`
		}
		json.Unmarshal(o.Provenance, &p)
		switch o.Kind {
		case memory.KindMessage:
			if t, ok := strings.CutPrefix(o.Content, "user: "); ok {
				prompts = append(prompts, oneLine(t, 160))
			} else if t, ok := strings.CutPrefix(o.Content, "assistant: "); ok {
				answer = oneLine(t, 240)
			}
		case memory.KindCommand:
			commands++
			tools++
		case memory.KindError:
			errs++
			tools++
			failed = append(failed, oneLine(firstLine(o.Content), 120))
		case memory.KindFileDiff:
			tools++
			if p.File != "" && !slices.Contains(files, p.File) {
				files = append(files, p.File)
			}
		default:
			tools++
		}
	}
	var b strings.Builder
	b.WriteString(intent)
	fmt.Fprintf(&b, ": %d prompts, %d tool calls (%d commands, %d errors), %d files changed.", len(prompts), tools, commands, errs, len(files))
	if len(prompts) > 0 {
		b.WriteString("\nAsked: " + prompts[0])
		if len(prompts) > 1 {
			b.WriteString(" … last: " + prompts[len(prompts)-1])
		}
	}
	if len(files) > 0 {
		b.WriteString("\nChanged: " + strings.Join(headList(files, 12), ", "))
	}
	if len(failed) > 0 {
		b.WriteString("\nFailed: " + strings.Join(headList(lastN(failed, 3), 3), "; "))
	}
	if answer != "" {
		b.WriteString("\nLast answer: " + answer)
	}
	return capText(b.String(), MaxSummaryBytes)
}

func headList(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(slices.Clone(xs[:n]), fmt.Sprintf("and %d more", len(xs)-n))
}

func lastN(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return xs[len(xs)-n:]
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// oneLine folds s onto one line and cuts it to about max bytes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
