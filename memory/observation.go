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

// NormalizeProvenance checks that p is a JSON object (or empty, meaning {})
// and returns it compacted, so equal provenance is stored byte-identically.
func NormalizeProvenance(p json.RawMessage) (json.RawMessage, error) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if p[0] != '{' || !json.Valid(p) {
		return nil, Errorf(CodeInvalidParams, "provenance must be a JSON object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, p); err != nil {
		return nil, Errorf(CodeInvalidParams, "provenance must be a JSON object")
	}
	return json.RawMessage(buf.Bytes()), nil
}
