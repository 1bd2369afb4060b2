// Package index is cairn's retrieval index: the documents the hybrid
// provider and inner_voice.retrieve search (lexical postings, each record's
// scope, time, kind and capsule position, its vector, its tags), kept
// persistent and shared.
//
// The index lives beside the database in immutable segment files (package
// segment) that every process maps read-only, so a new process opens it in
// milliseconds, pages in only what a query touches, and processes share
// the pages through the operating system's cache. A MANIFEST names the
// live segments, the documents deleted from them and the change sequence
// number of the store they reflect; writes made since then are replayed
// from the store's change log into a small delta in memory. When the delta
// grows, a process writes it out as a new segment (a flush); adjacent
// segments of similar size merge in the background, as Lucene's and
// tantivy's do. The index is derived data: whatever happens to it (a crash
// mid-write, a corrupt file, an older format), a process rebuilds it from
// the store and never answers from a damaged one.
//
// Documents are numbered globally: segment after segment, oldest first,
// then the delta. A View reads one consistent state.
package index
