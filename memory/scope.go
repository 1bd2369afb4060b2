package memory

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// MaxScopeValueBytes bounds each scope value.
const MaxScopeValueBytes = 512

// Scope places a record, or restricts a query, along four independent
// dimensions. On a record, an empty field means the record is not tied to that
// dimension. On a query, an empty field leaves that dimension unfiltered;
// every non-empty field must match exactly (AND semantics, no wildcards).
type Scope struct {
	SessionID string `json:"sessionId,omitempty"`
	RepoID    string `json:"repoId,omitempty"`
	AgentID   string `json:"agentId,omitempty"`
	UserID    string `json:"userId,omitempty"`
}

// ScopeKeys are the JSON names of the scope dimensions, in canonical order.
var ScopeKeys = []string{"sessionId", "repoId", "agentId", "userId"}

// scopeAliases maps the short names the CLI accepts (session=, repo=, ...) and
// the canonical names to the canonical names.
var scopeAliases = map[string]string{
	"session": "sessionId", "sessionId": "sessionId",
	"repo": "repoId", "repoId": "repoId",
	"agent": "agentId", "agentId": "agentId",
	"user": "userId", "userId": "userId",
}

func (s *Scope) field(key string) *string {
	switch key {
	case "sessionId":
		return &s.SessionID
	case "repoId":
		return &s.RepoID
	case "agentId":
		return &s.AgentID
	case "userId":
		return &s.UserID
	}
	return nil
}

// Get returns the value of the dimension named by its canonical key.
func (s Scope) Get(key string) string {
	if p := s.field(key); p != nil {
		return *p
	}
	return ""
}

// IsZero reports whether no dimension is set.
func (s Scope) IsZero() bool { return s == Scope{} }

// Matches reports whether record lies inside the filter s: every non-empty
// dimension of s equals the record's.
func (s Scope) Matches(record Scope) bool {
	return (s.SessionID == "" || s.SessionID == record.SessionID) &&
		(s.RepoID == "" || s.RepoID == record.RepoID) &&
		(s.AgentID == "" || s.AgentID == record.AgentID) &&
		(s.UserID == "" || s.UserID == record.UserID)
}

// Fill returns s with every empty dimension taken from other.
func (s Scope) Fill(other Scope) Scope {
	for _, k := range ScopeKeys {
		if p := s.field(k); *p == "" {
			*p = other.Get(k)
		}
	}
	return s
}

// Conflicts reports the first dimension set in both s and other to different
// values, or "" when they agree.
func (s Scope) Conflicts(other Scope) string {
	for _, k := range ScopeKeys {
		a, b := s.Get(k), other.Get(k)
		if a != "" && b != "" && a != b {
			return k
		}
	}
	return ""
}

// Validate checks every value: valid UTF-8, no control characters, at most
// MaxScopeValueBytes bytes, no leading or trailing space.
func (s Scope) Validate() error {
	for _, k := range ScopeKeys {
		v := s.Get(k)
		if v == "" {
			continue
		}
		if err := ValidateText("scope "+k, v, MaxScopeValueBytes); err != nil {
			return err
		}
		if strings.ContainsAny(v, "\n\r\t") || strings.TrimSpace(v) != v {
			return Errorf(CodeInvalidParams, "scope %s must not contain line breaks, tabs or surrounding spaces", k)
		}
	}
	return nil
}

// String renders the scope as the CLI writes it: "session=s1,repo=/r".
func (s Scope) String() string {
	var parts []string
	for _, k := range ScopeKeys {
		if v := s.Get(k); v != "" {
			parts = append(parts, strings.TrimSuffix(k, "Id")+"="+v)
		}
	}
	return strings.Join(parts, ",")
}

// UnmarshalJSON decodes a scope object strictly: only the four known keys,
// string values, and no empty values (omit a key to leave it unset). Any
// other shape is an invalid_params error naming the problem.
func (s *Scope) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*s = Scope{}
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Errorf(CodeInvalidParams, "scopeIds must be an object with string values")
	}
	var out Scope
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := out.field(k)
		if p == nil {
			return Errorf(CodeInvalidParams, "unknown scope key %q (known: %s)", k, strings.Join(ScopeKeys, ", "))
		}
		if err := json.Unmarshal(raw[k], p); err != nil {
			return Errorf(CodeInvalidParams, "scope %s must be a string", k)
		}
		if *p == "" {
			return Errorf(CodeInvalidParams, "scope %s is empty: omit the key to leave that dimension unset", k)
		}
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*s = out
	return nil
}

// ParseScope parses the CLI form "session=s1,repo=/r" (keys session, repo,
// agent, user, or their JSON names). An empty string is the empty scope.
func ParseScope(text string) (Scope, error) {
	var s Scope
	err := s.Set(text)
	return s, err
}

// Set merges the CLI form "key=value,key=value" into s (it lets a repeated
// --scope flag accumulate). A key given twice with different values is an
// error.
func (s *Scope) Set(text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	next := *s
	for _, part := range strings.Split(text, ",") {
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok {
			return Errorf(CodeInvalidParams, "scope %q: want key=value (keys: session, repo, agent, user)", part)
		}
		canon, known := scopeAliases[k]
		if !known {
			return Errorf(CodeInvalidParams, "unknown scope key %q (keys: session, repo, agent, user)", k)
		}
		v = strings.TrimSpace(v)
		if v == "" {
			return Errorf(CodeInvalidParams, "scope %s is empty: omit the key to leave that dimension unset", k)
		}
		p := next.field(canon)
		if *p != "" && *p != v {
			return Errorf(CodeInvalidParams, "scope %s given twice (%q and %q)", k, *p, v)
		}
		*p = v
	}
	if err := next.Validate(); err != nil {
		return err
	}
	*s = next
	return nil
}
