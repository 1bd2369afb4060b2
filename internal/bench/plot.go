package bench

import (
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Chart is a line chart of one or more series over a shared x axis, drawn
// by WriteSVG. Bench commands use it for latency against memory count
// (LogX, and often LogY) and for recall@k curves.
type Chart struct {
	Title  string
	XLabel string
	YLabel string
	// LogX and LogY draw that axis on a base-10 log scale; every value on
	// it must then be > 0.
	LogX, LogY bool
	// YMin and YMax fix the y range when YMax > YMin (for example 0..1 for
	// recall); otherwise the range is fitted to the data.
	YMin, YMax float64
	Series     []Series
}

// Series is one named line; X and Y have the same length.
type Series struct {
	Name string
	X, Y []float64
}

// Chart geometry, in SVG user units.
const (
	plotW, plotH                   = 720, 420
	padL, padR, padTop, padBottom  = 70, 190, 40, 56
	innerW                         = plotW - padL - padR
	innerH                         = plotH - padTop - padBottom
	legendRowH                     = 18
	markerR                        = 3.0
	gridStroke, axisStroke, lineW  = "#e4e4e4", "#444", 2.0
	fontFamily                     = "system-ui, -apple-system, Segoe UI, sans-serif"
	titleSize, labelSize, tickSize = 15, 12, 11
)

// palette is colour-blind friendly (Okabe and Ito).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"}

// WriteSVG draws c as a standalone SVG document. It refuses a chart with
// no points, mismatched series, non-finite values, or non-positive values
// on a log axis.
func (c Chart) WriteSVG(w io.Writer) error {
	xs, ys, err := c.values()
	if err != nil {
		return err
	}
	xa := newAxis(xs, c.LogX, 0, 0)
	ya := newAxis(ys, c.LogY, c.YMin, c.YMax)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="%s">`+"\n",
		plotW, plotH, plotW, plotH, fontFamily)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="%d" font-weight="600">%s</text>`+"\n", padL, titleSize, esc(c.Title))
	for _, t := range xa.ticks() {
		x := padL + xa.pos(t)*innerW
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", x, padTop, x, padTop+innerH, gridStroke)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="%d" text-anchor="middle">%s</text>`+"\n", x, padTop+innerH+16, tickSize, tickLabel(t))
	}
	for _, t := range ya.ticks() {
		y := padTop + (1-ya.pos(t))*innerH
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>`+"\n", padL, y, padL+innerW, y, gridStroke)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="%d" text-anchor="end">%s</text>`+"\n", padL-6, y+4, tickSize, tickLabel(t))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="%s"/>`+"\n", padL, padTop, innerW, innerH, axisStroke)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="%d" text-anchor="middle">%s</text>`+"\n", padL+innerW/2, plotH-14, labelSize, esc(c.XLabel))
	fmt.Fprintf(&b, `<text x="16" y="%d" font-size="%d" text-anchor="middle" transform="rotate(-90 16 %d)">%s</text>`+"\n",
		padTop+innerH/2, labelSize, padTop+innerH/2, esc(c.YLabel))
	for i, s := range c.Series {
		colour := palette[i%len(palette)]
		pts := make([]string, len(s.X))
		for j := range s.X {
			pts[j] = fmt.Sprintf("%.1f,%.1f", padL+xa.pos(s.X[j])*innerW, padTop+(1-ya.pos(s.Y[j]))*innerH)
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%.1f" points="%s"/>`+"\n", colour, lineW, strings.Join(pts, " "))
		for _, p := range pts {
			xy := strings.SplitN(p, ",", 2)
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="%.1f" fill="%s"/>`+"\n", xy[0], xy[1], markerR, colour)
		}
		ly := padTop + 10 + i*legendRowH
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%.1f"/>`+"\n",
			padL+innerW+14, ly, padL+innerW+34, ly, colour, lineW)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="%d">%s</text>`+"\n", padL+innerW+40, ly+4, tickSize, esc(s.Name))
	}
	b.WriteString("</svg>\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// values checks the chart and returns every x and every y.
func (c Chart) values() (xs, ys []float64, err error) {
	if len(c.Series) == 0 {
		return nil, nil, errors.New("chart has no series")
	}
	for _, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return nil, nil, fmt.Errorf("series %q: %d x values but %d y values", s.Name, len(s.X), len(s.Y))
		}
		for j := range s.X {
			for _, v := range []struct {
				val float64
				log bool
				ax  string
			}{{s.X[j], c.LogX, "x"}, {s.Y[j], c.LogY, "y"}} {
				if math.IsNaN(v.val) || math.IsInf(v.val, 0) {
					return nil, nil, fmt.Errorf("series %q: %s value %v is not finite", s.Name, v.ax, v.val)
				}
				if v.log && v.val <= 0 {
					return nil, nil, fmt.Errorf("series %q: %s value %v on a log axis", s.Name, v.ax, v.val)
				}
			}
		}
		xs, ys = append(xs, s.X...), append(ys, s.Y...)
	}
	if len(xs) == 0 {
		return nil, nil, errors.New("chart has no points")
	}
	return xs, ys, nil
}

// axis maps data values to 0..1 along one axis.
type axis struct {
	log    bool
	lo, hi float64 // in axis space (log10 of the value when log)
}

func newAxis(vals []float64, log bool, fixedLo, fixedHi float64) axis {
	a := axis{log: log}
	if fixedHi > fixedLo && (!log || fixedLo > 0) {
		a.lo, a.hi = a.space(fixedLo), a.space(fixedHi)
		return a
	}
	a.lo, a.hi = math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		a.lo, a.hi = math.Min(a.lo, a.space(v)), math.Max(a.hi, a.space(v))
	}
	if log {
		a.lo, a.hi = math.Floor(a.lo), math.Ceil(a.hi)
		if a.hi == a.lo {
			a.hi++
		}
		return a
	}
	if a.lo > 0 && a.lo < a.hi/2 {
		a.lo = 0 // linear axes start at zero unless the data sit far from it
	}
	if a.hi == a.lo {
		a.lo, a.hi = a.lo-1, a.hi+1
	}
	step := niceStep((a.hi - a.lo) / 5)
	a.lo, a.hi = math.Floor(a.lo/step)*step, math.Ceil(a.hi/step)*step
	return a
}

func (a axis) space(v float64) float64 {
	if a.log {
		return math.Log10(v)
	}
	return v
}

func (a axis) pos(v float64) float64 { return (a.space(v) - a.lo) / (a.hi - a.lo) }

// ticks are the powers of ten on a log axis, round steps on a linear one.
func (a axis) ticks() []float64 {
	var out []float64
	if a.log {
		for e := math.Ceil(a.lo); e <= a.hi+1e-9; e++ {
			out = append(out, math.Pow(10, e))
		}
		return out
	}
	step := niceStep((a.hi - a.lo) / 5)
	for v := a.lo; v <= a.hi+step/1e6; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// tickLabel prints 1000 as 1k and 1000000 as 1M, and other values in the
// shortest form.
func tickLabel(v float64) string {
	switch {
	case v >= 1e6 && math.Mod(v, 1e6) == 0:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3 && math.Mod(v, 1e3) == 0:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func esc(s string) string { return html.EscapeString(s) }
