package code

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairnhq/cairn/memory"
)

// keySep separates the path from the symbol in an entity key.
const keySep = "::"

// Key builds the entity key "path::Symbol" of symbol in the file at path (a
// slash-separated path relative to the repository root). It does not
// validate; ParseKey does, and ParseKey(Key(p, s)) returns p and s whenever
// it succeeds.
func Key(path, symbol string) string {
	return path + keySep + symbol
}

// ParseKey splits an entity key at its last "::" (a path may contain "::",
// a symbol never does) and validates both halves. It returns an
// invalid_params error when:
//
//   - the key has no "::", or the path or the symbol is empty;
//   - the symbol contains anything but letters, digits, '_', '$' and '.', or
//     has an empty dot-separated segment ("a..b", ".a", "a.");
//   - the path is not valid UTF-8, contains a NUL or a backslash, is
//     absolute ("/x", or a drive: "C:", "C:/x"; "C:x" is a relative file
//     name), has a ".." element, or is not clean (its path.Clean differs:
//     "./a", "a//b", "a/"), or is ".".
func ParseKey(key string) (p, symbol string, err error) {
	i := strings.LastIndex(key, keySep)
	if i < 0 {
		return "", "", memory.Errorf(memory.CodeInvalidParams, "entity key %q has no %q between path and symbol", clipForError(key), keySep)
	}
	p, symbol = key[:i], key[i+len(keySep):]
	if err := checkKeyPath(p); err != nil {
		return "", "", err
	}
	if err := checkSymbol(symbol); err != nil {
		return "", "", err
	}
	return p, symbol, nil
}

// checkKeyPath applies ParseKey's rules for the path half.
func checkKeyPath(p string) error {
	switch {
	case p == "":
		return memory.Errorf(memory.CodeInvalidParams, "entity key has an empty path")
	case !utf8.ValidString(p):
		return memory.Errorf(memory.CodeInvalidParams, "entity key path is not valid UTF-8")
	case strings.ContainsRune(p, 0):
		return memory.Errorf(memory.CodeInvalidParams, "entity key path contains a NUL byte")
	case strings.ContainsRune(p, '\\'):
		return memory.Errorf(memory.CodeInvalidParams, "entity key path %q contains a backslash; use '/'", clipForError(p))
	case strings.HasPrefix(p, "/") || hasDrive(p):
		return memory.Errorf(memory.CodeInvalidParams, "entity key path %q is absolute; give it relative to the repository root", clipForError(p))
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return memory.Errorf(memory.CodeInvalidParams, "entity key path %q contains \"..\"", clipForError(p))
		}
	}
	if p == "." || path.Clean(p) != p {
		return memory.Errorf(memory.CodeInvalidParams, "entity key path %q is not clean (want %q)", clipForError(p), path.Clean(p))
	}
	return nil
}

// hasDrive reports whether p starts with a Windows drive ("C:" alone or
// followed by a separator); "a::b/x.go" is a relative path.
func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z') &&
		(len(p) == 2 || p[2] == '/' || p[2] == '\\')
}

// checkSymbol applies ParseKey's rules for the symbol half.
func checkSymbol(s string) error {
	if s == "" {
		return memory.Errorf(memory.CodeInvalidParams, "entity key has an empty symbol")
	}
	if !validSymbol(s) {
		return memory.Errorf(memory.CodeInvalidParams, "entity key symbol %q may hold only letters, digits, '_', '$' and non-empty dot-separated parts", clipForError(s))
	}
	return nil
}

// validSymbol reports whether s is a well-formed symbol name: non-empty
// dot-separated parts of letters, digits, '_' and '$'. Resolve drops the
// entities whose names are not (JavaScript "#private" or computed names).
func validSymbol(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		if r == '_' || r == '$' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			continue
		}
		return false // utf8.RuneError lands here too
	}
	return true
}

// clip shortens s for an error message.
func clipForError(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
