package cairn

import (
	"context"
	"encoding/json"
	"math"
	"strings"

	"github.com/cairnhq/cairn/graph"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// Limits of thoughts.
const (
	MaxTags     = 32
	MaxTagBytes = 64
)

// ThinkRequest records a thought.
type ThinkRequest struct {
	ID      string `json:"id,omitempty" jsonschema:"optional id; a new th_ id is made when omitted"`
	Content string `json:"content" jsonschema:"the thought: a conclusion, a decision, a lesson, a fact learned (at most 1 MiB)"`
	// Origin is who produced it: human, tool, model (default) or logged.
	Origin       memory.Origin `json:"origin,omitempty" jsonschema:"who produced it: human, tool, model (default) or logged; sets its trust tier"`
	Tags         []string      `json:"tags,omitempty" jsonschema:"labels to filter by (at most 32, each at most 64 bytes)"`
	IsPrivate    bool          `json:"is_private,omitempty" jsonschema:"keep it out of retrieval unless private thoughts are asked for"`
	Significance *float64      `json:"significance,omitempty" jsonschema:"how much it matters, 0 to 1; default 0.5"`
	IsSummary    bool          `json:"is_summary,omitempty" jsonschema:"it summarises other thoughts, listed in summary_of"`
	SummaryOf    []string      `json:"summary_of,omitempty" jsonschema:"ids of the thoughts it summarises"`
	Pipeline     string        `json:"pipeline,omitempty" jsonschema:"what produced it, e.g. inner_voice"`
	ScopeIDs     memory.Scope  `json:"scopeIds,omitzero" jsonschema:"where it belongs (sessionId, repoId, agentId, userId)"`
}

// Think records a thought and embeds it.
func (e *Engine) Think(ctx context.Context, req ThinkRequest) (memory.Thought, error) {
	t := memory.Thought{ID: req.ID, Content: req.Content, Origin: req.Origin, Tags: req.Tags, IsPrivate: req.IsPrivate,
		Status: memory.StatusActive, Significance: 0.5, IsSummary: req.IsSummary, SummaryOf: req.SummaryOf,
		Pipeline: req.Pipeline, CreatedAt: e.nowMs(), Scope: req.ScopeIDs}
	if t.Origin == "" {
		t.Origin = memory.OriginModel
	}
	if req.Significance != nil {
		t.Significance = *req.Significance
	}
	if err := e.checkThought(&t); err != nil {
		return t, err
	}
	if t.ID == "" {
		t.ID = e.newID("th")
	}
	out, err := e.store.AddThought(ctx, t)
	if err != nil {
		return out, err
	}
	e.embedAfterWrite(ctx, []memory.EmbedJob{{Kind: memory.VectorThought, ID: out.ID, Content: out.Content}})
	return out, nil
}

// checkThought validates a thought as Think and Import store it, trimming
// and deduplicating its tags. An empty id passes (Think makes one).
func (e *Engine) checkThought(t *memory.Thought) error {
	if !t.Origin.Valid() {
		return memory.Errorf(memory.CodeInvalidParams, "origin %q: want human, tool, model or logged", t.Origin)
	}
	if err := memory.ValidateContent("content", t.Content, e.maxBytes); err != nil {
		return err
	}
	t.Content = e.redactText(t.Content)
	if !(t.Significance >= 0 && t.Significance <= 1) || math.IsNaN(t.Significance) {
		return memory.Errorf(memory.CodeInvalidParams, "significance %v is out of range [0, 1]", t.Significance)
	}
	tags, err := cleanTags(t.Tags)
	if err != nil {
		return err
	}
	t.Tags = tags
	for _, id := range t.SummaryOf {
		if err := memory.ValidateRef("summary_of", id, false); err != nil {
			return err
		}
	}
	if err := memory.ValidateText("pipeline", t.Pipeline, 128); err != nil {
		return err
	}
	if err := t.Scope.Validate(); err != nil {
		return err
	}
	return memory.ValidateRef("id", t.ID, true)
}

// cleanTags trims, deduplicates and checks tags.
func cleanTags(in []string) ([]string, error) {
	if len(in) > MaxTags {
		return nil, memory.Errorf(memory.CodeInvalidParams, "%d tags, over the limit of %d", len(in), MaxTags)
	}
	out := []string{}
	for _, t := range in {
		t = strings.TrimSpace(t)
		if err := memory.ValidateContent("tag", t, MaxTagBytes); err != nil {
			return nil, err
		}
		dup := false
		for _, o := range out {
			dup = dup || o == t
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out, nil
}

// ThoughtRef names a thought.
type ThoughtRef struct {
	ThoughtID string `json:"thoughtId" jsonschema:"the thought's id"`
}

// Thought returns one thought.
func (e *Engine) Thought(ctx context.Context, id string) (memory.Thought, error) {
	return e.store.Thought(ctx, id)
}

// MarkThoughtRequest sets a thought's status.
type MarkThoughtRequest struct {
	ThoughtID string `json:"thoughtId" jsonschema:"the thought's id"`
	Status    string `json:"status" jsonschema:"removal (never retrieved again, kept until forgotten) or active (retrieved again)"`
}

// MarkThought sets a thought's status: removal takes it out of every
// retrieval (its text stays until thought_forget), active brings it back.
// Marking it with the status it has changes nothing.
func (e *Engine) MarkThought(ctx context.Context, req MarkThoughtRequest) (memory.Thought, error) {
	if err := memory.ValidateRef("thoughtId", req.ThoughtID, false); err != nil {
		return memory.Thought{}, err
	}
	if req.Status != memory.StatusActive && req.Status != memory.StatusRemoval {
		return memory.Thought{}, memory.Errorf(memory.CodeInvalidParams, "status %q: want active or removal", req.Status)
	}
	if _, err := e.store.Thought(ctx, req.ThoughtID); err != nil {
		return memory.Thought{}, err
	}
	if req.Status == memory.StatusRemoval && e.removals != nil {
		// Records when it was marked: maintenance_ops counts the
		// retention period from then.
		if _, err := e.removals.MarkRemoval(ctx, []string{req.ThoughtID}, e.nowMs()); err != nil {
			return memory.Thought{}, err
		}
	} else if _, err := e.store.SetThoughtStatus(ctx, []string{req.ThoughtID}, req.Status); err != nil {
		return memory.Thought{}, err
	}
	return e.store.Thought(ctx, req.ThoughtID)
}

// ThoughtsRequest lists thoughts.
type ThoughtsRequest struct {
	ScopeIDs       memory.Scope `json:"scopeIds,omitzero" jsonschema:"restrict to a scope"`
	IncludePrivate bool         `json:"include_private,omitempty" jsonschema:"include private thoughts"`
	Status         string       `json:"status,omitempty" jsonschema:"active or removal; default both"`
	Limit          int          `json:"limit,omitempty" jsonschema:"most thoughts to return, 1 to 1000; default 100"`
}

// ThoughtList is a page of thoughts, newest first.
type ThoughtList struct {
	Thoughts []memory.Thought `json:"thoughts"`
}

// Thoughts lists thoughts, newest first.
func (e *Engine) Thoughts(ctx context.Context, req ThoughtsRequest) (ThoughtList, error) {
	if req.Limit < 0 || req.Limit > 1000 {
		return ThoughtList{}, memory.Errorf(memory.CodeInvalidParams, "limit %d is out of range [1, 1000]", req.Limit)
	}
	if req.Status != "" && req.Status != memory.StatusActive && req.Status != memory.StatusRemoval {
		return ThoughtList{}, memory.Errorf(memory.CodeInvalidParams, "status %q: want active or removal", req.Status)
	}
	if err := req.ScopeIDs.Validate(); err != nil {
		return ThoughtList{}, err
	}
	ts, err := e.store.Thoughts(ctx, memory.ThoughtFilter{Scope: req.ScopeIDs, IncludePrivate: req.IncludePrivate, Status: req.Status, Limit: req.Limit})
	if ts == nil {
		ts = []memory.Thought{}
	}
	return ThoughtList{Thoughts: ts}, err
}

// EntityRequest creates an entity, or (with entityId, on update) changes
// one: fields left out keep their value.
type EntityRequest struct {
	EntityID string          `json:"entityId,omitempty" jsonschema:"the entity to update; a new ent_ id is made on create when omitted"`
	Name     string          `json:"name,omitempty" jsonschema:"the entity's name (a person, project, service, concept)"`
	Type     string          `json:"type,omitempty" jsonschema:"its type, e.g. person, project, service, library, decision"`
	Data     json.RawMessage `json:"data,omitempty" jsonschema:"a JSON object of properties"`
	ScopeIDs memory.Scope    `json:"scopeIds,omitzero" jsonschema:"where it belongs (on create)"`
}

// CreateEntity adds an entity to the knowledge graph and embeds it.
func (e *Engine) CreateEntity(ctx context.Context, req EntityRequest) (memory.KGEntity, error) {
	now := e.nowMs()
	ent := memory.KGEntity{ID: req.EntityID, Name: req.Name, Type: req.Type, CreatedAt: now, UpdatedAt: now, Scope: req.ScopeIDs}
	if req.Data != nil {
		d, err := memory.NormalizeObject("data", req.Data)
		if err != nil {
			return ent, err
		}
		ent.Data = memory.RawObject(d)
	}
	if ent.ID == "" {
		ent.ID = e.newID("ent")
	}
	if err := checkNewEntity(ent); err != nil {
		return ent, err
	}
	if _, err := e.store.Entity(ctx, ent.ID); err == nil {
		return ent, memory.Errorf(memory.CodeConflict, "entity id %q already exists; use kg_entity_update", ent.ID)
	} else if !memory.IsCode(err, memory.CodeNotFound) {
		return ent, err
	}
	return e.putEntity(ctx, ent)
}

// checkNewEntity validates an entity as CreateEntity and Import store it.
func checkNewEntity(ent memory.KGEntity) error {
	if err := memory.ValidateRef("entityId", ent.ID, false); err != nil {
		return err
	}
	return graph.CheckEntity(ent)
}

// UpdateEntity changes an entity's name, type or data.
func (e *Engine) UpdateEntity(ctx context.Context, req EntityRequest) (memory.KGEntity, error) {
	if err := memory.ValidateRef("entityId", req.EntityID, false); err != nil {
		return memory.KGEntity{}, err
	}
	ent, err := e.store.Entity(ctx, req.EntityID)
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
	ent.UpdatedAt = e.nowMs()
	if err := graph.CheckEntity(ent); err != nil {
		return ent, err
	}
	out, err := e.putEntity(ctx, ent)
	if err == nil && renamed && e.embedOnWrite {
		// A rename changes the text of the entity's facts and edges: the
		// store left them pending; embed them now.
		if _, rerr := e.Reembed(context.WithoutCancel(ctx), ReembedRequest{}, nil); rerr != nil {
			e.log.Warn("renamed entity's facts and edges stored without vectors; run cairn reembed", "err", memory.Public(rerr).Message)
		}
	}
	return out, err
}

func (e *Engine) putEntity(ctx context.Context, ent memory.KGEntity) (memory.KGEntity, error) {
	out, err := e.store.PutEntity(ctx, ent)
	if err != nil {
		return out, err
	}
	e.embedAfterWrite(ctx, []memory.EmbedJob{{Kind: memory.VectorKGEntity, ID: out.ID, Content: graph.EntityText(out)}})
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
func (e *Engine) Entity(ctx context.Context, id string) (EntityView, error) {
	ent, err := e.store.Entity(ctx, id)
	if err != nil {
		return EntityView{}, err
	}
	obs, err := e.store.KGObservations(ctx, id)
	if err != nil {
		return EntityView{}, err
	}
	edges, err := e.store.Edges(ctx, id, 1000)
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
func (e *Engine) Entities(ctx context.Context, req EntitiesRequest) (EntityList, error) {
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
		if err := memory.ValidateText("name", req.Name, graph.MaxNameBytes); err != nil {
			return EntityList{}, err
		}
		all, err2 := e.store.EntitiesByName(ctx, req.Name)
		err = err2
		for _, ent := range all {
			if (req.Type == "" || ent.Type == req.Type) && req.ScopeIDs.Matches(ent.Scope) && len(out) < req.Limit {
				out = append(out, ent)
			}
		}
	} else {
		out, err = e.store.Entities(ctx, req.Type, req.ScopeIDs, req.Limit)
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
func (e *Engine) DeleteEntity(ctx context.Context, id string) (Deleted, error) {
	if err := memory.ValidateRef("entityId", id, false); err != nil {
		return Deleted{}, err
	}
	return e.deleted(ctx, id, e.store.DeleteEntity(ctx, id))
}

// deleted finishes a knowledge-graph delete: on success, the records
// leave the retrieval index's files too.
func (e *Engine) deleted(ctx context.Context, id string, err error) (Deleted, error) {
	if err != nil {
		return Deleted{}, err
	}
	e.eraseFromIndex(ctx)
	return Deleted{Deleted: id}, nil
}

// ObserveRequest records a fact about an entity.
type ObserveRequest struct {
	EntityID string `json:"entityId" jsonschema:"the entity the fact is about"`
	Content  string `json:"content" jsonschema:"the fact"`
}

// Observe records a fact about an entity and embeds it.
func (e *Engine) Observe(ctx context.Context, req ObserveRequest) (memory.KGObservation, error) {
	if err := e.checkObserve(req.EntityID, req.Content); err != nil {
		return memory.KGObservation{}, err
	}
	ent, err := e.store.Entity(ctx, req.EntityID)
	if err != nil {
		return memory.KGObservation{}, err
	}
	o := memory.KGObservation{ID: e.newID("kgo"), EntityID: ent.ID, Content: e.redactText(req.Content), CreatedAt: e.nowMs(), Scope: ent.Scope}
	out, err := e.store.AddKGObservation(ctx, o)
	if err != nil {
		return out, err
	}
	e.embedAfterWrite(ctx, []memory.EmbedJob{{Kind: memory.VectorKGObservation, ID: out.ID, Content: graph.ObservationText(ent.Name, out.Content)}})
	return out, nil
}

// checkObserve validates a fact about an entity as Observe and Import store
// it.
func (e *Engine) checkObserve(entityID, content string) error {
	if err := memory.ValidateRef("entityId", entityID, false); err != nil {
		return err
	}
	return memory.ValidateContent("content", content, e.maxBytes)
}

// KGObservationRef names an entity observation.
type KGObservationRef struct {
	ObservationID string `json:"observationId" jsonschema:"the entity observation's id"`
}

// DeleteKGObservation deletes an entity observation, erasing its text.
func (e *Engine) DeleteKGObservation(ctx context.Context, id string) (Deleted, error) {
	if err := memory.ValidateRef("observationId", id, false); err != nil {
		return Deleted{}, err
	}
	return e.deleted(ctx, id, e.store.DeleteKGObservation(ctx, id))
}

// EdgeRequest relates two entities.
type EdgeRequest struct {
	Source   string          `json:"source" jsonschema:"the source entity's id"`
	Target   string          `json:"target" jsonschema:"the target entity's id"`
	Relation string          `json:"relation" jsonschema:"how source relates to target, e.g. depends_on, works_on, owns"`
	Data     json.RawMessage `json:"data,omitempty" jsonschema:"a JSON object of properties"`
}

// CreateEdge relates two entities and embeds the edge.
func (e *Engine) CreateEdge(ctx context.Context, req EdgeRequest) (memory.KGEdge, error) {
	g := memory.KGEdge{ID: e.newID("edge"), Source: req.Source, Target: req.Target, Relation: req.Relation, CreatedAt: e.nowMs()}
	if req.Data != nil {
		d, err := memory.NormalizeObject("data", req.Data)
		if err != nil {
			return g, err
		}
		g.Data = memory.RawObject(d)
	}
	if err := checkEdge(g); err != nil {
		return g, err
	}
	src, err := e.store.Entity(ctx, g.Source)
	if err != nil {
		return g, err
	}
	dst, err := e.store.Entity(ctx, g.Target)
	if err != nil {
		return g, err
	}
	g.Scope = src.Scope
	out, err := e.store.AddEdge(ctx, g)
	if err != nil {
		return out, err
	}
	e.embedAfterWrite(ctx, []memory.EmbedJob{{Kind: memory.VectorKGEdge, ID: out.ID, Content: graph.EdgeText(src.Name, out.Relation, dst.Name)}})
	return out, nil
}

// checkEdge validates an edge as CreateEdge and Import store it.
func checkEdge(g memory.KGEdge) error {
	for _, id := range []string{g.Source, g.Target} {
		if err := memory.ValidateRef("entity id", id, false); err != nil {
			return err
		}
	}
	return graph.CheckEdge(g)
}

// EdgeRef names an edge.
type EdgeRef struct {
	EdgeID string `json:"edgeId" jsonschema:"the edge's id"`
}

// DeleteEdge deletes an edge, erasing its text.
func (e *Engine) DeleteEdge(ctx context.Context, id string) (Deleted, error) {
	if err := memory.ValidateRef("edgeId", id, false); err != nil {
		return Deleted{}, err
	}
	return e.deleted(ctx, id, e.store.DeleteEdge(ctx, id))
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
func (e *Engine) Edges(ctx context.Context, req EdgesRequest) (EdgeList, error) {
	if req.Limit < 0 || req.Limit > 1000 {
		return EdgeList{}, memory.Errorf(memory.CodeInvalidParams, "limit %d is out of range [1, 1000]", req.Limit)
	}
	if req.Limit == 0 {
		req.Limit = 100
	}
	out, err := e.store.Edges(ctx, req.EntityID, req.Limit)
	if out == nil {
		out = []memory.KGEdge{}
	}
	return EdgeList{Edges: out}, err
}

// InnerVoice runs inner_voice.retrieve: snippets of thoughts and the
// knowledge graph most similar to a query, with provenance and trust tiers,
// for a caller to synthesise from. It fails with feature_disabled unless
// the inner voice is enabled (SURR_ENABLE_INNER_VOICE=1).
func (e *Engine) InnerVoice(ctx context.Context, req retrieve.InnerVoiceRequest) (retrieve.InnerVoiceResult, error) {
	return e.voice.Retrieve(ctx, req)
}

// InnerVoiceConfig is the inner voice's effective configuration.
func (e *Engine) InnerVoiceConfig() retrieve.InnerVoiceConfig { return e.voice.Config }

// InnerVoiceCounters are the inner voice's calls and failures so far (kept
// even when MCP_NO_LOG silences the logs).
func (e *Engine) InnerVoiceCounters() (calls, failures int64) { return e.voice.Counters() }
