package code

// ResolveRegex resolves a file with the regex fallback alone, as Resolve
// does for a language without a parser: the fallback's tests use it for
// the languages this build parses.
func ResolveRegex(path string, src []byte) Resolution { return resolve(path, src, false) }

// Shutdown is the first half of Close: it refuses new jobs and stops the
// active ones without waiting for them, so a test can stop a job from
// the job's own progress hook.
func (js *Jobs) Shutdown() { js.shutdown() }
