package content

import "unicode/utf16"

// MatchContextUnits is the length of a match context in UTF-16 code units,
// the unit the retrieval contract's reference counts in.
const MatchContextUnits = 100

// MatchContext returns s when it is at most MatchContextUnits UTF-16 code
// units long, and otherwise its first MatchContextUnits units followed by
// "...". A character that would be split in half (a surrogate pair) is left
// out whole.
func MatchContext(s string) string {
	units := 0
	for i, r := range s {
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1 // invalid rune: counts as one replacement unit
		}
		if units+n > MatchContextUnits {
			return s[:i] + "..."
		}
		units += n
	}
	return s
}
