package content

import (
	"encoding/hex"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
	"lukechampine.com/blake3"
)

// Normalize prepares text for content hashing, in the five steps
// inner_voice.retrieve specifies: NFKC normalisation; lowercasing; every run
// of Unicode whitespace replaced by one ASCII space; leading and trailing
// spaces trimmed; zero-width and control characters removed.
func Normalize(text string) string {
	s := norm.NFKC.String(text)
	s = strings.ToLower(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case isInvisible(r):
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// isInvisible reports zero-width and control characters (whitespace is
// handled before).
func isInvisible(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad':
		return true
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// Hash is the hex blake3-256 of Normalize(text): equal for texts that
// differ only in case, spacing, compatibility forms and invisible
// characters.
func Hash(text string) string {
	sum := blake3.Sum256([]byte(Normalize(text)))
	return hex.EncodeToString(sum[:])
}
