//go:build !treesitter || !cgo

package code

// astResolver returns the AST parser for a dialect other than Go. This
// build has none (it lacks the build tag treesitter, or cgo): every such
// file goes to the regex fallback.
func astResolver(dialect string) astParser { return nil }
