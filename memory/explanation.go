package memory

// Explanation says how a score was computed: its value, what it is, how it
// was derived, and the values it was derived from. Every ranked result
// carries one, so any result can be traced back to its inputs.
type Explanation struct {
	Name     string        `json:"name"`
	Value    float64       `json:"value"`
	Detail   string        `json:"detail,omitempty"`
	Children []Explanation `json:"children,omitempty"`
	// Degraded, when set, is the error code of the failure the score was
	// computed without (embedder_unavailable: no semantic signal). It is
	// empty, and left out of the JSON, for a score computed in full.
	Degraded Code `json:"degraded,omitempty"`
}

// Child returns the first direct child named name.
func (e Explanation) Child(name string) (Explanation, bool) {
	for _, c := range e.Children {
		if c.Name == name {
			return c, true
		}
	}
	return Explanation{}, false
}
