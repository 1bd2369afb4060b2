// Package storetest is the conformance suite every memory.Store
// implementation runs: one set of behaviours (writes, scopes, capsules,
// summaries, pins, forgetting and deleting every kind of record, full-text
// search, bulk import and export), checked the same way for each store.
//
// A store's own test calls Run with a function that opens a fresh, empty
// store.
package storetest
