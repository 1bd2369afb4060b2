package memory

import "regexp"

// CapsuleStatus is open or closed.
type CapsuleStatus string

// Capsule states.
const (
	CapsuleOpen   CapsuleStatus = "open"
	CapsuleClosed CapsuleStatus = "closed"
)

// CapsuleTypeSession is the default capsule type: one working session.
const CapsuleTypeSession = "session"

var capsuleTypeRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// ValidCapsuleType reports whether t is a usable capsule type: lowercase
// letters, digits, '_' and '-', starting with a letter, at most 64 bytes
// ("session", "episode", "pocketflow_node", ...).
func ValidCapsuleType(t string) bool { return capsuleTypeRE.MatchString(t) }

// Capsule groups the observations of one session or episode, in order. A
// session has at most one open capsule at a time.
type Capsule struct {
	ID     string        `json:"id"`
	Type   string        `json:"type"`
	Intent string        `json:"intent"`
	Status CapsuleStatus `json:"status"`
	// OpenedAt and ClosedAt are Unix milliseconds; ClosedAt is nil while open.
	OpenedAt int64  `json:"openedAt"`
	ClosedAt *int64 `json:"closedAt,omitempty"`
	Scope    Scope  `json:"scopeIds"`
	// ObservationIDs are the capsule's observations in the order they joined.
	ObservationIDs []string `json:"observationIds"`
	// SummaryID names the capsule's summary, if it has one.
	SummaryID string `json:"summaryId,omitempty"`
}
