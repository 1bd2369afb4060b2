package webui

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/cairnhq/cairn/memory"
)

// Moderation is the knowledge graph's moderation as the page needs it:
// the entity and edge candidates an extractor staged from thoughts, with
// their source thoughts; decisions on them in bulk; and the removal
// queue of thoughts with its export and finalization. Options.Moderation
// connects it; until the engine stages candidates the page leaves the
// moderation pages out entirely.
type Moderation interface {
	// Candidates lists staged candidates waiting for a decision.
	Candidates(ctx context.Context, q CandidateQuery) (CandidatePage, error)
	// Decide approves (the candidates become entities and edges), rejects
	// or blocklists (rejects, and refuses the same name or edge when
	// staged again) candidates.
	Decide(ctx context.Context, d Decision) (DecisionReport, error)
	// Removals lists the thoughts waiting in the removal queue.
	Removals(ctx context.Context, q RemovalQuery) (RemovalPage, error)
	// ExportRemovals writes the archive of the removal queue to w.
	ExportRemovals(ctx context.Context, w io.Writer) error
	// ExportInfo says what ExportRemovals writes: its content type and a
	// file name.
	ExportInfo() (contentType, fileName string)
	// FinalizeRemovals removes the queued thoughts named (all of the
	// queue's thoughts when ids is empty is not allowed: name them).
	FinalizeRemovals(ctx context.Context, ids []string) (FinalizeReport, error)
}

// CandidateQuery selects a page of candidates.
type CandidateQuery struct {
	// Kind is entity or edge; empty for both.
	Kind  string
	After string
	Limit int
}

// Candidate is a staged entity or edge.
type Candidate struct {
	ID string
	// Kind is entity or edge.
	Kind string
	// Name and Type describe an entity candidate; Source, Relation and
	// Target an edge candidate (by entity name).
	Name, Type               string
	Source, Relation, Target string
	Confidence               float64
	// SourceThought names the thought it was extracted from, and
	// SourceText is that thought's text.
	SourceThought, SourceText string
	CreatedAt                 int64
}

// CandidatePage is a page of candidates; Next is empty on the last.
type CandidatePage struct {
	Candidates []Candidate
	Next       string
	Total      int
}

// Decision is one decision on several candidates.
type Decision struct {
	IDs []string
	// Action is approve, reject or blocklist.
	Action string
}

// DecisionReport says what a decision did.
type DecisionReport struct {
	Approved, Rejected, Blocklisted int
}

// RemovalQuery selects a page of the removal queue.
type RemovalQuery struct {
	After string
	Limit int
}

// RemovalPage is a page of the removal queue.
type RemovalPage struct {
	Thoughts []memory.Thought
	Next     string
	Total    int
}

// FinalizeReport says what a finalization removed.
type FinalizeReport struct {
	Removed int
}

// moderationView is the moderation page.
type moderationView struct {
	Kind       string
	Candidates CandidatePage
	Removals   RemovalPage
	CandPager  pager
	RemPager   pager
}

func (u *UI) moderation(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ctx := r.Context()
	v := moderationView{Kind: q.Get("kind")}
	var err error
	if v.Candidates, err = u.opts.Moderation.Candidates(ctx, CandidateQuery{Kind: v.Kind, After: q.Get("cafter"), Limit: pageSize}); err != nil {
		u.fail(w, r, err)
		return
	}
	if v.Removals, err = u.opts.Moderation.Removals(ctx, RemovalQuery{After: q.Get("rafter"), Limit: pageSize}); err != nil {
		u.fail(w, r, err)
		return
	}
	if v.Candidates.Next != "" {
		v.CandPager.Next = link("/moderation", "kind", v.Kind, "cafter", v.Candidates.Next)
	}
	if q.Get("cafter") != "" {
		v.CandPager.Prev = link("/moderation", "kind", v.Kind)
	}
	if v.Removals.Next != "" {
		v.RemPager.Next = link("/moderation", "kind", v.Kind, "rafter", v.Removals.Next)
	}
	if q.Get("rafter") != "" {
		v.RemPager.Prev = link("/moderation", "kind", v.Kind)
	}
	u.render(w, r, http.StatusOK, "moderation", "Moderation", "moderation", v)
}

func (u *UI) moderateCandidates(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	ids := f["id"]
	action := f.Get("action")
	switch {
	case len(ids) == 0:
		u.fail(w, r, memory.Errorf(memory.CodeInvalidParams, "select at least one candidate"))
		return
	case action != "approve" && action != "reject" && action != "blocklist":
		u.fail(w, r, memory.Errorf(memory.CodeInvalidParams, "unknown action %q: approve, reject or blocklist", action))
		return
	}
	if _, err := u.opts.Moderation.Decide(r.Context(), Decision{IDs: ids, Action: action}); err != nil {
		u.fail(w, r, err)
		return
	}
	done(w, r, "/moderation", "moderated")
}

func (u *UI) exportRemovals(w http.ResponseWriter, r *http.Request) {
	ct, name := u.opts.Moderation.ExportInfo()
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote(name))
	if err := u.opts.Moderation.ExportRemovals(r.Context(), w); err != nil {
		u.opts.Logger.Error("exporting the removal queue failed", "err", memory.Detail(err))
	}
}

func (u *UI) finalizeRemovals(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	if f.Get("confirm") != "yes" {
		u.fail(w, r, memory.Errorf(memory.CodeInvalidParams, "finalizing needs the confirmation: nothing was changed"))
		return
	}
	if len(f["id"]) == 0 {
		u.fail(w, r, memory.Errorf(memory.CodeInvalidParams, "select at least one thought"))
		return
	}
	if _, err := u.opts.Moderation.FinalizeRemovals(r.Context(), f["id"]); err != nil {
		u.fail(w, r, err)
		return
	}
	done(w, r, "/moderation", "finalized")
}
