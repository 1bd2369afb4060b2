package graph

import (
	"context"
	"slices"

	"github.com/cairnhq/cairn/memory"
)

// Neighbourhood is an entity with the entities around it, up to a depth,
// and the edges between them.
type Neighbourhood struct {
	Center memory.KGEntity `json:"center"`
	// Nodes are the entities reached, the centre first, then by distance
	// and name; Depth gives each one's distance from the centre.
	Nodes []memory.KGEntity `json:"nodes"`
	Depth map[string]int    `json:"depth"`
	Edges []memory.KGEdge   `json:"edges"`
	// Truncated says MaxNodes stopped the walk before it reached every
	// entity within the depth.
	Truncated bool `json:"truncated"`
}

// Neighbourhood walks the knowledge graph from an entity, breadth first,
// to depth (1 to 3) and at most maxNodes entities (2 to 200).
func (cur *Curator) Neighbourhood(ctx context.Context, entityID string, depth, maxNodes int) (Neighbourhood, error) {
	if err := memory.ValidateRef("entity id", entityID, false); err != nil {
		return Neighbourhood{}, err
	}
	if depth < 1 || depth > 3 {
		return Neighbourhood{}, memory.Errorf(memory.CodeInvalidParams, "depth %d is out of range [1, 3]", depth)
	}
	if maxNodes < 2 || maxNodes > 200 {
		return Neighbourhood{}, memory.Errorf(memory.CodeInvalidParams, "maxNodes %d is out of range [2, 200]", maxNodes)
	}
	center, err := cur.Store.Entity(ctx, entityID)
	if err != nil {
		return Neighbourhood{}, err
	}
	n := Neighbourhood{Center: center, Nodes: []memory.KGEntity{center}, Depth: map[string]int{center.ID: 0}, Edges: []memory.KGEdge{}}
	seenEdge := map[string]bool{}
	frontier := []string{center.ID}
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var next []string
		for _, id := range frontier {
			edges, err := cur.Store.Edges(ctx, id, 1000)
			if err != nil {
				return Neighbourhood{}, err
			}
			for _, g := range edges {
				for _, other := range []string{g.Source, g.Target} {
					if _, ok := n.Depth[other]; ok {
						continue
					}
					if len(n.Nodes) >= maxNodes {
						n.Truncated = true
						continue
					}
					ent, err := cur.Store.Entity(ctx, other)
					if memory.IsCode(err, memory.CodeNotFound) {
						continue
					}
					if err != nil {
						return Neighbourhood{}, err
					}
					n.Depth[other] = d
					n.Nodes = append(n.Nodes, ent)
					next = append(next, other)
				}
				_, srcIn := n.Depth[g.Source]
				_, dstIn := n.Depth[g.Target]
				if srcIn && dstIn && !seenEdge[g.ID] {
					seenEdge[g.ID] = true
					n.Edges = append(n.Edges, g)
				}
			}
		}
		frontier = next
	}
	if err := n.closeRing(ctx, cur.Store, frontier, seenEdge); err != nil {
		return Neighbourhood{}, err
	}
	n.sort()
	return n, nil
}

// closeRing adds the edges between nodes of the last ring, which the
// walk did not follow.
func (n *Neighbourhood) closeRing(ctx context.Context, store memory.GraphStore, frontier []string, seenEdge map[string]bool) error {
	for _, id := range frontier {
		edges, err := store.Edges(ctx, id, 1000)
		if err != nil {
			return err
		}
		for _, g := range edges {
			_, srcIn := n.Depth[g.Source]
			_, dstIn := n.Depth[g.Target]
			if srcIn && dstIn && !seenEdge[g.ID] {
				seenEdge[g.ID] = true
				n.Edges = append(n.Edges, g)
			}
		}
	}
	return nil
}

// sort orders the nodes after the centre by distance and name, and the
// edges by id.
func (n *Neighbourhood) sort() {
	rest := n.Nodes[1:]
	slices.SortStableFunc(rest, func(a, b memory.KGEntity) int {
		if da, db := n.Depth[a.ID], n.Depth[b.ID]; da != db {
			return da - db
		}
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	slices.SortStableFunc(n.Edges, func(a, b memory.KGEdge) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}
