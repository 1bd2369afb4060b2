package memory

// Summary condenses one capsule. A capsule has at most one; writing a new one
// replaces the old (a running summary of an open capsule is updated this way)
// and keeps its id, so pins on it stay valid.
type Summary struct {
	ID        string `json:"id"`
	CapsuleID string `json:"capsuleId"`
	Content   string `json:"content"`
	// Confidence is in [0, 1].
	Confidence float64 `json:"confidence"`
	// CreatedAt is Unix milliseconds.
	CreatedAt int64 `json:"createdAt"`
	// EvidenceRefs name the records (usually observation ids) the summary
	// rests on.
	EvidenceRefs []string `json:"evidenceRefs"`
	// Scope is the scope of the summary's capsule.
	Scope Scope `json:"scopeIds"`
	// Redacted marks a forgotten summary: its content is RedactedContent
	// and it is in no index. Writing the capsule's summary again replaces
	// it with the new text.
	Redacted bool `json:"redacted,omitempty"`
}
