package bench

import (
	"encoding/xml"
	"math"
	"strings"
	"testing"
)

func TestChartWriteSVG(t *testing.T) {
	c := Chart{Title: "latency <p50>", XLabel: "memories", YLabel: "ms", LogX: true,
		Series: []Series{
			{Name: "hybrid", X: []float64{1e4, 1e5, 1e6}, Y: []float64{1.2, 3.4, 20}},
			{Name: "local-fts", X: []float64{1e4, 1e5, 1e6}, Y: []float64{0.5, 2.1, 15}},
		}}
	var b strings.Builder
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	// Well-formed XML, with the title escaped.
	d := xml.NewDecoder(strings.NewReader(svg))
	polylines, circles := 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "polyline":
				polylines++
			case "circle":
				circles++
			}
		}
	}
	if polylines != 2 || circles != 6 {
		t.Errorf("got %d lines and %d markers; want 2 and 6", polylines, circles)
	}
	for _, want := range []string{"latency &lt;p50&gt;", ">10k<", ">100k<", ">1M<", ">hybrid<", ">local-fts<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("svg lacks %q", want)
		}
	}
}

func TestChartPositions(t *testing.T) {
	a := newAxis([]float64{10, 1000}, true, 0, 0)
	if got := a.pos(100); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("log axis: 100 between 10 and 1000 at %v; want 0.5", got)
	}
	l := newAxis(nil, false, 0, 1)
	if got := l.pos(0.25); math.Abs(got-0.25) > 1e-9 {
		t.Errorf("fixed 0..1 axis: 0.25 at %v", got)
	}
	if ticks := l.ticks(); len(ticks) != 6 || ticks[5] != 1 {
		t.Errorf("0..1 ticks %v; want 0, 0.2, ..., 1", ticks)
	}
}

func TestChartRefusesBadData(t *testing.T) {
	for name, c := range map[string]Chart{
		"no series":   {},
		"mismatched":  {Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1}}}},
		"NaN":         {Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{math.NaN()}}}},
		"zero on log": {LogX: true, Series: []Series{{Name: "a", X: []float64{0}, Y: []float64{1}}}},
		"no points":   {Series: []Series{{Name: "a"}}},
	} {
		if err := c.WriteSVG(&strings.Builder{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
