package code

// ResolveRegex resolves a file with the regex fallback alone, as Resolve
// does for a language without a parser: the fallback's tests use it for
// the languages this build parses.
func ResolveRegex(path string, src []byte) Resolution { return resolve(path, src, false) }
