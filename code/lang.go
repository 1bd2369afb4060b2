package code

import (
	"path"
	"strings"
)

// The languages Resolve knows, as LanguageOf and Resolution.Language name
// them.
const (
	langGo         = "go"
	langPython     = "python"
	langJavaScript = "javascript"
	langTypeScript = "typescript"
	langRust       = "rust"
	langJava       = "java"
	langC          = "c"
)

// dialect is the grammar a file is parsed with: its language, except that
// .tsx files are TypeScript parsed with the TSX grammar.
const dialectTSX = "tsx"

// LanguageOf returns the language of a path by its extension, compared
// without regard to case: "go" (.go), "python" (.py .pyi .pyw),
// "javascript" (.js .mjs .cjs .jsx), "typescript" (.ts .mts .cts .tsx),
// "rust" (.rs), "java" (.java), "c" (.c .h), and "" for anything else.
func LanguageOf(p string) string {
	lang, _ := languageAndDialect(p)
	return lang
}

// languageAndDialect returns the language of p and the grammar to parse it
// with (the same string, or "tsx").
func languageAndDialect(p string) (lang, dialect string) {
	switch strings.ToLower(path.Ext(strings.ReplaceAll(p, `\`, "/"))) {
	case ".go":
		return langGo, langGo
	case ".py", ".pyi", ".pyw":
		return langPython, langPython
	case ".js", ".mjs", ".cjs", ".jsx":
		return langJavaScript, langJavaScript
	case ".ts", ".mts", ".cts":
		return langTypeScript, langTypeScript
	case ".tsx":
		return langTypeScript, dialectTSX
	case ".rs":
		return langRust, langRust
	case ".java":
		return langJava, langJava
	case ".c", ".h":
		return langC, langC
	}
	return "", ""
}
