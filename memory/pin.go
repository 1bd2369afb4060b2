package memory

// TargetType says what kind of record a pin (or a search hit) refers to.
type TargetType string

// Pinnable record types.
const (
	TargetObservation TargetType = "observation"
	TargetSummary     TargetType = "summary"
)

// Valid reports whether t is observation or summary.
func (t TargetType) Valid() bool { return t == TargetObservation || t == TargetSummary }

// Pin marks an observation or a summary as important: while active it is
// returned by every retrieval in its scope and never evicted by a token
// budget.
type Pin struct {
	ID         string     `json:"id"`
	TargetType TargetType `json:"targetType"`
	TargetID   string     `json:"targetId"`
	Reason     string     `json:"reason,omitempty"`
	// CreatedAt and ExpiresAt are Unix milliseconds; a nil ExpiresAt never
	// expires.
	CreatedAt int64  `json:"createdAt"`
	ExpiresAt *int64 `json:"expiresAt,omitempty"`
	Scope     Scope  `json:"scopeIds"`
}

// ActiveAt reports whether the pin is active at now: no expiry, or an expiry
// after now.
func (p Pin) ActiveAt(now int64) bool { return p.ExpiresAt == nil || *p.ExpiresAt > now }

// PinnedTarget is an active pin with the record it points at.
type PinnedTarget struct {
	Pin        Pin        `json:"pin"`
	TargetType TargetType `json:"targetType"`
	Target     Entity     `json:"target"`
}
