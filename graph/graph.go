package graph

import (
	"regexp"
	"strings"
	"sync"

	"github.com/cairnhq/cairn/memory"
)

// Limits of graph records.
const (
	MaxNameBytes     = 512
	MaxTypeBytes     = 64
	MaxRelationBytes = 64
	MaxDataBytes     = 64 << 10
)

// labelRE is compiled on first use (its Unicode classes cost every
// process a few tenths of a millisecond at start).
var labelRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N} _.:/-]*$`) })

// CheckLabel validates a type or relation: letters, digits, spaces and
// _ . : / -, starting with a letter or digit, at most max bytes.
func CheckLabel(field, s string, max int) error {
	if err := memory.ValidateText(field, s, max); err != nil {
		return err
	}
	if strings.TrimSpace(s) != s || !labelRE().MatchString(s) {
		return memory.Errorf(memory.CodeInvalidParams, "%s %q: use letters, digits, spaces and _ . : / - (starting with a letter or digit)", field, s)
	}
	return nil
}

// CheckEntity validates an entity's name, type and data.
func CheckEntity(e memory.KGEntity) error {
	if err := memory.ValidateContent("name", e.Name, MaxNameBytes); err != nil {
		return err
	}
	if strings.TrimSpace(e.Name) != e.Name {
		return memory.Errorf(memory.CodeInvalidParams, "name %q has surrounding spaces", e.Name)
	}
	if err := CheckLabel("type", e.Type, MaxTypeBytes); err != nil {
		return err
	}
	if len(e.Data) > MaxDataBytes {
		return memory.Errorf(memory.CodeInvalidParams, "data is %d bytes, over the %d-byte limit", len(e.Data), MaxDataBytes)
	}
	return e.Scope.Validate()
}

// CheckEdge validates an edge's relation and data.
func CheckEdge(g memory.KGEdge) error {
	if g.Source == "" || g.Target == "" {
		return memory.Errorf(memory.CodeInvalidParams, "an edge needs a source and a target entity")
	}
	if err := CheckLabel("relation", g.Relation, MaxRelationBytes); err != nil {
		return err
	}
	if len(g.Data) > MaxDataBytes {
		return memory.Errorf(memory.CodeInvalidParams, "data is %d bytes, over the %d-byte limit", len(g.Data), MaxDataBytes)
	}
	return g.Scope.Validate()
}

// EntityText is the text an entity is embedded and shown by: its name, its
// type, and its data when it has any. (The store computes the same text in
// SQL; TestEntityTextMatchesStore keeps the two in step.)
func EntityText(e memory.KGEntity) string {
	s := e.Name + " (" + e.Type + ")"
	if d := string(e.Data); d != "" && d != "{}" {
		s += ": " + d
	}
	return s
}

// ObservationText is an entity observation's text: the entity's name and
// the observation.
func ObservationText(entityName, content string) string { return entityName + ": " + content }

// EdgeText is an edge's text: source, relation, target.
func EdgeText(source, relation, target string) string { return source + " " + relation + " " + target }
