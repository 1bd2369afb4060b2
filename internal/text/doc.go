// Package text holds the few text helpers the root package and the faces
// share, so that a count, a size or an excerpt reads the same in every
// place: the CLI, the web page and the engine's reports.
package text
