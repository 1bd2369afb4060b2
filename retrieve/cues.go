package retrieve

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/lexical"
)

// asksWhen matches an English question that asks for a time, a duration
// or a frequency: "when ...", "what year ...", "which month ...", "how
// long ...", "how often ...", "since when".
var asksWhen = regexp.MustCompile(`(?i)(^|[^a-z])(when|(what|which)\s+(year|month|day|date|time|week|weekend)|how\s+(long|often))([^a-z]|$)`)

// AsksWhen reports whether a query asks when, how long or how often
// something happened: its answer is a statement placed in time ("last
// May", "for three years", "every week").
func AsksWhen(q string) bool { return asksWhen.MatchString(q) }

// timeWords are English words that place a statement in time, relative
// ("yesterday", "last week", "two years ago") or absolute (month and day
// names); four-digit years from 1900 to 2099 are added to them.
const timeWords = `yesterday today tonight tomorrow ago recently lately earlier later last next
day days week weeks weekend weekends month months year years morning evening afternoon night
monday tuesday wednesday thursday friday saturday sunday
january february march april may june july august september october november december
spring summer autumn fall winter`

// TimeTerms are the analysed terms of timeWords (as lexical.Analyze
// gives them).
var TimeTerms = func() []string {
	words := strings.Fields(timeWords)
	for y := 1900; y < 2100; y++ {
		words = append(words, strconv.Itoa(y))
	}
	return lexical.Analyze(words)
}()
