package webui

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// thoughtsView is the thoughts page.
type thoughtsView struct {
	Form     scopeForm
	Contains string
	Origin   string
	Tag      string
	Status   string
	Private  bool
	Scopes   memory.ScopeValues
	Thoughts []memory.Thought
	Pager    pager
}

func (u *UI) thoughts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := thoughtsView{Form: scopeFormOf(r), Contains: q.Get("contains"), Origin: q.Get("origin"), Tag: q.Get("tag"),
		Status: q.Get("status"), Private: q.Get("private") == "on"}
	page, err := u.eng.BrowseThoughts(r.Context(), cairn.ThoughtBrowseRequest{ScopeIDs: v.Form.scope(), IncludePrivate: v.Private,
		Status: v.Status, Origin: v.Origin, Tag: v.Tag, Contains: v.Contains, After: q.Get("after"), Limit: pageSize})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v.Thoughts = page.Thoughts
	base := append(v.Form.pairs(), "contains", v.Contains, "origin", v.Origin, "tag", v.Tag, "status", v.Status,
		"private", map[bool]string{true: "on"}[v.Private])
	if page.Next != "" {
		v.Pager.Next = link("/thoughts", append(base, "after", page.Next)...)
	}
	if q.Get("after") != "" {
		v.Pager.Prev = link("/thoughts", base...)
	}
	v.Scopes = u.scopes(r.Context())
	u.render(w, r, http.StatusOK, "thoughts", "Thoughts", "thoughts", v)
}

// thoughtView is a thought's page.
type thoughtView struct {
	memory.Thought
	Text []segment
}

func (u *UI) thought(w http.ResponseWriter, r *http.Request) {
	t, err := u.eng.Thought(r.Context(), r.PathValue("id"))
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "thought", t.ID+" · Thought", "thoughts", thoughtView{Thought: t, Text: highlight(t.Content, nil)})
}

func (u *UI) markThought(w http.ResponseWriter, r *http.Request) {
	t, err := u.eng.MarkThought(r.Context(), cairn.MarkThoughtRequest{ThoughtID: r.PathValue("id"), Status: r.PostForm.Get("status")})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	back := r.PostForm.Get("back")
	if back == "" {
		back = recordPath("thought", t.ID)
	}
	done(w, r, back, "marked")
}

// entitiesView is the knowledge graph's list of entities.
type entitiesView struct {
	Form     scopeForm
	Prefix   string
	Type     string
	Scopes   memory.ScopeValues
	Entities []memory.KGEntity
	Pager    pager
}

func (u *UI) entities(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := entitiesView{Form: scopeFormOf(r), Prefix: q.Get("prefix"), Type: q.Get("type")}
	page, err := u.eng.BrowseEntities(r.Context(), cairn.EntityBrowseRequest{ScopeIDs: v.Form.scope(), Type: v.Type, Prefix: v.Prefix,
		After: q.Get("after"), Limit: pageSize})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v.Entities = page.Entities
	base := append(v.Form.pairs(), "prefix", v.Prefix, "type", v.Type)
	if page.Next != "" {
		v.Pager.Next = link("/graph", append(base, "after", page.Next)...)
	}
	if q.Get("after") != "" {
		v.Pager.Prev = link("/graph", base...)
	}
	v.Scopes = u.scopes(r.Context())
	u.render(w, r, http.StatusOK, "entities", "Knowledge graph", "graph", v)
}

// entityView is an entity's page.
type entityPage struct {
	cairn.EntityView
	Data  string
	Names map[string]string
	Edges []edgeRow
	Graph graphView
}

// edgeRow is an edge seen from the entity.
type edgeRow struct {
	memory.KGEdge
	Out              bool
	Other, OtherName string
	OtherLink        string
	Loop             bool
}

func (u *UI) entity(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	ev, err := u.eng.Entity(ctx, id)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	depth, _ := strconv.Atoi(r.URL.Query().Get("depth"))
	if depth != 2 {
		depth = 1
	}
	nb, err := u.eng.Neighbourhood(ctx, id, depth, 40)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	names := map[string]string{}
	for _, n := range nb.Nodes {
		names[n.ID] = n.Name
	}
	v := entityPage{EntityView: ev, Data: prettyJSON(ev.Entity.Data), Names: names, Graph: layout(nb, depth)}
	for _, e := range ev.Edges {
		row := edgeRow{KGEdge: e, Out: e.Source == id, Loop: e.Source == e.Target}
		row.Other = e.Target
		if !row.Out {
			row.Other = e.Source
		}
		row.OtherName = names[row.Other]
		if row.OtherName == "" {
			if o, err := u.eng.Entity(ctx, row.Other); err == nil {
				row.OtherName = o.Entity.Name
			} else {
				row.OtherName = row.Other
			}
		}
		row.OtherLink = "/graph/" + url.PathEscape(row.Other)
		v.Edges = append(v.Edges, row)
	}
	u.render(w, r, http.StatusOK, "entity", ev.Entity.Name+" · Knowledge graph", "graph", v)
}
