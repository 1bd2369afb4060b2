package graph

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/cairnhq/cairn/memory"
)

// Curator keeps the knowledge graph: it creates, changes, reads and
// deletes entities, their facts and the edges between them, walks the
// graph, and moderates the candidates inner_voice stages. The engine
// gives it the store and its own seams.
type Curator struct {
	Store memory.GraphStore
	// Staged keeps the staged candidates (nil: the store keeps none, and
	// moderation is feature_disabled); Removals marks thoughts for
	// removal (nil: the store keeps no removal lifecycle).
	Staged   memory.CandidateStore
	Removals memory.RemovalStore
	// Thought reads a thought (nil: none is read), to leave out of
	// candidate listings those whose source thought is private.
	Thought func(ctx context.Context, id string) (memory.Thought, error)
	// MaxBytes caps a fact's content.
	MaxBytes int
	// Now is the clock, in Unix milliseconds; NewID makes a record's id
	// from a prefix ("ent").
	Now   func() int64
	NewID func(prefix string) string
	// Redact replaces the secrets in a fact's text.
	Redact func(string) string
	// Embed embeds records just written; a failure leaves them pending.
	Embed func(ctx context.Context, jobs []memory.EmbedJob)
	// Erase makes deleted records leave the retrieval index's files.
	Erase func(ctx context.Context)
	// Reembed, when set, embeds the records waiting for a vector: the
	// facts and edges whose text a rename changed.
	Reembed func(ctx context.Context) error
	Logger  *slog.Logger
}

// EntityRequest creates an entity, or (with entityId, on update) changes
// one: fields left out keep their value.
type EntityRequest struct {
	EntityID string          `json:"entityId,omitempty" jsonschema:"the entity to update; a new ent_ id is made on create when omitted"`
	Name     string          `json:"name,omitempty" jsonschema:"the entity's name (a person, project, service, concept)"`
	Type     string          `json:"type,omitempty" jsonschema:"its type, e.g. person, project, service, library, decision"`
	Data     json.RawMessage `json:"data,omitempty" jsonschema:"a JSON object of properties"`
	ScopeIDs memory.Scope    `json:"scopeIds,omitzero" jsonschema:"where it belongs (on create)"`
	// IdempotencyKey, on create instead of EntityID, names the entity for
	// retries.
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"on create, an optional key of this write (instead of entityId): a retry with the same key returns the first result instead of making the entity twice"`
}

// CreateEntity adds an entity to the knowledge graph and embeds it.
func (cur *Curator) CreateEntity(ctx context.Context, req EntityRequest) (memory.KGEntity, error) {
	now := cur.Now()
	ent := memory.KGEntity{ID: req.EntityID, Name: req.Name, Type: req.Type, CreatedAt: now, UpdatedAt: now, Scope: req.ScopeIDs}
	if req.Data != nil {
		d, err := memory.NormalizeObject("data", req.Data)
		if err != nil {
			return ent, err
		}
		ent.Data = memory.RawObject(d)
	}
	id, err := memory.KeyedID("ent", ent.ID, req.IdempotencyKey)
	if err != nil {
		return ent, err
	}
	if ent.ID = id; ent.ID == "" {
		ent.ID = cur.NewID("ent")
	}
	if err := CheckNewEntity(ent); err != nil {
		return ent, err
	}
	if got, err := cur.Store.Entity(ctx, ent.ID); err == nil {
		// A retry returns the first result; another entity under the id
		// is a conflict.
		if got.Name == ent.Name && got.Type == ent.Type {
			return got, nil
		}
		return ent, memory.Errorf(memory.CodeConflict, "entity id %q already names another entity; use kg_entity_update", ent.ID)
	} else if !memory.IsCode(err, memory.CodeNotFound) {
		return ent, err
	}
	out, err := cur.putEntity(ctx, ent)
	if err != nil && id != "" {
		return memory.Replay(err, id, func() (memory.KGEntity, error) { return cur.Store.Entity(ctx, id) },
			func(got memory.KGEntity) bool { return got.Name == ent.Name && got.Type == ent.Type }, "entity")
	}
	return out, err
}

// CheckNewEntity validates an entity as CreateEntity and an import store
// it.
func CheckNewEntity(ent memory.KGEntity) error {
	if err := memory.ValidateRef("entityId", ent.ID, false); err != nil {
		return err
	}
	return CheckEntity(ent)
}

// UpdateEntity changes an entity's name, type or data.
func (cur *Curator) UpdateEntity(ctx context.Context, req EntityRequest) (memory.KGEntity, error) {
	if err := memory.ValidateRef("entityId", req.EntityID, false); err != nil {
		return memory.KGEntity{}, err
	}
	ent, err := cur.Store.Entity(ctx, req.EntityID)
	if err != nil {
		return ent, err
	}
	oldName := ent.Name
	if req.Name != "" {
		ent.Name = req.Name
	}
	if req.Type != "" {
		ent.Type = req.Type
	}
	if req.Data != nil {
		d, err := memory.NormalizeObject("data", req.Data)
		if err != nil {
			return ent, err
		}
		ent.Data = memory.RawObject(d)
	}
	if !req.ScopeIDs.IsZero() {
		return ent, memory.Errorf(memory.CodeInvalidParams, "an entity's scope is set when it is created")
	}
	renamed := ent.Name != oldName
	ent.UpdatedAt = cur.Now()
	if err := CheckEntity(ent); err != nil {
		return ent, err
	}
	out, err := cur.putEntity(ctx, ent)
	if err == nil && renamed && cur.Reembed != nil {
		// A rename changes the text of the entity's facts and edges: the
		// store left them pending; embed them now.
		if rerr := cur.Reembed(context.WithoutCancel(ctx)); rerr != nil {
			cur.Logger.Warn("renamed entity's facts and edges stored without vectors; run cairn reembed", "err", memory.Public(rerr).Message)
		}
	}
	return out, err
}

func (cur *Curator) putEntity(ctx context.Context, ent memory.KGEntity) (memory.KGEntity, error) {
	out, err := cur.Store.PutEntity(ctx, ent)
	if err != nil {
		return out, err
	}
	cur.Embed(ctx, []memory.EmbedJob{{Kind: memory.VectorKGEntity, ID: out.ID, Content: EntityText(out)}})
	return out, nil
}

// EntityRef names an entity.
type EntityRef struct {
	EntityID string `json:"entityId" jsonschema:"the entity's id"`
}

// EntityView is an entity with its observations and edges.
type EntityView struct {
	Entity       memory.KGEntity        `json:"entity"`
	Observations []memory.KGObservation `json:"observations"`
	Edges        []memory.KGEdge        `json:"edges"`
}

// Entity returns an entity with its observations and edges.
func (cur *Curator) Entity(ctx context.Context, id string) (EntityView, error) {
	ent, err := cur.Store.Entity(ctx, id)
	if err != nil {
		return EntityView{}, err
	}
	obs, err := cur.Store.KGObservations(ctx, id)
	if err != nil {
		return EntityView{}, err
	}
	edges, err := cur.Store.Edges(ctx, id, 1000)
	if err != nil {
		return EntityView{}, err
	}
	if obs == nil {
		obs = []memory.KGObservation{}
	}
	if edges == nil {
		edges = []memory.KGEdge{}
	}
	return EntityView{Entity: ent, Observations: obs, Edges: edges}, nil
}

// EntitiesRequest lists or looks up entities.
type EntitiesRequest struct {
	Name     string       `json:"name,omitempty" jsonschema:"find entities with this exact name (any case)"`
	Type     string       `json:"type,omitempty" jsonschema:"only entities of this type"`
	ScopeIDs memory.Scope `json:"scopeIds,omitzero" jsonschema:"restrict to a scope"`
	Limit    int          `json:"limit,omitempty" jsonschema:"most entities to return, 1 to 1000; default 100"`
}

// EntityList is a list of entities.
type EntityList struct {
	Entities []memory.KGEntity `json:"entities"`
}

// Entities finds entities by name, or lists them (by type and scope).
func (cur *Curator) Entities(ctx context.Context, req EntitiesRequest) (EntityList, error) {
	if req.Limit < 0 || req.Limit > 1000 {
		return EntityList{}, memory.Errorf(memory.CodeInvalidParams, "limit %d is out of range [1, 1000]", req.Limit)
	}
	if req.Limit == 0 {
		req.Limit = 100
	}
	if err := req.ScopeIDs.Validate(); err != nil {
		return EntityList{}, err
	}
	var out []memory.KGEntity
	var err error
	if req.Name != "" {
		if err := memory.ValidateText("name", req.Name, MaxNameBytes); err != nil {
			return EntityList{}, err
		}
		all, err2 := cur.Store.EntitiesByName(ctx, req.Name)
		err = err2
		for _, ent := range all {
			if (req.Type == "" || ent.Type == req.Type) && req.ScopeIDs.Matches(ent.Scope) && len(out) < req.Limit {
				out = append(out, ent)
			}
		}
	} else {
		out, err = cur.Store.Entities(ctx, req.Type, req.ScopeIDs, req.Limit)
	}
	if out == nil {
		out = []memory.KGEntity{}
	}
	return EntityList{Entities: out}, err
}

// Deleted reports what a delete removed.
type Deleted struct {
	Deleted string `json:"deleted"`
}

// DeleteEntity deletes an entity with its observations and edges; their
// text is erased from the database and the retrieval index's files.
func (cur *Curator) DeleteEntity(ctx context.Context, id string) (Deleted, error) {
	if err := memory.ValidateRef("entityId", id, false); err != nil {
		return Deleted{}, err
	}
	return cur.deleted(ctx, id, cur.Store.DeleteEntity(ctx, id))
}

// deleted finishes a knowledge-graph delete: on success, the records
// leave the retrieval index's files too.
func (cur *Curator) deleted(ctx context.Context, id string, err error) (Deleted, error) {
	if err != nil {
		return Deleted{}, err
	}
	cur.Erase(ctx)
	return Deleted{Deleted: id}, nil
}

// ObserveRequest records a fact about an entity.
type ObserveRequest struct {
	EntityID string `json:"entityId" jsonschema:"the entity the fact is about"`
	Content  string `json:"content" jsonschema:"the fact"`
	// ID is optional ("kgo_" + a ULID by default); IdempotencyKey, instead
	// of it, names the fact for retries.
	ID             string `json:"id,omitempty" jsonschema:"optional id for the fact; a new kgo_ id is made when omitted"`
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"optional key of this write (instead of id): a retry with the same key returns the first result instead of recording the fact twice"`
}

// Observe records a fact about an entity and embeds it.
func (cur *Curator) Observe(ctx context.Context, req ObserveRequest) (memory.KGObservation, error) {
	if err := cur.CheckFact(req.EntityID, req.Content); err != nil {
		return memory.KGObservation{}, err
	}
	ent, err := cur.Store.Entity(ctx, req.EntityID)
	if err != nil {
		return memory.KGObservation{}, err
	}
	id, err := newOrKeyedID(cur.NewID, "kgo", req.ID, req.IdempotencyKey)
	if err != nil {
		return memory.KGObservation{}, err
	}
	o := memory.KGObservation{ID: id, EntityID: ent.ID, Content: cur.Redact(req.Content), CreatedAt: cur.Now(), Scope: ent.Scope}
	out, err := cur.Store.AddKGObservation(ctx, o)
	if err != nil && (req.ID != "" || req.IdempotencyKey != "") {
		return memory.Replay(err, id, func() (memory.KGObservation, error) { return cur.kgObservation(ctx, ent.ID, id) },
			func(got memory.KGObservation) bool { return got.EntityID == o.EntityID && got.Content == o.Content }, "fact")
	}
	if err != nil {
		return out, err
	}
	cur.Embed(ctx, []memory.EmbedJob{{Kind: memory.VectorKGObservation, ID: out.ID, Content: ObservationText(ent.Name, out.Content)}})
	return out, nil
}

// CheckFact validates a fact about an entity as Observe and an import
// store it.
func (cur *Curator) CheckFact(entityID, content string) error {
	if err := memory.ValidateRef("entityId", entityID, false); err != nil {
		return err
	}
	return memory.ValidateContent("content", content, cur.MaxBytes)
}

// KGObservationRef names an entity observation.
type KGObservationRef struct {
	ObservationID string `json:"observationId" jsonschema:"the entity observation's id"`
}

// DeleteKGObservation deletes an entity observation, erasing its text.
func (cur *Curator) DeleteKGObservation(ctx context.Context, id string) (Deleted, error) {
	if err := memory.ValidateRef("observationId", id, false); err != nil {
		return Deleted{}, err
	}
	return cur.deleted(ctx, id, cur.Store.DeleteKGObservation(ctx, id))
}

// EdgeRequest relates two entities.
type EdgeRequest struct {
	Source   string          `json:"source" jsonschema:"the source entity's id"`
	Target   string          `json:"target" jsonschema:"the target entity's id"`
	Relation string          `json:"relation" jsonschema:"how source relates to target, e.g. depends_on, works_on, owns"`
	Data     json.RawMessage `json:"data,omitempty" jsonschema:"a JSON object of properties"`
	// ID is optional ("edge_" + a ULID by default); IdempotencyKey,
	// instead of it, names the edge for retries.
	ID             string `json:"id,omitempty" jsonschema:"optional id for the edge; a new edge_ id is made when omitted"`
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"optional key of this write (instead of id): a retry with the same key returns the first result instead of relating them twice"`
}

// CreateEdge relates two entities and embeds the edge.
func (cur *Curator) CreateEdge(ctx context.Context, req EdgeRequest) (memory.KGEdge, error) {
	id, err := newOrKeyedID(cur.NewID, "edge", req.ID, req.IdempotencyKey)
	if err != nil {
		return memory.KGEdge{}, err
	}
	g := memory.KGEdge{ID: id, Source: req.Source, Target: req.Target, Relation: req.Relation, CreatedAt: cur.Now()}
	if req.Data != nil {
		d, err := memory.NormalizeObject("data", req.Data)
		if err != nil {
			return g, err
		}
		g.Data = memory.RawObject(d)
	}
	if err := CheckNewEdge(g); err != nil {
		return g, err
	}
	src, err := cur.Store.Entity(ctx, g.Source)
	if err != nil {
		return g, err
	}
	dst, err := cur.Store.Entity(ctx, g.Target)
	if err != nil {
		return g, err
	}
	g.Scope = src.Scope
	out, err := cur.Store.AddEdge(ctx, g)
	if err != nil && (req.ID != "" || req.IdempotencyKey != "") {
		return memory.Replay(err, id, func() (memory.KGEdge, error) { return cur.edge(ctx, g.Source, id) },
			func(got memory.KGEdge) bool {
				return got.Source == g.Source && got.Target == g.Target && got.Relation == g.Relation
			}, "edge")
	}
	if err != nil {
		return out, err
	}
	cur.Embed(ctx, []memory.EmbedJob{{Kind: memory.VectorKGEdge, ID: out.ID, Content: EdgeText(src.Name, out.Relation, dst.Name)}})
	return out, nil
}

// CheckNewEdge validates an edge as CreateEdge and an import store it.
func CheckNewEdge(g memory.KGEdge) error {
	for _, id := range []string{g.Source, g.Target} {
		if err := memory.ValidateRef("entity id", id, false); err != nil {
			return err
		}
	}
	return CheckEdge(g)
}

// EdgeRef names an edge.
type EdgeRef struct {
	EdgeID string `json:"edgeId" jsonschema:"the edge's id"`
}

// DeleteEdge deletes an edge, erasing its text.
func (cur *Curator) DeleteEdge(ctx context.Context, id string) (Deleted, error) {
	if err := memory.ValidateRef("edgeId", id, false); err != nil {
		return Deleted{}, err
	}
	return cur.deleted(ctx, id, cur.Store.DeleteEdge(ctx, id))
}

// EdgesRequest lists edges.
type EdgesRequest struct {
	EntityID string `json:"entityId,omitempty" jsonschema:"only edges touching this entity"`
	Limit    int    `json:"limit,omitempty" jsonschema:"most edges to return, 1 to 1000; default 100"`
}

// EdgeList is a list of edges.
type EdgeList struct {
	Edges []memory.KGEdge `json:"edges"`
}

// Edges lists edges.
func (cur *Curator) Edges(ctx context.Context, req EdgesRequest) (EdgeList, error) {
	if req.Limit < 0 || req.Limit > 1000 {
		return EdgeList{}, memory.Errorf(memory.CodeInvalidParams, "limit %d is out of range [1, 1000]", req.Limit)
	}
	if req.Limit == 0 {
		req.Limit = 100
	}
	out, err := cur.Store.Edges(ctx, req.EntityID, req.Limit)
	if out == nil {
		out = []memory.KGEdge{}
	}
	return EdgeList{Edges: out}, err
}

// newOrKeyedID is the id a new record asks for (its own, or derived from
// its idempotency key), or a new one with prefix.
func newOrKeyedID(newID func(string) string, prefix, id, key string) (string, error) {
	id, err := memory.KeyedID(prefix, id, key)
	if err != nil || id == "" {
		return newID(prefix), err
	}
	return id, memory.ValidateRef("id", id, false)
}

// kgObservation finds the fact id among entityID's.
func (cur *Curator) kgObservation(ctx context.Context, entityID, id string) (memory.KGObservation, error) {
	obs, err := cur.Store.KGObservations(ctx, entityID)
	if err != nil {
		return memory.KGObservation{}, err
	}
	for _, o := range obs {
		if o.ID == id {
			return o, nil
		}
	}
	return memory.KGObservation{}, memory.Errorf(memory.CodeNotFound, "fact %q not found", id)
}

// edge finds the edge id among source's.
func (cur *Curator) edge(ctx context.Context, source, id string) (memory.KGEdge, error) {
	edges, err := cur.Store.Edges(ctx, source, 100_000)
	if err != nil {
		return memory.KGEdge{}, err
	}
	for _, g := range edges {
		if g.ID == id {
			return g, nil
		}
	}
	return memory.KGEdge{}, memory.Errorf(memory.CodeNotFound, "edge %q not found", id)
}
