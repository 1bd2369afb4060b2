package content

import "unicode/utf8"

// EstimateTokens is the retrieval contract's default token estimate:
// ceil(characters / 4), counting Unicode code points.
func EstimateTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}
