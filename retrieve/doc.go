// Package retrieve is cairn's retrieval pipeline and the tiered retrieval
// contract over it: pins, the current capsule summary, and ranked provider
// candidates, scoped, deduplicated across tiers, capped, cut to a token
// budget, deterministic, and explained.
//
// A Provider ranks candidates; LocalFTS is the contract's default provider
// (FTS5 bm25 blended with recency). Queries are user text by default, with
// an explicit FTS5-syntax mode for power users.
package retrieve
