package webui

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// ErrorLog keeps the most recent warnings and errors a process logged,
// for the health page. Wrap the process's log handler with it: records
// still reach that handler as before (at its level), and those at warn
// level or above are also kept here, even when the handler drops them.
//
// Only caller-safe parts are kept: the message and the attributes named in
// safeAttrs (a tool's name, a route, a code, counts). Causes, which may hold
// SQL text, addresses or paths, stay in the server's own log.
type ErrorLog struct {
	mu      sync.Mutex
	entries []ErrorEntry
	next    int
	full    bool
	total   int64
}

// ErrorEntry is one kept record.
type ErrorEntry struct {
	Time    time.Time
	Level   string
	Message string
	Attrs   []Attr
}

// Attr is one kept attribute.
type Attr struct{ Key, Value string }

// safeAttrs are the attributes the health page may show.
var safeAttrs = map[string]bool{
	"tool": true, "route": true, "code": true, "method": true, "page": true, "path": true,
	"records": true, "pending": true, "retry_in": true, "failures": true, "check": true, "kind": true,
}

// NewErrorLog keeps the last n warnings and errors (n ≥ 1; default 50).
func NewErrorLog(n int) *ErrorLog {
	if n < 1 {
		n = 50
	}
	return &ErrorLog{entries: make([]ErrorEntry, n)}
}

// Handler wraps next: every record goes to next as before, and warnings
// and errors are kept.
func (l *ErrorLog) Handler(next slog.Handler) slog.Handler { return &errorHandler{log: l, next: next} }

// Recent returns the kept records, newest first, and how many were kept
// since the process started.
func (l *ErrorLog) Recent() ([]ErrorEntry, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []ErrorEntry
	if l.full {
		out = append(out, l.entries[l.next:]...)
	}
	out = append(out, l.entries[:l.next]...)
	slices.Reverse(out)
	return out, l.total
}

func (l *ErrorLog) add(e ErrorEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries[l.next] = e
	l.next++
	l.total++
	if l.next == len(l.entries) {
		l.next, l.full = 0, true
	}
}

type errorHandler struct {
	log   *ErrorLog
	next  slog.Handler
	attrs []Attr
}

func (h *errorHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn || h.next.Enabled(ctx, level)
}

func (h *errorHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		e := ErrorEntry{Time: r.Time, Level: r.Level.String(), Message: r.Message, Attrs: slices.Clone(h.attrs)}
		r.Attrs(func(a slog.Attr) bool {
			if safeAttrs[a.Key] {
				e.Attrs = append(e.Attrs, Attr{a.Key, a.Value.String()})
			}
			return true
		})
		h.log.add(e)
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *errorHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := &errorHandler{log: h.log, next: h.next.WithAttrs(as), attrs: slices.Clone(h.attrs)}
	for _, a := range as {
		if safeAttrs[a.Key] {
			c.attrs = append(c.attrs, Attr{a.Key, a.Value.String()})
		}
	}
	return c
}

func (h *errorHandler) WithGroup(name string) slog.Handler {
	return &errorHandler{log: h.log, next: h.next.WithGroup(name), attrs: h.attrs}
}
