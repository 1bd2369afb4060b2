package memory

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Kind says what an observation records.
type Kind string

// The nine observation kinds.
const (
	KindToolCall   Kind = "tool_call"
	KindCommand    Kind = "command"
	KindFileDiff   Kind = "file_diff"
	KindError      Kind = "error"
	KindMessage    Kind = "message"
	KindNodeStart  Kind = "node_start"
	KindNodeEnd    Kind = "node_end"
	KindNodeOutput Kind = "node_output"
	KindNodeError  Kind = "node_error"
)

// Kinds lists every kind, in a stable order.
var Kinds = []Kind{KindToolCall, KindCommand, KindFileDiff, KindError, KindMessage,
	KindNodeStart, KindNodeEnd, KindNodeOutput, KindNodeError}

// Valid reports whether k is one of the nine kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// ParseKind returns the kind named s, or an invalid_params error listing the
// kinds.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if !k.Valid() {
		names := make([]string, len(Kinds))
		for i, v := range Kinds {
			names[i] = string(v)
		}
		return "", Errorf(CodeInvalidParams, "unknown observation kind %q (kinds: %s)", s, strings.Join(names, ", "))
	}
	return k, nil
}

// RedactedContent replaces the content of a forgotten observation.
const RedactedContent = "[redacted]"

// Observation is one thing that happened: a tool call, a command, a diff, an
// error, a message, or a step of an agent graph. It is stored verbatim.
type Observation struct {
	ID      string `json:"id"`
	Kind    Kind   `json:"kind"`
	Content string `json:"content"`
	// Provenance is caller-supplied JSON (an object) saying where the
	// observation came from. It is kept when the observation is forgotten, so
	// it must not hold the content itself.
	Provenance json.RawMessage `json:"provenance"`
	// TS is when it happened, in Unix milliseconds.
	TS       int64 `json:"ts"`
	Scope    Scope `json:"scopeIds"`
	Redacted bool  `json:"redacted"`
}

// MaxObjectDepth bounds how deeply a caller's free-form JSON object
// (provenance, an entity's or edge's data) may nest: metadata needs a few
// levels, and a bound keeps every reader of it, SQLite's JSON functions
// included, far from their limits.
const MaxObjectDepth = 64

// NormalizeProvenance checks that p is a JSON object (or empty, meaning {})
// nesting at most MaxObjectDepth levels, and returns it compacted, so equal
// provenance is stored byte-identically.
func NormalizeProvenance(p json.RawMessage) (json.RawMessage, error) {
	return NormalizeObject("provenance", p)
}

// NormalizeObject is NormalizeProvenance for the field named field.
func NormalizeObject(field string, p json.RawMessage) (json.RawMessage, error) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if p[0] != '{' || !json.Valid(p) {
		return nil, Errorf(CodeInvalidParams, "%s must be a JSON object", field)
	}
	if d := JSONDepth(p); d > MaxObjectDepth {
		return nil, Errorf(CodeInvalidParams, "%s nests %d levels deep, over the limit of %d", field, d, MaxObjectDepth)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, p); err != nil {
		return nil, Errorf(CodeInvalidParams, "%s must be a JSON object", field)
	}
	return json.RawMessage(buf.Bytes()), nil
}

// JSONDepth is the deepest nesting of objects and arrays in JSON (for
// input that is not valid JSON, of the brackets outside its strings).
func JSONDepth(p []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range p {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
