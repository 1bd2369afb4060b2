// Package treesitter parses source files into tree-sitter syntax trees
// without cgo. The tree-sitter runtime and the Python, JavaScript,
// TypeScript, TSX, Rust, Java and C grammars are compiled to one
// WebAssembly module and translated to Go (package parsers, regenerated
// by scripts/gen-treesitter.sh); a parse runs that module on the file
// and reads the whole tree back at once.
//
// Nothing is set up when a program starts: the first Parse creates a
// module instance (about 6 MB of memory, a few milliseconds), and later
// parses reuse idle instances, one per parse running at the same moment,
// until the garbage collector drops those left idle.
package treesitter
