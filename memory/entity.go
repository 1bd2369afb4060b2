package memory

import (
	"bytes"
	"encoding/json"
)

// Entity is a retrievable record: exactly one of Observation and Summary is
// set. It encodes to JSON as the record itself.
type Entity struct {
	Observation *Observation
	Summary     *Summary
}

// ObservationEntity wraps an observation.
func ObservationEntity(o Observation) Entity { return Entity{Observation: &o} }

// SummaryEntity wraps a summary.
func SummaryEntity(s Summary) Entity { return Entity{Summary: &s} }

// Type reports which record the entity holds.
func (e Entity) Type() TargetType {
	if e.Summary != nil {
		return TargetSummary
	}
	return TargetObservation
}

// ID returns the record's id.
func (e Entity) ID() string {
	if e.Summary != nil {
		return e.Summary.ID
	}
	if e.Observation != nil {
		return e.Observation.ID
	}
	return ""
}

// Content returns the record's text.
func (e Entity) Content() string {
	if e.Summary != nil {
		return e.Summary.Content
	}
	if e.Observation != nil {
		return e.Observation.Content
	}
	return ""
}

// Time returns the record's timestamp (an observation's ts, a summary's
// createdAt) in Unix milliseconds.
func (e Entity) Time() int64 {
	if e.Summary != nil {
		return e.Summary.CreatedAt
	}
	if e.Observation != nil {
		return e.Observation.TS
	}
	return 0
}

// Scope returns the record's scope.
func (e Entity) Scope() Scope {
	if e.Summary != nil {
		return e.Summary.Scope
	}
	if e.Observation != nil {
		return e.Observation.Scope
	}
	return Scope{}
}

// Redacted reports whether the record was forgotten.
func (e Entity) Redacted() bool {
	return e.Observation != nil && e.Observation.Redacted || e.Summary != nil && e.Summary.Redacted
}

// MarshalJSON encodes the held record.
func (e Entity) MarshalJSON() ([]byte, error) {
	switch {
	case e.Summary != nil:
		return json.Marshal(e.Summary)
	case e.Observation != nil:
		return json.Marshal(e.Observation)
	}
	return []byte("null"), nil
}

// UnmarshalJSON decodes a record, telling a summary (it has "capsuleId") from
// an observation.
func (e *Entity) UnmarshalJSON(b []byte) error {
	*e = Entity{}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	var probe struct {
		CapsuleID *string `json:"capsuleId"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if probe.CapsuleID != nil {
		var s Summary
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		e.Summary = &s
		return nil
	}
	var o Observation
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	e.Observation = &o
	return nil
}
