package text_test

import (
	"testing"

	"github.com/cairnhq/cairn/internal/text"
)

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{{0, "pin", "0 pins"}, {1, "pin", "1 pin"}, {2, "segment", "2 segments"}} {
		if got := text.Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {56_413_389, "53.8 MiB"}, {3 << 30, "3.0 GiB"}, {2 << 40, "2.0 TiB"}} {
		if got := text.Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"a  b\n c", 10, "a b c"},
		{"héllo wörld", 5, "héll…"},
		{"exactly", 7, "exactly"},
	} {
		if got := text.Excerpt(c.s, c.n); got != c.want {
			t.Errorf("Excerpt(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
