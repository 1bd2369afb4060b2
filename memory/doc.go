// Package memory is cairn's vocabulary: the records an agent's memory is made
// of (observations, capsules, summaries, pins), the scopes that isolate them,
// the Store seam every storage engine implements, and the typed Error whose
// stable codes every interface reports.
//
// It imports nothing of cairn's, so every other package can stand on it.
//
// Times are Unix milliseconds (int64) throughout, as the retrieval contract
// writes them.
package memory
