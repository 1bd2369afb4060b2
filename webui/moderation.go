package webui

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// Moderation is the knowledge graph's moderation and the removal
// lifecycle of thoughts, as the page uses them: the engine's own
// knowledgegraph_moderate and maintenance_ops calls (the page translates
// forms into their requests and their results into pages), and the
// archives export_removals wrote. *cairn.Engine implements it; cairn
// serve and cairn ui pass the engine as Options.Moderation.
type Moderation interface {
	// Candidates lists staged knowledge-graph candidates (kg_candidates).
	Candidates(ctx context.Context, req cairn.CandidatesRequest) (cairn.CandidateList, error)
	// Moderate decides candidates, lists the blocklist and unblocks
	// (knowledgegraph_moderate).
	Moderate(ctx context.Context, req cairn.ModerateRequest) (cairn.ModerateResult, error)
	// Maintenance lists, exports and finalizes thoughts marked for
	// removal (maintenance_ops).
	Maintenance(ctx context.Context, req cairn.MaintenanceRequest) (cairn.MaintenanceResult, error)
	// RemovalArchives lists the archives in the archive directory, and
	// OpenRemovalArchive opens one by name for downloading.
	RemovalArchives(ctx context.Context) ([]cairn.ArchiveEntry, error)
	OpenRemovalArchive(ctx context.Context, name string) (*os.File, cairn.ArchiveEntry, error)
}

var _ Moderation = (*cairn.Engine)(nil)

// Bounds of the moderation page's lists.
const (
	maxBlocklistShown = 100
	maxArchivesShown  = 20
)

// candidateRow is a candidate as the page shows it.
type candidateRow struct {
	memory.KGCandidate
	// Sentence is the sentence of the source thought it was found in
	// ("" once the thought was forgotten or finalized); Rule is the
	// extractor's rule that found it.
	Sentence, Rule string
	// Promoted links an approved candidate to the graph: the entity it
	// became, or for an edge the entities it joins (by name).
	Promoted, SourceLink, TargetLink string
}

// removalRow is a thought of the removal queue.
type removalRow struct {
	cairn.RemovalCandidate
	// Marked, Exported and Eligible are Unix milliseconds (0: unknown or
	// not yet).
	Marked, Exported, Eligible int64
	// ArchiveName is the archive's file name and ArchiveFormat its
	// format; Download links to it when it is in the archive directory.
	ArchiveName, ArchiveFormat, Download string
}

// moderationView is the moderation page.
type moderationView struct {
	// Status, Kind and Thought filter the candidates; Private ("on")
	// lists those extracted from private thoughts too.
	Status, Kind, Thought, Private string
	// PrivateExcluded counts the candidates left out as private.
	PrivateExcluded int
	// Done says what the last action did.
	Done string

	Candidates []candidateRow
	AnyPending bool
	CandCount  string
	CandPager  pager

	Blocklist     []memory.BlockedKey
	BlocklistMore int

	Removals       []removalRow
	AnyFinalizable bool
	RemCount       string
	RemPager       pager
	RetentionDays  int
	ArchiveDir     string
	Format         string

	Archives     []cairn.ArchiveEntry
	ArchivesMore int
}

// candidateStatuses are the candidate lists the page offers.
var candidateStatuses = []string{memory.CandidatePending, memory.CandidateApproved, memory.CandidateRejected, "all"}

func (u *UI) moderation(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	mod := u.opts.Moderation
	q := r.URL.Query()
	v := moderationView{Status: strings.ToLower(q.Get("status")), Kind: strings.ToLower(q.Get("kind")), Thought: q.Get("thought"), Done: doneText(q)}
	if q.Get("private") == "on" {
		v.Private = "on"
	}
	if v.Status == "" {
		v.Status = memory.CandidatePending
	}
	coff, err := offsetParam(q, "coff")
	if err != nil {
		u.fail(w, r, err)
		return
	}
	roff, err := offsetParam(q, "roff")
	if err != nil {
		u.fail(w, r, err)
		return
	}

	list, err := mod.Candidates(ctx, cairn.CandidatesRequest{Kind: v.Kind, Status: v.Status, SourceThoughtID: v.Thought, Limit: pageSize + 1, Offset: coff,
		IncludePrivate: v.Private == "on"})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	cands, more := list.Candidates, false
	v.PrivateExcluded = list.PrivateExcluded
	if len(cands) > pageSize {
		cands, more = cands[:pageSize], true
	}
	for _, c := range cands {
		v.Candidates = append(v.Candidates, candidateRowOf(c))
		v.AnyPending = v.AnyPending || c.Status == memory.CandidatePending
	}
	v.CandCount = countText(coff, len(cands), more, map[string]string{memory.CandidatePending: "waiting", memory.CandidateApproved: "approved",
		memory.CandidateRejected: "rejected", "all": "in all"}[v.Status])
	filters := []string{"status", v.Status, "kind", v.Kind, "thought", v.Thought, "private", v.Private}
	if more {
		v.CandPager.Next = link("/moderation", append(filters, "coff", strconv.Itoa(coff+pageSize))...) + "#candidates"
	}
	if coff > 0 {
		v.CandPager.Prev = link("/moderation", append(filters, "coff", strconv.Itoa(max(0, coff-pageSize)))...) + "#candidates"
	}
	v.CandPager.PrevLabel, v.CandPager.NextLabel = "Previous", "Next"

	bl, err := mod.Moderate(ctx, cairn.ModerateRequest{Action: "blocklist"})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v.Blocklist = bl.Blocklist
	if len(v.Blocklist) > maxBlocklistShown {
		v.BlocklistMore, v.Blocklist = len(v.Blocklist)-maxBlocklistShown, v.Blocklist[:maxBlocklistShown]
	}

	rem, err := mod.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: cairn.OpListRemovalCandidates, Limit: pageSize + 1, Offset: roff})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v.RetentionDays, v.ArchiveDir, v.Format = rem.RetentionDays, rem.ArchiveDir, rem.Format
	var rows []cairn.RemovalCandidate
	if rem.Candidates != nil {
		rows = *rem.Candidates
	}
	more = false
	if len(rows) > pageSize {
		rows, more = rows[:pageSize], true
	}
	for _, c := range rows {
		row := removalRow{RemovalCandidate: c, Marked: msOf(c.MarkedAt), Exported: msOf(c.ExportedAt), Eligible: msOf(c.EligibleAt)}
		if c.Archive != "" {
			row.ArchiveName = filepath.Base(c.Archive)
			row.ArchiveFormat = strings.TrimPrefix(filepath.Ext(row.ArchiveName), ".")
			if filepath.Dir(c.Archive) == filepath.Clean(rem.ArchiveDir) && cairn.IsArchiveName(row.ArchiveName) {
				row.Download = "/moderation/archives/" + url.PathEscape(row.ArchiveName)
			}
		}
		v.Removals = append(v.Removals, row)
		v.AnyFinalizable = v.AnyFinalizable || c.Finalizable
	}
	v.RemCount = countText(roff, len(rows), more, "marked")
	if more {
		v.RemPager.Next = link("/moderation", append(filters, "roff", strconv.Itoa(roff+pageSize))...) + "#removals"
	}
	if roff > 0 {
		v.RemPager.Prev = link("/moderation", append(filters, "roff", strconv.Itoa(max(0, roff-pageSize)))...) + "#removals"
	}
	v.RemPager.PrevLabel, v.RemPager.NextLabel = "Previous", "Next"

	if v.Archives, err = mod.RemovalArchives(ctx); err != nil {
		u.fail(w, r, err)
		return
	}
	if len(v.Archives) > maxArchivesShown {
		v.ArchivesMore, v.Archives = len(v.Archives)-maxArchivesShown, v.Archives[:maxArchivesShown]
	}
	u.render(w, r, http.StatusOK, "moderation", "Moderation", "moderation", v)
}

// candidateRowOf reads what the page shows of a candidate.
func candidateRowOf(c memory.KGCandidate) candidateRow {
	row := candidateRow{KGCandidate: c}
	var data struct {
		Sentence string `json:"sentence"`
		Rule     string `json:"rule"`
	}
	if len(c.Data) > 0 && json.Unmarshal(c.Data, &data) == nil {
		row.Sentence, row.Rule = data.Sentence, data.Rule
	}
	if c.Status == memory.CandidateApproved {
		if c.Kind == memory.CandidateEntity && c.PromotedID != "" {
			row.Promoted = "/graph/" + url.PathEscape(c.PromotedID)
		}
		if c.Kind == memory.CandidateEdge {
			row.SourceLink = link("/graph", "prefix", c.SourceName)
			row.TargetLink = link("/graph", "prefix", c.TargetName)
		}
	}
	return row
}

// countText says how many items a page of a list holds: the whole count
// when the list fits on one page, else the range shown.
func countText(offset, n int, more bool, what string) string {
	if offset == 0 && !more {
		return fmt.Sprintf("%d %s", n, what)
	}
	if n == 0 {
		return "none here"
	}
	return fmt.Sprintf("%d–%d", offset+1, offset+n)
}

func offsetParam(q url.Values, name string) (int, error) {
	s := strings.TrimSpace(q.Get(name))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, memory.Errorf(memory.CodeInvalidParams, "%s %q is not a whole number of at least 0", name, s)
	}
	return n, nil
}

// msOf reads an RFC 3339 time as Unix milliseconds (0 when empty).
func msOf(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// doneText says what the action just done did, from the counts its
// redirect carries. Only numbers are read from the address: a link
// cannot make the page say anything else.
func doneText(q url.Values) string {
	n := func(k string) int {
		x, err := strconv.Atoi(q.Get(k))
		if err != nil || x < 0 {
			return 0
		}
		return x
	}
	var parts []string
	switch q.Get("did") {
	case "moderated":
		if a := n("approved"); a > 0 {
			s := "Approved " + text.Plural(a, "candidate") + " into the knowledge graph"
			var how []string
			if c := n("created"); c > 0 {
				e := "1 new entity"
				if c > 1 {
					e = strconv.Itoa(c) + " new entities"
				}
				how = append(how, e+" created")
			}
			if m := n("merged"); m > 0 {
				how = append(how, text.Plural(m, "candidate")+" merged into what the graph had")
			}
			if len(how) > 0 {
				s += " (" + strings.Join(how, ", ") + ")"
			}
			parts = append(parts, s+".")
		}
		if rj := n("rejected"); rj > 0 {
			s := "Rejected " + text.Plural(rj, "candidate")
			if b := n("blocked"); b > 0 {
				s += "; " + strconv.Itoa(b) + " blocklisted: never staged again"
			}
			parts = append(parts, s+".")
		}
		if m := n("marked"); m > 0 {
			parts = append(parts, "Marked "+text.Plural(m, "source thought")+" for removal.")
		}
	case "unblocked":
		parts = append(parts, "Removed from the blocklist: the extractor may stage it again.")
	case "exported":
		if e := n("exported"); e > 0 {
			parts = append(parts, "Exported "+text.Plural(e, "thought")+" to a new archive.")
			if n("more") > 0 {
				parts = append(parts, "More wait: export again for the rest.")
			}
		} else {
			parts = append(parts, "Nothing to export: every thought marked for removal is in an intact archive already.")
		}
	case "finalized":
		parts = append(parts, "Finalized "+text.Plural(n("finalized"), "thought")+": deleted, their text erased from the database and every index.")
		if rf := n("refused"); rf > 0 {
			parts = append(parts, text.Plural(rf, "thought")+" could not be finalized yet: the queue below says why.")
		}
	}
	return strings.Join(parts, " ")
}

// moderationBack is the moderation page with a form's candidate filters,
// plus pairs to add, at anchor.
func moderationBack(f url.Values, anchor string, kv ...string) string {
	return link("/moderation", append([]string{"status", f.Get("status"), "kind", f.Get("kind"), "thought", f.Get("thought"),
		"private", f.Get("private")}, kv...)...) + "#" + anchor
}

func (u *UI) moderateCandidates(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	back := moderationBack(f, "candidates")
	ids := f["id"]
	if len(ids) == 0 {
		u.failBack(w, r, memory.Errorf(memory.CodeInvalidParams, "select at least one candidate: nothing was changed"), back)
		return
	}
	item := cairn.ModerateItem{Feedback: strings.TrimSpace(f.Get("feedback"))}
	switch action := f.Get("action"); action {
	case "approve":
		item.Decision, item.MarkSourceRemoval = "approve", f.Get("mark_source") == "on"
	case "reject":
		item.Decision = "reject"
	case "blocklist":
		item.Decision, item.Block = "reject", true
	default:
		u.failBack(w, r, memory.Errorf(memory.CodeInvalidParams, "unknown action %q: approve, reject or blocklist", action), back)
		return
	}
	items := make([]cairn.ModerateItem, len(ids))
	for i, id := range ids {
		items[i] = item
		items[i].ID = id
	}
	res, err := u.opts.Moderation.Moderate(r.Context(), cairn.ModerateRequest{Action: "decide", Items: items})
	if err != nil {
		u.failBack(w, r, err, back)
		return
	}
	var approved, rejected, blocked, created, merged, marked int
	for _, o := range res.Results {
		switch o.Status {
		case memory.CandidateApproved:
			approved++
		case memory.CandidateRejected:
			rejected++
		}
		if o.Blocked {
			blocked++
		}
		if o.Merged {
			merged++
		}
		created += len(o.Created)
		marked += o.MarkedForRemoval
	}
	http.Redirect(w, r, moderationBack(f, "candidates", "did", "moderated", "approved", nonZero(approved), "rejected", nonZero(rejected),
		"blocked", nonZero(blocked), "created", nonZero(created), "merged", nonZero(merged), "marked", nonZero(marked)), http.StatusSeeOther)
}

func nonZero(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func (u *UI) unblock(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	back := moderationBack(f, "blocklist")
	if _, err := u.opts.Moderation.Moderate(r.Context(), cairn.ModerateRequest{Action: "unblock",
		Items: []cairn.ModerateItem{{Kind: f.Get("kind"), Key: f.Get("key")}}}); err != nil {
		u.failBack(w, r, err, back)
		return
	}
	http.Redirect(w, r, moderationBack(f, "blocklist", "did", "unblocked"), http.StatusSeeOther)
}

func (u *UI) exportRemovals(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	back := moderationBack(f, "removals")
	res, err := u.opts.Moderation.Maintenance(r.Context(), cairn.MaintenanceRequest{Subcommand: cairn.OpExportRemovals,
		Format: f.Get("format"), Limit: cairn.MaintenanceMaxLimit})
	if err != nil {
		u.failBack(w, r, err, back)
		return
	}
	n, more := 0, ""
	if res.Export != nil {
		n = res.Export.Exported
		if len(res.Export.ThoughtIDs) == cairn.MaintenanceMaxLimit {
			more = "1"
		}
	}
	http.Redirect(w, r, moderationBack(f, "removals", "did", "exported", "exported", strconv.Itoa(n), "more", more), http.StatusSeeOther)
}

func (u *UI) finalizeRemovals(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	back := moderationBack(f, "removals")
	if f.Get("confirm") != "yes" {
		u.failBack(w, r, memory.Errorf(memory.CodeInvalidParams,
			"finalizing erases the thoughts' text for good: tick the confirmation first. Nothing was changed."), back)
		return
	}
	req := cairn.MaintenanceRequest{Subcommand: cairn.OpFinalizeRemoval}
	switch f.Get("mode") {
	case "selected":
		if req.ThoughtIDs = f["id"]; len(req.ThoughtIDs) == 0 {
			u.failBack(w, r, memory.Errorf(memory.CodeInvalidParams, "select at least one thought: nothing was changed"), back)
			return
		}
	case "eligible":
		req.Limit = cairn.MaintenanceMaxLimit
	default:
		u.failBack(w, r, memory.Errorf(memory.CodeInvalidParams, "finalize the selected thoughts or every eligible one"), back)
		return
	}
	res, err := u.opts.Moderation.Maintenance(r.Context(), req)
	if err != nil {
		u.failBack(w, r, err, back)
		return
	}
	done, refused := 0, 0
	if res.Finalize != nil {
		done, refused = len(res.Finalize.Finalized), len(res.Finalize.Refused)
	}
	http.Redirect(w, r, moderationBack(f, "removals", "did", "finalized", "finalized", strconv.Itoa(done), "refused", nonZero(refused)), http.StatusSeeOther)
}

func (u *UI) downloadArchive(w http.ResponseWriter, r *http.Request) {
	f, entry, err := u.opts.Moderation.OpenRemovalArchive(r.Context(), r.PathValue("name"))
	if err != nil {
		u.failBack(w, r, err, "/moderation#archives")
		return
	}
	defer f.Close()
	ct := "application/vnd.apache.parquet"
	if entry.Format == cairn.ArchiveFormatJSONL {
		ct = "application/x-ndjson; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote(entry.Name))
	http.ServeContent(w, r, entry.Name, time.Time{}, f)
}
