package sqlstore

import (
	"encoding/json"
	"fmt"

	"github.com/cairnhq/cairn/memory"
)

// ObsColumns are an observation's columns (alias o), as ScanObservation
// reads them.
const ObsColumns = "o.id, o.kind, o.content, o.provenance, o.ts, o.redacted, o.session_id, o.repo_id, o.agent_id, o.user_id"

// ScanObservation reads ObsColumns, then the row's extra columns into
// extra.
func ScanObservation(s Scanner, extra ...any) (memory.Observation, error) {
	var o memory.Observation
	var prov string
	dest := append([]any{&o.ID, &o.Kind, &o.Content, &prov, &o.TS, &o.Redacted,
		&o.Scope.SessionID, &o.Scope.RepoID, &o.Scope.AgentID, &o.Scope.UserID}, extra...)
	if err := s.Scan(dest...); err != nil {
		return o, err
	}
	o.Provenance = json.RawMessage(prov)
	return o, nil
}

// SumColumns are a summary's columns (alias s), as ScanSummary reads them.
const SumColumns = "s.id, s.capsule_id, s.content, s.confidence, s.created_at, s.evidence_refs, s.session_id, s.repo_id, s.agent_id, s.user_id, s.redacted"

// ScanSummary reads SumColumns, then the row's extra columns into extra.
func ScanSummary(s Scanner, extra ...any) (memory.Summary, error) {
	var m memory.Summary
	var refs string
	dest := append([]any{&m.ID, &m.CapsuleID, &m.Content, &m.Confidence, &m.CreatedAt, &refs,
		&m.Scope.SessionID, &m.Scope.RepoID, &m.Scope.AgentID, &m.Scope.UserID, &m.Redacted}, extra...)
	if err := s.Scan(dest...); err != nil {
		return m, err
	}
	m.EvidenceRefs = []string{}
	if err := json.Unmarshal([]byte(refs), &m.EvidenceRefs); err != nil {
		return m, fmt.Errorf("decoding evidence refs of summary %s: %w", m.ID, err)
	}
	return m, nil
}

// capColumns are a capsule's columns (alias c), as scanCapsule reads them.
const capColumns = "c.id, c.type, c.intent, c.status, c.opened_at, c.closed_at, c.session_id, c.repo_id, c.agent_id, c.user_id"

// scanCapsule reads capColumns (not the capsule's observations).
func scanCapsule(s Scanner) (memory.Capsule, error) {
	var c memory.Capsule
	err := s.Scan(&c.ID, &c.Type, &c.Intent, &c.Status, &c.OpenedAt, &c.ClosedAt,
		&c.Scope.SessionID, &c.Scope.RepoID, &c.Scope.AgentID, &c.Scope.UserID)
	return c, err
}

// pinColumns are a pin's columns (alias p), as scanPin reads them.
const pinColumns = "p.id, p.target_type, p.target_id, p.reason, p.created_at, p.expires_at, p.session_id, p.repo_id, p.agent_id, p.user_id"

// scanPin reads pinColumns.
func scanPin(s Scanner) (memory.Pin, error) {
	var p memory.Pin
	err := s.Scan(&p.ID, &p.TargetType, &p.TargetID, &p.Reason, &p.CreatedAt, &p.ExpiresAt,
		&p.Scope.SessionID, &p.Scope.RepoID, &p.Scope.AgentID, &p.Scope.UserID)
	return p, err
}

// thoughtColumns are a thought's columns (alias t), as scanThought reads
// them.
const thoughtColumns = `t.id, t.content, t.origin, t.tags, t.is_private, t.status, t.significance, t.is_summary, t.summary_of,
	t.pipeline, t.created_at, t.session_id, t.repo_id, t.agent_id, t.user_id, t.redacted`

// scanThought reads thoughtColumns.
func scanThought(s Scanner) (memory.Thought, error) {
	var t memory.Thought
	var tags, summaryOf string
	err := s.Scan(&t.ID, &t.Content, &t.Origin, &tags, &t.IsPrivate, &t.Status, &t.Significance, &t.IsSummary, &summaryOf,
		&t.Pipeline, &t.CreatedAt, &t.Scope.SessionID, &t.Scope.RepoID, &t.Scope.AgentID, &t.Scope.UserID, &t.Redacted)
	if err != nil {
		return t, err
	}
	t.Tags, t.SummaryOf = []string{}, []string{}
	if err := json.Unmarshal([]byte(tags), &t.Tags); err != nil {
		return t, err
	}
	return t, json.Unmarshal([]byte(summaryOf), &t.SummaryOf)
}

// JSONList encodes a list of strings as JSON text ("[]" for none).
func JSONList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
