package webui

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn"
)

// graphView is an entity's neighbourhood laid out for an inline SVG: the
// centre in the middle, its neighbours on a ring around it, and theirs on
// an outer ring near the neighbour that reached them. The layout is
// computed here, deterministically; the browser only draws it.
type graphView struct {
	Width, Height int
	Nodes         []graphNode
	Edges         []graphEdge
	Truncated     bool
	Depth         int
}

type graphNode struct {
	ID, Label, Name, Type, Link string
	X, Y, R                     string
	LabelY                      string
	Center                      bool
	Ring                        int
}

type graphEdge struct {
	X1, Y1, X2, Y2 string
	LX, LY         string
	Label, Title   string
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// layout places a neighbourhood.
func layout(n cairn.Neighbourhood, depth int) graphView {
	g := graphView{Width: 560, Height: 420, Truncated: n.Truncated, Depth: depth}
	maxRing := 0
	for _, d := range n.Depth {
		maxRing = max(maxRing, d)
	}
	if maxRing >= 2 {
		g.Width, g.Height = 780, 680
	}
	at := placeNodes(n, float64(g.Width)/2, float64(g.Height)/2)
	for _, e := range n.Nodes {
		p := at[e.ID]
		r := nodeRadius(n.Depth[e.ID])
		g.Nodes = append(g.Nodes, graphNode{ID: e.ID, Name: e.Name, Label: trunc(e.Name, 22), Type: e.Type,
			Link: "/graph/" + url.PathEscape(e.ID), X: f1(p.x), Y: f1(p.y), R: f1(r), LabelY: f1(p.y + r + 14),
			Center: e.ID == n.Center.ID, Ring: n.Depth[e.ID]})
	}
	g.Edges = layoutEdges(n, at)
	return g
}

// nodePos is where a node sits, and its angle from the centre.
type nodePos struct{ x, y, angle float64 }

// The rings' radii.
const ring1Radius, ring2Radius = 160.0, 300.0

// placeNodes places the centre at (cx, cy), the entities one step away
// on a ring around it, and those further on an outer ring, each in the
// sector of the inner entity that reached it.
func placeNodes(n cairn.Neighbourhood, cx, cy float64) map[string]nodePos {
	at := map[string]nodePos{}
	var ring1, ring2 []string
	for _, e := range n.Nodes {
		switch n.Depth[e.ID] {
		case 1:
			ring1 = append(ring1, e.ID)
		case 2, 3:
			ring2 = append(ring2, e.ID)
		}
	}
	at[n.Center.ID] = nodePos{cx, cy, 0}
	step := 2 * math.Pi / float64(max(1, len(ring1)))
	for i, id := range ring1 {
		a := -math.Pi/2 + float64(i)*step
		rad := ring1Radius
		if len(ring1) > 10 && i%2 == 1 {
			rad = ring1Radius + 40 // stagger crowded rings so labels do not collide
		}
		at[id] = nodePos{cx + rad*math.Cos(a), cy + rad*math.Sin(a), a}
	}
	children, orphans := sectors(n, ring2, at)
	for _, p := range ring1 {
		kids := children[p]
		base := at[p].angle
		for i, id := range kids {
			a := base
			if len(kids) > 1 {
				a = base - step*0.4 + step*0.8*float64(i)/float64(len(kids)-1)
			}
			at[id] = nodePos{cx + ring2Radius*math.Cos(a), cy + ring2Radius*math.Sin(a), a}
		}
	}
	for i, id := range orphans {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(len(orphans)) + step/2
		at[id] = nodePos{cx + ring2Radius*math.Cos(a), cy + ring2Radius*math.Sin(a), a}
	}
	return at
}

// sectors gives each outer node the inner node (placed in at) whose
// sector it sits in: the one that reached it, or for depth 3 its ring-1
// ancestor. Those with none are orphans.
func sectors(n cairn.Neighbourhood, outer []string, at map[string]nodePos) (map[string][]string, []string) {
	parent := map[string]string{}
	for _, e := range n.Edges {
		for _, p := range [][2]string{{e.Source, e.Target}, {e.Target, e.Source}} {
			if n.Depth[p[0]] >= 1 && n.Depth[p[1]] == n.Depth[p[0]]+1 {
				if _, ok := parent[p[1]]; !ok {
					parent[p[1]] = p[0]
				}
			}
		}
	}
	children := map[string][]string{}
	var orphans []string
	for _, id := range outer {
		p := parent[id]
		for n.Depth[p] > 1 { // depth 3: the ring-1 ancestor's sector
			p = parent[p]
		}
		if _, ok := at[p]; ok && p != "" {
			children[p] = append(children[p], id)
		} else {
			orphans = append(orphans, id)
		}
	}
	return children, orphans
}

// nodeRadius is the circle of a node at depth d.
func nodeRadius(d int) float64 {
	switch d {
	case 0:
		return 26
	case 1:
		return 15
	}
	return 10
}

// layoutEdges draws one line per pair of entities, labelled with every
// relation between them; loops are listed on the page, not drawn.
func layoutEdges(n cairn.Neighbourhood, at map[string]nodePos) []graphEdge {
	type pair struct{ a, b string }
	labels := map[pair][]string{}
	var order []pair
	for _, e := range n.Edges {
		if e.Source == e.Target {
			continue
		}
		k := pair{e.Source, e.Target}
		if _, ok := labels[k]; !ok {
			order = append(order, k)
		}
		labels[k] = append(labels[k], e.Relation)
	}
	var edges []graphEdge
	for _, k := range order {
		a, b := at[k.a], at[k.b]
		dx, dy := b.x-a.x, b.y-a.y
		d := math.Hypot(dx, dy)
		if d == 0 {
			continue
		}
		ra, rb := nodeRadius(n.Depth[k.a])+2, nodeRadius(n.Depth[k.b])+6
		rels := slices.Compact(labels[k])
		edges = append(edges, graphEdge{
			X1: f1(a.x + dx*ra/d), Y1: f1(a.y + dy*ra/d), X2: f1(b.x - dx*rb/d), Y2: f1(b.y - dy*rb/d),
			LX: f1(a.x + dx*0.5), LY: f1(a.y + dy*0.5 - 4),
			Label: trunc(strings.Join(rels, ", "), 28), Title: strings.Join(rels, ", "),
		})
	}
	return edges
}
