package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairnhq/cairn"
)

// fmtTime renders Unix milliseconds as a short UTC time.
func fmtTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04")
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// wrap breaks s into lines of at most width characters, each prefixed.
func wrap(s string, width int, prefix string) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(s) {
		n := utf8.RuneCountInString(w)
		switch {
		case i == 0:
			b.WriteString(prefix)
		case line+1+n > width:
			b.WriteString("\n" + prefix)
			line = 0
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += n
	}
	return b.String()
}

// runEmit ends a command: it runs do on the engine (opened on first use)
// and shows what do returns, as JSON with --json, else as text writes it
// for a person.
func runEmit[T any](a *app, do func(eng *cairn.Engine) (T, error), text func(T) error) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	v, err := do(eng)
	if err != nil {
		return err
	}
	return a.show(v, func() error { return text(v) })
}

// show writes a result at hand: v as JSON with --json, else what text
// prints.
func (a *app) show(v any, text func() error) error {
	if a.json {
		return a.emit(v)
	}
	return text()
}

// say writes for a person, and nothing with --json (progress and steps
// of a command whose result is shown at its end).
func (a *app) say(format string, args ...any) {
	if !a.json {
		fmt.Fprintf(a.out, format, args...)
	}
}

// noText is the text of a command that wrote its lines as it went.
func noText() error { return nil }

// oneOrAll is a list of results as JSON shows it: the one result alone,
// or all of them.
func oneOrAll[T any](xs []T) any {
	if len(xs) == 1 {
		return xs[0]
	}
	return xs
}

// progressTo is where a long command reports its progress: standard
// error, or nowhere with --json.
func (a *app) progressTo() io.Writer {
	if a.json {
		return nil
	}
	return a.err
}
