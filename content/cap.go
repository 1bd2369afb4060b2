package content

import "unicode/utf8"

// Snippet limits: a capped text is at most CapMax characters, and ends at a
// sentence boundary when one lies between CapMin and CapMax characters.
const (
	CapMin = 600
	CapMax = 800
)

// Cap shortens text to at most max characters (Unicode code points). When
// it must cut, it cuts after the last sentence boundary (".", "!" or "?"
// followed by a space or a line break) that lies within [min, max]
// characters, never an earlier one; with no such boundary it cuts hard at
// max, on a character boundary. It returns the kept text and its span in
// the original, as character offsets [start, end).
func Cap(text string, min, max int) (string, int, int) {
	n := utf8.RuneCountInString(text)
	if n <= max {
		return text, 0, n
	}
	cut, chars := -1, 0 // byte offset and character count of the best boundary
	pos := 0
	var prev rune
	for i, r := range text {
		if pos > max {
			break
		}
		if (prev == '.' || prev == '!' || prev == '?') && (r == ' ' || r == '\n' || r == '\r' || r == '\t') && pos >= min {
			cut, chars = i, pos
		}
		prev = r
		pos++
	}
	if cut < 0 {
		// No boundary in the window: the first max characters.
		i, c := 0, 0
		for c < max {
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			c++
		}
		return text[:i], 0, max
	}
	return text[:cut], 0, chars
}
