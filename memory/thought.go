package memory

import "context"

// Origin says who produced a thought; it sets the thought's trust tier.
type Origin string

// Thought origins.
const (
	OriginHuman  Origin = "human"
	OriginTool   Origin = "tool"
	OriginModel  Origin = "model"
	OriginLogged Origin = "logged"
)

// Valid reports whether o is one of the four origins.
func (o Origin) Valid() bool {
	return o == OriginHuman || o == OriginTool || o == OriginModel || o == OriginLogged
}

// Thought statuses.
const (
	StatusActive  = "active"
	StatusRemoval = "removal"
)

// Thought is something the agent concluded, noted or was told: the
// content inner_voice.retrieve draws on.
type Thought struct {
	ID      string   `json:"id"`
	Content string   `json:"content"`
	Origin  Origin   `json:"origin"`
	Tags    []string `json:"tags"`
	// IsPrivate keeps the thought out of retrieval unless asked for.
	IsPrivate bool `json:"is_private"`
	// Status is active or removal (marked for archiving).
	Status string `json:"status"`
	// Significance is in [0, 1].
	Significance float64 `json:"significance"`
	// IsSummary marks a synthesis of other thoughts, listed in SummaryOf.
	IsSummary bool     `json:"is_summary"`
	SummaryOf []string `json:"summary_of"`
	// Pipeline names what produced the thought (e.g. "inner_voice").
	Pipeline string `json:"pipeline,omitempty"`
	// CreatedAt is Unix milliseconds.
	CreatedAt int64 `json:"created_at"`
	Scope     Scope `json:"scopeIds"`
	// Redacted marks a forgotten thought: its content is RedactedContent,
	// its tags are gone, and it is in no index and never retrieved.
	Redacted bool `json:"redacted,omitempty"`
}

// KGEntity is a node of the knowledge graph.
type KGEntity struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	// Data is a JSON object of properties.
	Data      RawObject `json:"data"`
	CreatedAt int64     `json:"created_at"`
	UpdatedAt int64     `json:"updated_at"`
	Scope     Scope     `json:"scopeIds"`
}

// KGObservation is a fact recorded about an entity.
type KGObservation struct {
	ID        string `json:"id"`
	EntityID  string `json:"entity_id"`
	Content   string `json:"content"`
	CreatedAt int64  `json:"created_at"`
	Scope     Scope  `json:"scopeIds"`
}

// KGEdge relates two entities.
type KGEdge struct {
	ID       string    `json:"id"`
	Source   string    `json:"source"`
	Target   string    `json:"target"`
	Relation string    `json:"relation"`
	Data     RawObject `json:"data"`
	// CreatedAt is Unix milliseconds.
	CreatedAt int64 `json:"created_at"`
	Scope     Scope `json:"scopeIds"`
}

// RawObject is a JSON object kept as written (compacted); nil encodes as {}.
type RawObject []byte

// MarshalJSON implements json.Marshaler.
func (r RawObject) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("{}"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps an object (null reads as {}); anything else is
// invalid_params.
func (r *RawObject) UnmarshalJSON(b []byte) error {
	n, err := NormalizeProvenance(b)
	if err != nil {
		return Errorf(CodeInvalidParams, "data must be a JSON object")
	}
	*r = RawObject(n)
	return nil
}

// ThoughtFilter selects thoughts for listing.
type ThoughtFilter struct {
	Scope          Scope
	IncludePrivate bool
	Status         string
	Limit          int
}

// ThoughtStore keeps thoughts.
type ThoughtStore interface {
	AddThought(ctx context.Context, t Thought) (Thought, error)
	Thought(ctx context.Context, id string) (Thought, error)
	// SetThoughtStatus marks thoughts active or for removal.
	SetThoughtStatus(ctx context.Context, ids []string, status string) (int, error)
	// RedactThought forgets a thought: its content becomes RedactedContent
	// and its tags are dropped, the original text is overwritten, its
	// vectors are deleted, and it is no longer searchable. Its id, origin,
	// privacy, status, significance, summary links, pipeline, time and
	// scope remain. The summary thoughts made from it (IsSummary, its id in
	// SummaryOf), and summaries of those, are redacted with it: they quote
	// it. Redacting a redacted thought changes nothing.
	RedactThought(ctx context.Context, id string) (Thought, error)
	// Thoughts lists thoughts, newest first.
	Thoughts(ctx context.Context, f ThoughtFilter) ([]Thought, error)
}

// GraphStore keeps the knowledge graph.
type GraphStore interface {
	PutEntity(ctx context.Context, e KGEntity) (KGEntity, error)
	Entity(ctx context.Context, id string) (KGEntity, error)
	// EntitiesByName finds entities whose name equals name, ignoring case.
	EntitiesByName(ctx context.Context, name string) ([]KGEntity, error)
	// Entities lists entities (of type typ when set), by name.
	Entities(ctx context.Context, typ string, scope Scope, limit int) ([]KGEntity, error)
	// DeleteEntity deletes an entity with its observations and edges.
	// Deletes erase: the records' text is overwritten on disk and their
	// vectors are deleted with them. Deleting what does not exist (or no
	// longer does) is not_found and changes nothing.
	DeleteEntity(ctx context.Context, id string) error
	AddKGObservation(ctx context.Context, o KGObservation) (KGObservation, error)
	KGObservations(ctx context.Context, entityID string) ([]KGObservation, error)
	DeleteKGObservation(ctx context.Context, id string) error
	AddEdge(ctx context.Context, e KGEdge) (KGEdge, error)
	// Edges lists the edges touching an entity (all edges when empty).
	Edges(ctx context.Context, entityID string, limit int) ([]KGEdge, error)
	DeleteEdge(ctx context.Context, id string) error
}
