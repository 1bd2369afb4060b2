package cairn

import (
	"context"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// knowledgeTools are the thoughts, the knowledge graph and the inner voice.
var knowledgeTools = []Tool{
	newTool(Tool{
		Name: "think", Title: "Record a thought", Method: "POST", Path: "/v1/thoughts", Creates: true,
		Description: `Record a thought worth keeping beyond this turn: a conclusion, a decision and its reason, a lesson, a pattern noticed. origin says who produced it (human, tool, model (default) or logged) and sets its trust tier when inner_voice_retrieve returns it; tags let retrievals filter; is_private keeps it out of retrieval unless asked for. It is embedded for semantic recall. Returns the stored thought with its th_ id.`,
	}, func(e *Engine, ctx context.Context, in ThinkRequest) (memory.Thought, error) { return e.Think(ctx, in) }),
	newTool(Tool{
		Name: "thought_get", Title: "Read a thought", Method: "GET", Path: "/v1/thoughts/{thoughtId}", ReadOnly: true, Idempotent: true,
		Description: `Read one thought by id, with its origin, tags, privacy, status, significance and scope.`,
	}, func(e *Engine, ctx context.Context, in ThoughtRef) (memory.Thought, error) {
		return e.Thought(ctx, in.ThoughtID)
	}),
	newTool(Tool{
		Name: "thoughts_list", Title: "List thoughts", Method: "GET", Path: "/v1/thoughts", ReadOnly: true, Idempotent: true,
		Description: `List thoughts, newest first, optionally within a scope or by status (active, removal). Private thoughts are left out unless include_private is true. limit is 1 to 1000 (default 100).`,
	}, func(e *Engine, ctx context.Context, in ThoughtsRequest) (ThoughtList, error) {
		return e.Thoughts(ctx, in)
	}),
	newTool(Tool{
		Name: "thought_mark", Title: "Mark a thought for removal", Method: "PUT", Path: "/v1/thoughts/{thoughtId}/status", Idempotent: true,
		Description: `Set a thought's status: removal takes it out of every retrieval (inner_voice_retrieve skips it; thoughts_list still lists it, with its status) while its text is kept; active brings it back. Use it for a thought that is outdated or superseded; use thought_forget to erase one. Returns the thought.`,
	}, func(e *Engine, ctx context.Context, in MarkThoughtRequest) (memory.Thought, error) {
		return e.MarkThought(ctx, in)
	}),
	newTool(Tool{
		Name: "thought_forget", Title: "Forget a thought", Method: "POST", Path: "/v1/thoughts/{thoughtId}/forget", Destructive: true, Idempotent: true,
		Description: `Forget a thought that must not be kept (a secret, personal data, something the user asked to erase): its content becomes "[redacted]" and its tags are dropped; the original text and its vector are erased from disk and from every index, so inner_voice_retrieve never returns it again. The summary thoughts made from it (inner_voice answers that quote it), and summaries of those, are forgotten with it. Its id, origin, status, time and scope remain. Forgetting it again changes nothing. Cannot be undone (to stop retrieving a thought but keep it, use thought_mark). Returns the redacted thought.`,
	}, func(e *Engine, ctx context.Context, in ThoughtRef) (memory.Thought, error) {
		return e.ForgetThought(ctx, in.ThoughtID)
	}),
	newTool(Tool{
		Name: "kg_entity_create", Title: "Create a knowledge-graph entity", Method: "POST", Path: "/v1/kg/entities", Creates: true,
		Description: `Add an entity to the knowledge graph: a person, project, service, library, decision or concept that facts will be recorded about. name and type are required; data is a JSON object of properties. Look it up first with kg_entities (by name) to avoid duplicates. Returns the entity with its ent_ id.`,
	}, func(e *Engine, ctx context.Context, in EntityRequest) (memory.KGEntity, error) {
		return e.CreateEntity(ctx, in)
	}),
	newTool(Tool{
		Name: "kg_entity_update", Title: "Update a knowledge-graph entity", Method: "PATCH", Path: "/v1/kg/entities/{entityId}", Idempotent: true,
		Description: `Change an entity's name, type or data; fields left out keep their value (data, when given, replaces the whole object). Returns the updated entity.`,
	}, func(e *Engine, ctx context.Context, in EntityRequest) (memory.KGEntity, error) {
		return e.UpdateEntity(ctx, in)
	}),
	newTool(Tool{
		Name: "kg_entity_get", Title: "Read a knowledge-graph entity", Method: "GET", Path: "/v1/kg/entities/{entityId}", ReadOnly: true, Idempotent: true,
		Description: `Read an entity with every observation recorded about it and every edge touching it.`,
	}, func(e *Engine, ctx context.Context, in EntityRef) (EntityView, error) {
		return e.Entity(ctx, in.EntityID)
	}),
	newTool(Tool{
		Name: "kg_entity_delete", Title: "Delete a knowledge-graph entity", Method: "DELETE", Path: "/v1/kg/entities/{entityId}", Destructive: true, Idempotent: true,
		Description: `Delete an entity together with its observations and every edge touching it (also the way to forget one: their text is erased from disk and from every index, so no retrieval finds it again). Deleting it again is a not_found error and changes nothing. Cannot be undone.`,
	}, func(e *Engine, ctx context.Context, in EntityRef) (Deleted, error) {
		return e.DeleteEntity(ctx, in.EntityID)
	}),
	newTool(Tool{
		Name: "kg_entities", Title: "Find knowledge-graph entities", Method: "GET", Path: "/v1/kg/entities", ReadOnly: true, Idempotent: true,
		Description: `Find entities by exact name (any case), or list them by type and scope, oldest first. limit is 1 to 1000 (default 100). Use it before kg_entity_create to reuse an existing entity.`,
	}, func(e *Engine, ctx context.Context, in EntitiesRequest) (EntityList, error) {
		return e.Entities(ctx, in)
	}),
	newTool(Tool{
		Name: "kg_observe", Title: "Record a fact about an entity", Method: "POST", Path: "/v1/kg/entities/{entityId}/observations", Creates: true,
		Description: `Record a fact about an entity ("the gateway drops idle links after 60 s"). It is embedded with the entity's name for semantic recall. Returns the observation with its kgo_ id.`,
	}, func(e *Engine, ctx context.Context, in ObserveRequest) (memory.KGObservation, error) {
		return e.Observe(ctx, in)
	}),
	newTool(Tool{
		Name: "kg_observation_delete", Title: "Delete an entity observation", Method: "DELETE", Path: "/v1/kg/observations/{observationId}", Destructive: true, Idempotent: true,
		Description: `Delete one fact recorded about an entity (also the way to forget a wrong or secret fact: its text is erased from disk and from every index). Deleting it again is a not_found error and changes nothing. Cannot be undone.`,
	}, func(e *Engine, ctx context.Context, in KGObservationRef) (Deleted, error) {
		return e.DeleteKGObservation(ctx, in.ObservationID)
	}),
	newTool(Tool{
		Name: "kg_edge_create", Title: "Relate two entities", Method: "POST", Path: "/v1/kg/edges", Creates: true,
		Description: `Relate a source entity to a target entity (relation such as depends_on, works_on, owns, caused). Both must exist. Returns the edge with its edge_ id.`,
	}, func(e *Engine, ctx context.Context, in EdgeRequest) (memory.KGEdge, error) {
		return e.CreateEdge(ctx, in)
	}),
	newTool(Tool{
		Name: "kg_edge_delete", Title: "Delete an edge", Method: "DELETE", Path: "/v1/kg/edges/{edgeId}", Destructive: true, Idempotent: true,
		Description: `Delete one edge between entities; its text is erased from disk and from every index. The entities stay. Deleting it again is a not_found error and changes nothing.`,
	}, func(e *Engine, ctx context.Context, in EdgeRef) (Deleted, error) { return e.DeleteEdge(ctx, in.EdgeID) }),
	newTool(Tool{
		Name: "kg_edges", Title: "List edges", Method: "GET", Path: "/v1/kg/edges", ReadOnly: true, Idempotent: true,
		Description: `List edges, optionally only those touching one entity (entityId). limit is 1 to 1000 (default 100).`,
	}, func(e *Engine, ctx context.Context, in EdgesRequest) (EdgeList, error) { return e.Edges(ctx, in) }),
	newTool(Tool{
		Name: "inner_voice_retrieve", Title: "Retrieve thoughts and knowledge snippets", Method: "POST", Path: "/v1/inner-voice/retrieve", ReadOnly: true, Idempotent: true,
		Description: `Turn a natural-language query into provenance-rich snippets from your thoughts and the knowledge graph, for you to reason over and cite by id. Retrieval only: it never writes an answer. Each snippet has its table and id, source_type (thought, kg_entity, kg_observation), origin, trust_tier (green: knowledge graph and human or logged thoughts; amber: tool thoughts; red: model thoughts), created_at, text (at most 800 characters, cut at a sentence end), score (cosine similarity) and content_hash. top_k (default 10, 1..50) snippets are split between the graph and thoughts by mix (KG share, default 0.6), at least one from each when both have hits. floor is the minimum similarity; it is lowered toward min_floor so each source can contribute. Private thoughts are excluded unless include_private; include_tags / exclude_tags filter. An empty result has diagnostics.no_results and a reason. Disabled unless the server runs with SURR_ENABLE_INNER_VOICE=1 (feature_disabled).`,
	}, func(e *Engine, ctx context.Context, in retrieve.InnerVoiceRequest) (retrieve.InnerVoiceResult, error) {
		return e.InnerVoice(ctx, in)
	}),
}
