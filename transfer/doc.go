// Package transfer moves records in and out of a cairn database: import
// of JSON Lines and the kindling-parity dataset, export, imports from
// other agent-memory systems (peer: the MCP memory server, Kindling,
// mem0), and the migration of a whole database into another store. It
// works over the memory.Store seam and the peer package's readers; the
// engine gives it its record checks, clock and embedder, so an import
// stores nothing the engine's own writes would refuse.
package transfer
