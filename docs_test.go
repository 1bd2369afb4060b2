package cairn_test

import (
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
)

// Every tool is documented where users look for it: the MCP page, the HTTP
// page with its route, and the README.
func TestDocsListEveryTool(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mcpDoc, httpDoc, readme := read("docs/mcp.md"), read("docs/http.md"), read("README.md")
	for _, tool := range cairn.Tools() {
		name := "`" + tool.Name + "`"
		if !strings.Contains(mcpDoc, name) {
			t.Errorf("docs/mcp.md does not list %s", name)
		}
		if !strings.Contains(httpDoc, "`"+tool.Method+" "+tool.Path+"`") {
			t.Errorf("docs/http.md does not list %s %s", tool.Method, tool.Path)
		}
		if !strings.Contains(readme, name) {
			t.Errorf("README.md does not list %s", name)
		}
	}
}

// A measured figure: a number with the unit it was stated in.
type figure struct {
	text  string  // as written ("71.5%", "0.07 s", "23,600 records/s")
	value float64 // in the unit's base: fractions for %, seconds, bytes, per second
	kind  string  // "fraction", "time", "size", "rate" or "" (a bare number)
	// decimals is how many decimal places the figure gives in its unit:
	// a stated figure may round a measured one to them.
	decimals int
}

// figureRE finds numbers with an optional unit. Counts ("100k", "1M") are
// read as bare numbers.
var figureRE = regexp.MustCompile(`(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s?(%|(?:ms|µs|s|KiB|MiB|GiB|KB|MB|GB|[a-z]+/s)\b)|[kM]\b)?`)

// figures lists the numbers of text that carry a unit of measure (all of
// them, unit or not, with bare).
func figures(text string, bare bool) []figure {
	var out []figure
	for _, m := range figureRE.FindAllStringSubmatchIndex(text, -1) {
		if m[0] > 0 && (isWordByte(text[m[0]-1]) || text[m[0]-1] == '.') {
			continue // inside a word, an identifier or a version
		}
		intPart := strings.ReplaceAll(text[m[2]:m[3]], ",", "")
		frac := ""
		if m[4] >= 0 {
			frac = text[m[4]:m[5]]
		}
		v, err := strconv.ParseFloat(intPart+frac, 64)
		if err != nil {
			continue
		}
		f := figure{text: strings.TrimSpace(text[m[0]:m[1]]), decimals: max(0, len(frac)-1)}
		unit := ""
		if m[6] >= 0 {
			unit = text[m[6]:m[7]]
		}
		switch {
		case unit == "%":
			f.kind, f.value = "fraction", v/100
			f.decimals += 2
		case unit == "ms":
			f.kind, f.value = "time", v/1e3
			f.decimals += 3
		case unit == "µs":
			f.kind, f.value = "time", v/1e6
			f.decimals += 6
		case unit == "s":
			f.kind, f.value = "time", v
		case unit == "KiB" || unit == "MiB" || unit == "GiB" || unit == "KB" || unit == "MB" || unit == "GB":
			shift := map[byte]float64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}[unit[0]]
			f.kind, f.value = "size", v*shift
		case strings.HasSuffix(unit, "/s"):
			f.kind, f.value = "rate", v
		default:
			f.value = v
			if strings.HasSuffix(f.text, "k") {
				f.value *= 1e3
			} else if strings.HasSuffix(f.text, "M") {
				f.value *= 1e6
			}
		}
		if f.kind != "" || bare {
			out = append(out, f)
		}
	}
	return out
}

func isWordByte(b byte) bool {
	return b == '_' || b == '-' || b == '/' || b == '@' || b == '#' ||
		('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z') || ('0' <= b && b <= '9')
}

// states reports whether the stated figure s quotes the measured figure m:
// the same quantity in any unit of its kind (a fraction may be measured as
// a bare 0.808, a rate as a bare 21,700), rounded at most to the places s
// gives.
func (s figure) states(m figure) bool {
	switch {
	case m.kind == s.kind:
	case m.kind == "" && (s.kind == "fraction" || s.kind == "rate"):
	default:
		return false
	}
	if s.kind == "size" {
		// Sizes are stated in binary units with a few significant digits.
		return math.Abs(s.value-m.value) <= 0.05*m.value
	}
	unit := math.Pow(10, -float64(s.decimals))
	return math.Abs(s.value-m.value) <= unit/2+1e-12 // m rounds to s
}

// glance returns the "At a glance" section of docs/BENCHMARKS.md: the
// headline figures, each traced there to the section and command that
// measured it.
func glance(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("docs/BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## At a glance")
	if start < 0 {
		t.Fatal(`docs/BENCHMARKS.md has no "## At a glance" section`)
	}
	end := strings.Index(doc[start+1:], "\n## ")
	if end < 0 {
		t.Fatal(`docs/BENCHMARKS.md: nothing follows "At a glance"`)
	}
	return doc[start : start+1+end]
}

// checkFigures fails for every figure in text that no headline figure of
// docs/BENCHMARKS.md states. settings are figures of text that are not
// measurements (a limit, an example), each with why; each must still occur
// in text, so the list cannot outlive what it excuses.
func checkFigures(t *testing.T, where, text string, settings map[string]string) {
	t.Helper()
	measured := figures(glance(t), true)
	seen := map[string]bool{}
	for _, s := range figures(text, false) {
		if _, ok := settings[s.text]; ok {
			seen[s.text] = true
			continue
		}
		if !slices.ContainsFunc(measured, s.states) {
			t.Errorf("%s states %q, which the \"At a glance\" figures of docs/BENCHMARKS.md do not give: update the figure (or the benchmarks)", where, s.text)
		}
	}
	for s, why := range settings {
		if !seen[s] {
			t.Errorf("%s no longer states %q (%s): drop it from the test's list", where, s, why)
		}
	}
}

// withoutCode drops fenced code blocks: examples, not claims.
func withoutCode(md string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(md) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// README's figures (recall, latencies, rates, sizes) are the headline
// figures of docs/BENCHMARKS.md, so a re-run that changes one leaves no
// stale claim behind.
func TestReadmeFiguresMatchBenchmarks(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, "README.md", withoutCode(string(b)), map[string]string{
		"1 MiB":  "the content cap, a setting",
		"64 KiB": "the longest query, a setting",
	})
}

// The tool descriptions models read quote only measured figures too.
func TestToolFiguresMatchBenchmarks(t *testing.T) {
	var all strings.Builder
	for _, tool := range cairn.Tools() {
		all.WriteString(tool.Description + "\n")
	}
	checkFigures(t, "the tool descriptions", all.String(), map[string]string{
		"1 MiB": "the content cap, a setting",
		"60 s":  "an example fact in kg_observe",
	})
}

// The figure check reads figures as people write them and tells a stale
// one from a rounded one.
func TestFigureCheck(t *testing.T) {
	measured := figures("recall@10 **0.808** (`local-fts` 0.602); a new `cairn retrieve` answers in 70 ms at 100k and 146 ms at 1M; ingest 23,600 records/s at 100k and 21,700 at 1M; 48 MiB RSS, 1.1 GiB together", true)
	for _, c := range []struct {
		stated string
		ok     bool
	}{
		{"80.8%", true}, {"60.2%", true}, {"71.5%", false}, {"81%", true}, {"80.7%", false},
		{"0.07 s", true}, {"0.15 s", true}, {"70 ms", true}, {"146 ms", true}, {"0.146 s", true}, {"0.14 s", false}, {"71 ms", false},
		{"23,600 records/s", true}, {"21,700 memories/s", true}, {"23,644 records/s", false},
		{"48 MiB", true}, {"1.1 GiB", true}, {"64 MiB", false},
	} {
		fs := figures(c.stated, false)
		if len(fs) != 1 {
			t.Fatalf("%q reads as %d figures: %+v", c.stated, len(fs), fs)
		}
		if got := slices.ContainsFunc(measured, fs[0].states); got != c.ok {
			t.Errorf("%q stated against the headline figures: %v, want %v", c.stated, got, c.ok)
		}
	}
	for _, text := range []string{"Go 1.26", "recall@10", "v0.4.2", "CAIRN_EMBED_DIM", "30 days", "top 10"} {
		if fs := figures(text, false); len(fs) != 0 {
			t.Errorf("%q read as figures %+v", text, fs)
		}
	}
}

// section returns the part of a Markdown file from the heading to the
// next heading of its level.
func section(t *testing.T, path, heading string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("%s has no %q", path, heading)
	}
	level := heading[:strings.IndexByte(heading, ' ')+1]
	end := strings.Index(doc[start+1:], "\n"+level)
	if end < 0 {
		return doc[start:]
	}
	return doc[start : start+1+end]
}

// The hook latency figures docs/capture.md gives are the ones
// docs/BENCHMARKS.md measured (its "Capture hooks" section), so a re-run
// of cairn bench hooks that changes one leaves no stale figure in the
// capture guide.
func TestCaptureLatencyMatchesBenchmarks(t *testing.T) {
	measured := figures(section(t, "docs/BENCHMARKS.md", "## Capture hooks"), true)
	// The section's tables give times as bare numbers under a "ms" heading.
	for _, m := range measured {
		if m.kind == "" {
			measured = append(measured, figure{text: m.text + " ms", value: m.value / 1e3, kind: "time", decimals: m.decimals + 3})
		}
	}
	stated := figures(section(t, "docs/capture.md", "## Latency and the spool"), true)
	if len(stated) < 10 {
		t.Fatalf("docs/capture.md's latency section states %d figures; it should give the hook latencies", len(stated))
	}
	for _, s := range stated {
		if !slices.ContainsFunc(measured, s.states) {
			t.Errorf("docs/capture.md states %q, which docs/BENCHMARKS.md's Capture hooks section does not give", s.text)
		}
	}
}
