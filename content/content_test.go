package content_test

import (
	"strings"
	"testing"

	"github.com/cairnhq/cairn/content"
)

func TestEstimateTokens(t *testing.T) {
	for in, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "ünïcödé!": 2, strings.Repeat("x", 400): 100} {
		if got := content.EstimateTokens(in); got != want {
			t.Errorf("EstimateTokens(%q) = %d; want %d", in, got, want)
		}
	}
}

func TestMatchContext(t *testing.T) {
	short := strings.Repeat("a", 100)
	if got := content.MatchContext(short); got != short {
		t.Errorf("100 units kept whole: got %d chars", len(got))
	}
	long := strings.Repeat("b", 101)
	if got := content.MatchContext(long); got != strings.Repeat("b", 100)+"..." {
		t.Errorf("101 units: %q", got)
	}
	// An emoji is two UTF-16 units: at 99 units it does not fit whole.
	emoji := strings.Repeat("c", 99) + "🎨" + "tail"
	if got := content.MatchContext(emoji); got != strings.Repeat("c", 99)+"..." {
		t.Errorf("surrogate pair at the cut: %q", got)
	}
	// Accented letters are one unit each.
	accented := strings.Repeat("é", 100)
	if got := content.MatchContext(accented); got != accented {
		t.Errorf("100 accented letters cut")
	}
}
