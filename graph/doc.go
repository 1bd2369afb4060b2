// Package graph holds cairn's knowledge graph: the rules of what makes a
// valid entity, observation or edge, and the text each is searched and
// embedded by; the extractor that proposes entities and edges from
// thoughts (Extract), staged as candidates for moderation; what a
// candidate becomes when a moderator approves it; and the Curator that
// creates, reads, walks and deletes the graph's records and moderates
// its candidates (knowledgegraph_moderate). Storage is the store's
// (memory.GraphStore, memory.CandidateStore); the engine gives the
// Curator its clock, ids, redactor, embedder and index eraser.
package graph
