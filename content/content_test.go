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

func TestNormalizeAndHash(t *testing.T) {
	for in, want := range map[string]string{
		"  Hello\t\tWORLD \n":    "hello world",
		"ＦＵＬＬ　width":             "full width",
		"zero\u200bwidth\u200d":  "zerowidth",
		"ctrl\x01chars\x7f here": "ctrlchars here",
		"ﬁne":                    "fine",
	} {
		if got := content.Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q; want %q", in, got, want)
		}
	}
	if content.Hash("Deploy  FAILED\n") != content.Hash("deploy failed") || content.Hash("a") == content.Hash("b") {
		t.Fatal("hash equivalence")
	}
	if len(content.Hash("x")) != 64 {
		t.Fatal("blake3-256 hex")
	}
}

func TestCap(t *testing.T) {
	short := "One sentence. Two."
	if got, s, e := content.Cap(short, 600, 800); got != short || s != 0 || e != 18 {
		t.Fatalf("short text: %q %d %d", got, s, e)
	}
	// Sentences of 100 characters: boundaries after 100, 200, ... 900.
	sentence := strings.Repeat("x", 98) + ". "
	long := strings.Repeat(sentence, 10)
	got, _, end := content.Cap(long, 600, 800)
	if len([]rune(got)) != 799 || !strings.HasSuffix(got, ".") || end != 799 {
		t.Fatalf("cut after the last boundary within 800: %d chars, ends %q, end %d", len([]rune(got)), got[len(got)-3:], end)
	}
	// No boundary at all: a hard cut at 800 characters on a rune boundary.
	runes := strings.Repeat("é", 1000)
	got, _, end = content.Cap(runes, 600, 800)
	if len([]rune(got)) != 800 || end != 800 || !utf8Valid(got) {
		t.Fatalf("hard cut: %d chars", len([]rune(got)))
	}
	// A boundary only before 600 is not used: the cut is hard at 800.
	early := "Short start. " + strings.Repeat("y", 1000)
	got, _, _ = content.Cap(early, 600, 800)
	if len([]rune(got)) != 800 {
		t.Fatalf("an early boundary was used: %d chars", len([]rune(got)))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
