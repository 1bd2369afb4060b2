package webui

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// pageSize is the length of the pages of lists.
const pageSize = 50

// scopeForm is a list's scope filter, as typed.
type scopeForm struct {
	Session, Repo, Agent, User string
}

func scopeFormOf(r *http.Request) scopeForm {
	q := r.URL.Query()
	return scopeForm{Session: q.Get("session"), Repo: q.Get("repo"), Agent: q.Get("agent"), User: q.Get("user")}
}

func (f scopeForm) scope() memory.Scope {
	return memory.Scope{SessionID: f.Session, RepoID: f.Repo, AgentID: f.Agent, UserID: f.User}
}

// pairs are the filter's query parameters.
func (f scopeForm) pairs() []string {
	return []string{"session", f.Session, "repo", f.Repo, "agent", f.Agent, "user", f.User}
}

// pager links to the pages around the one shown.
type pager struct {
	Prev, Next string
	// PrevLabel and NextLabel name the links (default Newer and Older).
	PrevLabel, NextLabel string
}

// timelineView is the timeline page.
type timelineView struct {
	Form     scopeForm
	Status   string
	Scopes   memory.ScopeValues
	Capsules []memory.CapsuleListing
	Pins     []recordView
	MorePins int
	Pager    pager
	Total    int
}

func (u *UI) timeline(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := timelineView{Form: scopeFormOf(r), Status: q.Get("status")}
	ctx := r.Context()
	page, err := u.eng.Capsules(ctx, cairn.CapsulesRequest{ScopeIDs: v.Form.scope(), Status: v.Status, After: q.Get("after"), Limit: pageSize})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v.Capsules = page.Capsules
	base := append(v.Form.pairs(), "status", v.Status)
	if page.Next != "" {
		v.Pager.Next = link("/timeline", append(base, "after", page.Next)...)
	}
	if q.Get("after") != "" {
		v.Pager.Prev = link("/timeline", base...)
	}
	pins, err := u.eng.Pins(ctx, cairn.PinsRequest{ScopeIDs: v.Form.scope()})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	for i, p := range pins {
		if i == 20 {
			v.MorePins = len(pins) - i
			break
		}
		rv := entityView(p.Target, nil)
		rv.PinReason, rv.PinID = p.Pin.Reason, p.Pin.ID
		v.Pins = append(v.Pins, rv)
	}
	v.Scopes = u.scopes(ctx)
	u.render(w, r, http.StatusOK, "timeline", "Timeline", "timeline", v)
}

// capsuleView is a capsule's page.
type capsuleView struct {
	cairn.CapsuleView
	Rows    []obsRow
	Pager   pager
	Summary *recordView
	// SummaryPins are the pins on its summary.
	SummaryPins []memory.PinnedTarget
}

// obsRow is an observation in its capsule.
type obsRow struct {
	Position int
	recordView
	Pinned bool
}

func (u *UI) capsule(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	const per = 100
	cv, err := u.eng.CapsulePage(r.Context(), id, max(0, from), per)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	pinned, err := u.pinnedTargets(r)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v := capsuleView{CapsuleView: cv}
	for i, o := range cv.Observations {
		v.Rows = append(v.Rows, obsRow{Position: cv.Offset + i + 1, recordView: entityView(memory.ObservationEntity(o), nil), Pinned: pinned[o.ID]})
	}
	if cv.Summary != nil {
		rv := entityView(memory.SummaryEntity(*cv.Summary), nil)
		v.Summary = &rv
	}
	if cv.Offset > 0 {
		v.Pager.Prev = link("/capsules/"+url.PathEscape(id), "from", strconv.Itoa(max(0, cv.Offset-per)))
	}
	if cv.Offset+per < cv.Total {
		v.Pager.Next = link("/capsules/"+url.PathEscape(id), "from", strconv.Itoa(cv.Offset+per))
	}
	title := cv.Capsule.Intent
	if title == "" {
		title = cv.Capsule.ID
	}
	u.render(w, r, http.StatusOK, "capsule", title+" · Capsule", "timeline", v)
}

// pinnedTargets are the ids of the records active pins point at.
func (u *UI) pinnedTargets(r *http.Request) (map[string]bool, error) {
	pins, err := u.eng.Pins(r.Context(), cairn.PinsRequest{IncludeRedacted: true})
	out := map[string]bool{}
	for _, p := range pins {
		out[p.Pin.TargetID] = true
	}
	return out, err
}

// recordPage is an observation's or a summary's page.
type recordPage struct {
	Observation *memory.Observation
	Summary     *memory.Summary
	Text        []segment
	Placement   cairn.Placement
	Pins        []memory.PinnedTarget
	Provenance  string
	// Kind and ID name the record for the forms.
	Kind, ID string
}

func (u *UI) observation(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	o, err := u.eng.Observation(ctx, r.PathValue("id"))
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v := recordPage{Observation: &o, Text: highlight(o.Content, nil), Provenance: prettyJSON(o.Provenance), Kind: "observation", ID: o.ID}
	if v.Placement, err = u.eng.Placement(ctx, o.ID); err == nil {
		v.Pins, err = u.eng.Pins(ctx, cairn.PinsRequest{TargetID: o.ID})
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "record", o.ID+" · Observation", "timeline", v)
}

func (u *UI) summary(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	s, err := u.eng.Summary(ctx, r.PathValue("id"))
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v := recordPage{Summary: &s, Text: highlight(s.Content, nil), Kind: "summary", ID: s.ID}
	if v.Pins, err = u.eng.Pins(ctx, cairn.PinsRequest{TargetID: s.ID}); err != nil {
		u.fail(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "record", s.ID+" · Summary", "timeline", v)
}

// ttls are the pin lifetimes the page offers, by form value.
var ttls = map[string]int64{"": 0, "1d": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "90d": 90 * 86400}

func (u *UI) pin(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	req := cairn.PinRequest{TargetID: f.Get("target"), Reason: f.Get("reason")}
	ttl, ok := ttls[f.Get("ttl")]
	if !ok {
		u.fail(w, r, memory.Errorf(memory.CodeInvalidParams, "unknown pin lifetime %q", f.Get("ttl")))
		return
	}
	if ttl > 0 {
		req.TTLSeconds = &ttl
	}
	p, err := u.eng.Pin(r.Context(), req)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	done(w, r, recordPath(string(p.TargetType), p.TargetID), "pinned")
}

func (u *UI) unpin(w http.ResponseWriter, r *http.Request) {
	if err := u.eng.Unpin(r.Context(), r.PostForm.Get("pin")); err != nil {
		u.fail(w, r, err)
		return
	}
	done(w, r, r.PostForm.Get("back"), "unpinned")
}

// recordPath is the page of a record of a kind.
func recordPath(kind, id string) string {
	switch kind {
	case "observation":
		return "/observations/" + url.PathEscape(id)
	case "summary":
		return "/summaries/" + url.PathEscape(id)
	case "thought":
		return "/thoughts/" + url.PathEscape(id)
	}
	return "/"
}

// forgetView is the confirmation page of a forget.
type forgetView struct {
	Kind, ID string
	Text     []segment
	Back     string
	Already  bool
}

func (u *UI) forgetConfirm(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := forgetView{Kind: q.Get("kind"), ID: q.Get("id")}
	ctx := r.Context()
	var text string
	var err error
	switch v.Kind {
	case "observation":
		var o memory.Observation
		o, err = u.eng.Observation(ctx, v.ID)
		text, v.Already = o.Content, o.Redacted
	case "summary":
		var s memory.Summary
		s, err = u.eng.Summary(ctx, v.ID)
		text, v.Already = s.Content, s.Redacted
	case "thought":
		var t memory.Thought
		t, err = u.eng.Thought(ctx, v.ID)
		text, v.Already = t.Content, t.Redacted
	default:
		err = memory.Errorf(memory.CodeInvalidParams, "cannot forget a %q here: observations, summaries and thoughts only", v.Kind)
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v.Text, v.Back = highlight(text, nil), recordPath(v.Kind, v.ID)
	u.render(w, r, http.StatusOK, "forget", "Forget "+v.ID, "timeline", v)
}

func (u *UI) forget(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	kind, id := f.Get("kind"), f.Get("id")
	if f.Get("confirm") != "yes" {
		u.fail(w, r, memory.Errorf(memory.CodeInvalidParams, "forgetting needs the confirmation: nothing was changed"))
		return
	}
	ctx := r.Context()
	var err error
	switch kind {
	case "observation":
		_, err = u.eng.Forget(ctx, id)
	case "summary":
		_, err = u.eng.ForgetSummary(ctx, id)
	case "thought":
		_, err = u.eng.ForgetThought(ctx, id)
	default:
		err = memory.Errorf(memory.CodeInvalidParams, "cannot forget a %q here: observations, summaries and thoughts only", kind)
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	done(w, r, recordPath(kind, id), "forgotten")
}
