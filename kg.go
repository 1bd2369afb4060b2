package cairn

import (
	"context"

	"github.com/cairnhq/cairn/graph"
	"github.com/cairnhq/cairn/memory"
)

// The knowledge graph and the moderation of its candidates, kept by
// graph.Curator.

type (
	// EntityRequest creates or changes an entity.
	EntityRequest = graph.EntityRequest
	// EntityRef names an entity.
	EntityRef = graph.EntityRef
	// EntityView is an entity with its observations and edges.
	EntityView = graph.EntityView
	// EntitiesRequest lists or looks up entities.
	EntitiesRequest = graph.EntitiesRequest
	// EntityList is a list of entities.
	EntityList = graph.EntityList
	// Deleted reports what a delete removed.
	Deleted = graph.Deleted
	// ObserveRequest records a fact about an entity.
	ObserveRequest = graph.ObserveRequest
	// KGObservationRef names an entity observation.
	KGObservationRef = graph.KGObservationRef
	// EdgeRequest relates two entities.
	EdgeRequest = graph.EdgeRequest
	// EdgeRef names an edge.
	EdgeRef = graph.EdgeRef
	// EdgesRequest lists edges.
	EdgesRequest = graph.EdgesRequest
	// EdgeList is a list of edges.
	EdgeList = graph.EdgeList
	// Neighbourhood is an entity with the entities around it.
	Neighbourhood = graph.Neighbourhood
	// CandidatesRequest lists knowledge-graph candidates.
	CandidatesRequest = graph.CandidatesRequest
	// CandidateList is a page of candidates.
	CandidateList = graph.CandidateList
	// ModerateItem is one decision of knowledgegraph_moderate.
	ModerateItem = graph.ModerateItem
	// ModerateRequest is knowledgegraph_moderate's parameters.
	ModerateRequest = graph.ModerateRequest
	// ModerateOutcome is what one decision did.
	ModerateOutcome = graph.ModerateOutcome
	// ModerateResult is knowledgegraph_moderate's answer.
	ModerateResult = graph.ModerateResult
)

// CreateEntity adds an entity to the knowledge graph and embeds it.
func (e *Engine) CreateEntity(ctx context.Context, req EntityRequest) (memory.KGEntity, error) {
	return e.kg.CreateEntity(ctx, req)
}

// UpdateEntity changes an entity's name, type or data.
func (e *Engine) UpdateEntity(ctx context.Context, req EntityRequest) (memory.KGEntity, error) {
	return e.kg.UpdateEntity(ctx, req)
}

// Entity returns an entity with its observations and edges.
func (e *Engine) Entity(ctx context.Context, id string) (EntityView, error) {
	return e.kg.Entity(ctx, id)
}

// Entities finds entities by name, or lists them (by type and scope).
func (e *Engine) Entities(ctx context.Context, req EntitiesRequest) (EntityList, error) {
	return e.kg.Entities(ctx, req)
}

// DeleteEntity deletes an entity with its observations and edges, their
// text erased.
func (e *Engine) DeleteEntity(ctx context.Context, id string) (Deleted, error) {
	return e.kg.DeleteEntity(ctx, id)
}

// Observe records a fact about an entity and embeds it.
func (e *Engine) Observe(ctx context.Context, req ObserveRequest) (memory.KGObservation, error) {
	return e.kg.Observe(ctx, req)
}

// DeleteKGObservation deletes an entity observation, erasing its text.
func (e *Engine) DeleteKGObservation(ctx context.Context, id string) (Deleted, error) {
	return e.kg.DeleteKGObservation(ctx, id)
}

// CreateEdge relates two entities and embeds the edge.
func (e *Engine) CreateEdge(ctx context.Context, req EdgeRequest) (memory.KGEdge, error) {
	return e.kg.CreateEdge(ctx, req)
}

// DeleteEdge deletes an edge, erasing its text.
func (e *Engine) DeleteEdge(ctx context.Context, id string) (Deleted, error) {
	return e.kg.DeleteEdge(ctx, id)
}

// Edges lists edges.
func (e *Engine) Edges(ctx context.Context, req EdgesRequest) (EdgeList, error) {
	return e.kg.Edges(ctx, req)
}

// Neighbourhood walks the knowledge graph from an entity, breadth first,
// to depth (1 to 3) and at most maxNodes entities (2 to 200).
func (e *Engine) Neighbourhood(ctx context.Context, entityID string, depth, maxNodes int) (Neighbourhood, error) {
	return e.kg.Neighbourhood(ctx, entityID, depth, maxNodes)
}

// Candidates lists knowledge-graph candidates, most confident first.
func (e *Engine) Candidates(ctx context.Context, req CandidatesRequest) (CandidateList, error) {
	return e.kg.Candidates(ctx, req)
}

// Moderate reviews knowledge-graph candidates and applies decisions (see
// graph.Curator.Moderate).
func (e *Engine) Moderate(ctx context.Context, req ModerateRequest) (ModerateResult, error) {
	return e.kg.Moderate(ctx, req)
}
