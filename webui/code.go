package webui

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// codeView is code memory's front page.
type codeView struct {
	Repos    []repoRow
	Sessions []sessionRow
	Pager    pager
	Total    int
}

type repoRow struct {
	memory.CodeRepo
	Entities int
	Link     string
}

type sessionRow struct {
	ID       string
	Episodes []memory.Episode
}

// sessionsPerPage is how many sessions the code page lists at once.
const sessionsPerPage = 20

func (u *UI) code(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	repos, err := u.eng.CodeRepos(ctx)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	var v codeView
	for _, rp := range repos {
		n, err := u.eng.BrowseCodeEntities(ctx, cairn.CodeEntityBrowseRequest{RepoID: rp.ID, Limit: 1})
		if err != nil {
			u.fail(w, r, err)
			return
		}
		v.Repos = append(v.Repos, repoRow{CodeRepo: rp, Entities: n.Total, Link: link("/code/entities", "repo", rp.ID)})
	}
	sessions, err := u.eng.CodeSessions(ctx)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v.Total = len(sessions)
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	from = max(0, min(from, len(sessions)))
	for _, s := range sessions[from:min(len(sessions), from+sessionsPerPage)] {
		eps, err := u.eng.SessionEpisodes(ctx, s)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		v.Sessions = append(v.Sessions, sessionRow{ID: s, Episodes: eps})
	}
	if from > 0 {
		v.Pager.Prev = link("/code", "from", strconv.Itoa(max(0, from-sessionsPerPage)))
	}
	if from+sessionsPerPage < len(sessions) {
		v.Pager.Next = link("/code", "from", strconv.Itoa(from+sessionsPerPage))
	}
	u.render(w, r, http.StatusOK, "code", "Code memory", "code", v)
}

// codeEntitiesView lists a repository's entities, a page at a time by
// key.
type codeEntitiesView struct {
	Repo, Path, State string
	Entities          []codeEntityRow
	Total             int
	Pager             pager
}

type codeEntityRow struct {
	memory.CodeEntity
	Link string
}

func (u *UI) codeEntities(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := codeEntitiesView{Repo: q.Get("repo"), Path: q.Get("path"), State: q.Get("state")}
	page, err := u.eng.BrowseCodeEntities(r.Context(), cairn.CodeEntityBrowseRequest{RepoID: v.Repo, Path: v.Path, State: v.State,
		After: q.Get("after"), Limit: pageSize})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v.Repo, v.Total = page.RepoID, page.Total
	for _, e := range page.Entities {
		v.Entities = append(v.Entities, codeEntityRow{CodeEntity: e, Link: link("/code/entity", "repo", e.RepoID, "key", e.Key)})
	}
	base := []string{"repo", v.Repo, "path", v.Path, "state", v.State}
	v.Pager.PrevLabel, v.Pager.NextLabel = "First", "Next"
	if page.Next != "" {
		v.Pager.Next = link("/code/entities", append(base, "after", page.Next)...)
	}
	if q.Get("after") != "" {
		v.Pager.Prev = link("/code/entities", base...)
	}
	u.render(w, r, http.StatusOK, "codeentities", "Entities of "+v.Repo, "code", v)
}

// codeEntityView is an entity's states, ledger, verification and
// hydrations.
type codeEntityView struct {
	cairn.CodeEntityView
	Artifact *memory.Artifact
}

func (u *UI) codeEntity(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ev, err := u.eng.InspectCodeEntity(r.Context(), cairn.CodeEntityRef{EntityKey: q.Get("key"), RepoID: q.Get("repo")})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "codeentity", ev.EntityKey+" · Code", "code", codeEntityView{CodeEntityView: ev})
}

// episodeView is an episode's hydration, with the reason for each entity,
// and its gate evaluations.
type episodeView struct {
	Hydration cairn.HydrationView
	Gates     cairn.GatesView
	RepoID    string
}

func (u *UI) episode(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ref := cairn.EpisodeRef{EpisodeID: r.PathValue("id")}
	h, err := u.eng.InspectHydration(ctx, ref)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	g, err := u.eng.InspectGates(ctx, ref)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v := episodeView{Hydration: h, Gates: g}
	if eps, err := u.eng.SessionEpisodes(ctx, h.SessionID); err == nil {
		for _, e := range eps {
			if e.ID == h.EpisodeID {
				v.RepoID = e.RepoID
			}
		}
	}
	u.render(w, r, http.StatusOK, "episode", "Episode "+h.EpisodeID, "code", v)
}

// codeLink is the page of a code entity.
func codeLink(repo, key string) string {
	return "/code/entity?" + url.Values{"repo": {repo}, "key": {key}}.Encode()
}
