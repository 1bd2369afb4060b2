package llm

import (
	"log/slog"
	"strings"
)

// Secret is an API key. It prints, logs and marshals as "[redacted]" (or
// "" when unset), so a Settings value can be printed or logged whole; only
// the client that sends it reads its value.
type Secret string

const redacted = "[redacted]"

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString implements fmt.GoStringer (%#v).
func (s Secret) GoString() string { return `llm.Secret("` + s.String() + `")` }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText implements encoding.TextMarshaler (JSON included).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Set reports whether the secret holds a key.
func (s Secret) Set() bool { return s != "" }

// scrub replaces every occurrence of the key in text with "[redacted]".
// Providers sometimes echo a key (or most of it) in an error body; the
// whole key and, for keys long enough to be recognised by it, its first
// and last eight characters are replaced.
func (s Secret) scrub(text string) string {
	k := string(s)
	if k == "" {
		return text
	}
	text = strings.ReplaceAll(text, k, redacted)
	if len(k) >= 24 {
		text = strings.ReplaceAll(text, k[:8], redacted)
		text = strings.ReplaceAll(text, k[len(k)-8:], redacted)
	}
	return text
}
