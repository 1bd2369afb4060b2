package capture_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/capture"
)

// formatCase is a case of the format corpus (testdata/redaction/formats,
// written by gen.go there from the public descriptions of secret
// formats): a text and, for a secret, every substring of it that must
// disappear. A look-alike has no secrets and must come back unchanged.
type formatCase struct {
	ID      string   `json:"id"`
	Class   string   `json:"class"`
	Text    string   `json:"text"`
	Secrets []string `json:"secrets"`
}

func loadFormatCases(t testing.TB, name string) []formatCase {
	t.Helper()
	f, err := os.Open("testdata/redaction/formats/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []formatCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c formatCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// formatHalf says which half of the corpus a case is in, from a hash of
// its id alone: "tune" (the rules may be fitted to it) or "test" (the
// figures reported and enforced). The split was fixed before any rule
// was tuned on the corpus.
func formatHalf(id string) string {
	h := fnv.New64a()
	h.Write([]byte(id))
	if h.Sum64()%2 == 1 {
		return "test"
	}
	return "tune"
}

// removed says every occurrence of every secret of c lies wholly inside
// what the redactor replaced: a secret cut short (its tail left in the
// text) is not removed.
func removed(c formatCase, found []capture.Finding) bool {
	for _, s := range c.Secrets {
		for from := 0; ; {
			i := strings.Index(c.Text[from:], s)
			if i < 0 {
				break
			}
			a := from + i
			if !covered(a, a+len(s), found) {
				return false
			}
			from = a + 1
		}
	}
	return true
}

// covered says the findings cover every byte of [a, b).
func covered(a, b int, found []capture.Finding) bool {
	for a < b {
		next := a
		for _, f := range found {
			if f.Start <= a && a < f.End {
				next = max(next, f.End)
			}
		}
		if next == a {
			return false
		}
		a = next
	}
	return true
}

type formatScore struct {
	secrets, removed, looks, changed int
}

// scoreFormats redacts the format corpus and scores each half; report,
// when set, is told of each case the redactor got wrong.
func scoreFormats(t *testing.T, report func(half string, c formatCase, got string)) map[string]*formatScore {
	var r capture.Redactor
	score := map[string]*formatScore{"tune": {}, "test": {}}
	for _, c := range loadFormatCases(t, "secrets.jsonl") {
		if len(c.Secrets) == 0 {
			t.Fatalf("%s: a secret case names no secret", c.ID)
		}
		s := score[formatHalf(c.ID)]
		s.secrets++
		got, found := r.Redact(c.Text)
		if removed(c, found) {
			s.removed++
		} else if report != nil {
			report(formatHalf(c.ID), c, got)
		}
	}
	for _, c := range loadFormatCases(t, "lookalikes.jsonl") {
		s := score[formatHalf(c.ID)]
		s.looks++
		if got, _ := r.Redact(c.Text); got != c.Text {
			s.changed++
			if report != nil {
				report(formatHalf(c.ID), c, got)
			}
		}
	}
	return score
}

// TestRedactionFormats measures the redactor on the format corpus, each
// half on its own, and holds the test half to its targets: at least 99%
// of secrets removed, at most 1% of look-alikes changed.
func TestRedactionFormats(t *testing.T) {
	var testMisses []string
	score := scoreFormats(t, func(half string, c formatCase, got string) {
		// The tune half's cases are shown one by one; the test half's
		// only when it misses its targets (it is measured, not read).
		if half == "tune" {
			t.Logf("tune %s (%s): %q -> %q", c.ID, c.Class, c.Text, got)
		} else {
			testMisses = append(testMisses, fmt.Sprintf("test %s (%s): %q -> %q", c.ID, c.Class, c.Text, got))
		}
	})
	for _, half := range []string{"tune", "test"} {
		s := score[half]
		t.Logf("%s half: secrets removed %d of %d (%.1f%%), look-alikes changed %d of %d (%.1f%%)", half,
			s.removed, s.secrets, 100*float64(s.removed)/float64(s.secrets), s.changed, s.looks, 100*float64(s.changed)/float64(s.looks))
	}
	s := score["test"]
	if float64(s.removed) < 0.99*float64(s.secrets) || float64(s.changed) > 0.01*float64(s.looks) {
		t.Errorf("test half below its targets (>= 99%% removed, <= 1%% changed):\n%s", strings.Join(testMisses, "\n"))
	}
	if total := score["tune"].secrets + score["test"].secrets; total < 300 {
		t.Fatalf("the corpus has %d secrets, fewer than 300", total)
	}
	if total := score["tune"].looks + score["test"].looks; total < 300 {
		t.Fatalf("the corpus has %d look-alikes, fewer than 300", total)
	}
}
