// Package layering states the layers of cairn's packages, in the order
// DESIGN.md gives them, and checks a build's imports against them: every
// import points down the order, a face talks only to the root package
// (and memory and internal/), no service imports the root package, a
// store imports only memory and the shared SQL of sqlstore, and nothing
// imports a face but the binary that serves them. Its test runs the check
// on the repository with go list, so a change that bends the layers fails
// CI; docs/architecture.md draws the same picture.
package layering
