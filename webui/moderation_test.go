package webui_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/uiseed"
	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
)

// candidate reads a candidate from the engine.
func candidate(t *testing.T, s *site, id string) memory.KGCandidate {
	t.Helper()
	list, err := s.eng.Candidates(ctx, cairn.CandidatesRequest{Status: "all", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Candidates {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no candidate %s", id)
	return memory.KGCandidate{}
}

// entityNamed finds an entity of the graph by its exact name ("" if none).
func entityNamed(t *testing.T, s *site, name string) string {
	t.Helper()
	page, err := s.eng.BrowseEntities(ctx, cairn.EntityBrowseRequest{Prefix: name, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Entities {
		if strings.EqualFold(e.Name, name) {
			return e.ID
		}
	}
	return ""
}

func mustContain(t *testing.T, what string, p page, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(p.body, w) {
			t.Fatalf("%s lacks %q:\n%.6000s", what, w, p.body)
		}
	}
}

// The moderation page over the engine: the candidates inner_voice staged,
// each with the sentence it came from and a link to its thought; the
// removal queue; the menu entry; the thought page's links to both.
func TestModerationPageShowsTheEngineQueues(t *testing.T) {
	s := newSite(t, siteOptions{moderate: true})
	sd := s.seeded
	if p := s.get(t, "/"); !strings.Contains(p.body, `href="/moderation"`) {
		t.Fatal("the menu does not offer moderation")
	}
	p := s.get(t, "/moderation")
	wantStatus(t, p, 200)
	mustContain(t, "the moderation page", p,
		"checkout-api", "invoice-worker", `<span class="rel">uses</span>`, "The checkout-api uses Redis for carts",
		`href="/thoughts/`+sd.CandidateThought+`"`, `value="`+sd.Candidates["redis"]+`"`,
		// The removal queue, with why the marked thought cannot go yet.
		`href="/thoughts/`+sd.MarkedThought+`"`, "Old idea: cache tokens", "not exported yet", "Archive format")
	// Candidates are listed most confident first, pending only by default.
	if i, j := strings.Index(p.body, sd.Candidates["checkout-api"]), strings.Index(p.body, sd.Candidates["bob"]); i < 0 || j < 0 || i > j {
		t.Errorf("checkout-api (0.85) is not listed before Bob (0.65)")
	}
	// Filters: by kind and by source thought.
	p = s.get(t, "/moderation?kind=edge")
	if strings.Contains(p.body, `value="`+sd.Candidates["redis"]+`"`) || !strings.Contains(p.body, `value="`+sd.Candidates["checkout-api -> uses -> redis"]+`"`) {
		t.Errorf("kind=edge lists entities or misses edges")
	}
	p = s.get(t, "/moderation?thought="+sd.CandidateThought)
	if strings.Contains(p.body, "invoice-worker") || !strings.Contains(p.body, "Bob") {
		t.Errorf("the thought filter lists another thought's candidates")
	}
	// A thought's page leads to its candidates and to the removal queue.
	p = s.get(t, "/thoughts/"+sd.CandidateThought)
	mustContain(t, "the thought page", p, `href="/moderation?status=all&amp;thought=`+sd.CandidateThought+`"`)
	p = s.get(t, "/thoughts/"+sd.MarkedThought)
	mustContain(t, "the marked thought's page", p, `href="/moderation#removals"`)
	// Bad addresses are refused with the reason.
	for path, status := range map[string]int{"/moderation?coff=x": 400, "/moderation?roff=-1": 400, "/moderation?status=maybe": 400,
		"/moderation?kind=planet": 400, "/moderation?thought=" + url.QueryEscape(" th_x"): 400,
		"/moderation/archives/" + url.PathEscape("../cairn.db"): 404, "/moderation/archives/thoughts-removal-x.jsonl": 404} {
		if p := s.get(t, path); p.status != status {
			t.Errorf("GET %s: %d; want %d\n%.1000s", path, p.status, status, p.body)
		}
	}
}

// Bulk approve, reject and blocklist change the graph as the graph pages
// then show: approved entities and edges appear, rejected ones do not, a
// blocklisted name is never staged again until unblocked.
func TestModerationBulkDecisionsReachTheGraph(t *testing.T) {
	s := newSite(t, siteOptions{moderate: true})
	sd := s.seeded
	token := csrf(t, s.get(t, "/moderation"))
	c := sd.Candidates
	approve := []string{c["checkout-api"], c["redis"], c["checkout-api -> uses -> redis"], c["invoice-worker -> writes_to -> postgres"]}
	p := s.do(t, "POST", "/moderation/candidates", url.Values{"csrf": {token}, "action": {"approve"}, "id": approve, "feedback": {"checked with the team"}})
	wantStatus(t, p, http.StatusSeeOther)
	loc := p.header.Get("Location")
	if !strings.HasPrefix(loc, "/moderation?") || !strings.HasSuffix(loc, "#candidates") {
		t.Fatalf("redirected to %q", loc)
	}
	p = s.get(t, loc)
	// checkout-api and Redis become entities; the edge to Postgres
	// creates invoice-worker and joins the graph's postgres.
	mustContain(t, "the page after approving", p, "Approved 4 candidates into the knowledge graph (3 new entities created).")
	for _, id := range approve {
		if got := candidate(t, s, id); got.Status != memory.CandidateApproved || got.Feedback != "checked with the team" || got.PromotedID == "" {
			t.Fatalf("candidate after approval: %+v", got)
		}
		if strings.Contains(p.body, `value="`+id+`"`) {
			t.Errorf("approved %s is still offered for a decision", id)
		}
	}
	// The graph pages show what was approved.
	api := entityNamed(t, s, "checkout-api")
	if api == "" {
		t.Fatal("checkout-api is not in the graph")
	}
	mustContain(t, "the entity list", s.get(t, "/graph?prefix=checkout"), "checkout-api")
	mustContain(t, "checkout-api's page", s.get(t, "/graph/"+api), "uses", "Redis")
	mustContain(t, "postgres's page", s.get(t, "/graph/"+entityNamed(t, s, "postgres")), "writes_to", "invoice-worker")
	// The approved list links each candidate to what it became.
	p = s.get(t, "/moderation?status=approved")
	mustContain(t, "the approved list", p, `href="/graph/`+api+`"`, "checked with the team", `href="/graph?prefix=invoice-worker"`)

	// Reject Bob; blocklist the name whose sentence quotes markup.
	p = s.do(t, "POST", "/moderation/candidates", url.Values{"csrf": {token}, "action": {"reject"}, "id": {c["bob"]}})
	wantStatus(t, p, http.StatusSeeOther)
	mustContain(t, "the page after rejecting", s.get(t, p.header.Get("Location")), "Rejected 1 candidate.")
	p = s.do(t, "POST", "/moderation/candidates", url.Values{"csrf": {token}, "action": {"blocklist"}, "id": {sd.XSSCandidate}})
	wantStatus(t, p, http.StatusSeeOther)
	p = s.get(t, p.header.Get("Location"))
	mustContain(t, "the page after blocklisting", p, "Rejected 1 candidate; 1 blocklisted: never staged again.", `id="blocklist"`,
		strings.ToLower(uiseed.XSSName))
	if entityNamed(t, s, "Bob") != "" || entityNamed(t, s, uiseed.XSSName) != "" {
		t.Fatal("a rejected candidate reached the graph")
	}
	if p := s.get(t, "/graph?prefix=Bob"); !strings.Contains(p.body, "No entity matches") {
		t.Errorf("the graph lists Bob after his rejection")
	}
	if got := candidate(t, s, c["bob"]); got.Status != memory.CandidateRejected {
		t.Fatalf("Bob after rejection: %+v", got)
	}
	// Staged again, the blocked name is left out; Bob (rejected, not
	// blocked) comes back.
	restage := func() map[string]bool {
		t.Helper()
		no, all := false, 0.0
		if _, err := s.eng.Ask(ctx, cairn.AskRequest{Content: "How is the shop's architecture put together?", StageKG: true, Save: &no,
			SimThresh: &all, IncludeTags: []string{"architecture"}}); err != nil {
			t.Fatal(err)
		}
		list, _ := s.eng.Candidates(ctx, cairn.CandidatesRequest{})
		names := map[string]bool{}
		for _, c := range list.Candidates {
			names[c.Name] = true
		}
		return names
	}
	if names := restage(); names[uiseed.XSSName] || !names["Bob"] {
		t.Fatalf("staged again: %v", names)
	}
	// Unblocking from the page lets it be staged again.
	p = s.do(t, "POST", "/moderation/unblock", url.Values{"csrf": {token}, "kind": {"entity"}, "key": {strings.ToLower(uiseed.XSSName)}})
	wantStatus(t, p, http.StatusSeeOther)
	mustContain(t, "the page after unblocking", s.get(t, p.header.Get("Location")), "Removed from the blocklist")
	if names := restage(); !names[uiseed.XSSName] {
		t.Fatalf("after unblocking, staged: %v", names)
	}

	// Approving with "mark their thoughts for removal" queues the source.
	p = s.do(t, "POST", "/moderation/candidates", url.Values{"csrf": {token}, "action": {"approve"}, "id": {c["rabbitmq"]}, "mark_source": {"on"}})
	wantStatus(t, p, http.StatusSeeOther)
	p = s.get(t, p.header.Get("Location"))
	mustContain(t, "the page after approving with marking", p, "Marked 1 source thought for removal.")
	src := candidate(t, s, c["rabbitmq"]).SourceThoughtID
	if th, _ := s.eng.Thought(ctx, src); th.Status != memory.StatusRemoval {
		t.Fatalf("the source thought is %s", th.Status)
	}
	mustContain(t, "the removal queue", p, `id="rm-`+src+`"`)

	// A decided candidate, an unknown one, no selection and an unknown
	// action are refused with the engine's reason and a way back;
	// nothing changes.
	for _, tc := range []struct {
		form   url.Values
		status int
		want   string
	}{
		{url.Values{"action": {"reject"}, "id": {c["redis"], c["invoice-worker"]}}, http.StatusConflict, "was already approved"},
		{url.Values{"action": {"approve"}, "id": {"kgc_nope"}}, http.StatusNotFound, "does not exist"},
		{url.Values{"action": {"approve"}}, http.StatusBadRequest, "select at least one candidate"},
		{url.Values{"action": {"promote"}, "id": {c["invoice-worker"]}}, http.StatusBadRequest, "unknown action"},
		{url.Values{"action": {"approve"}, "id": {c["invoice-worker"]}, "feedback": {strings.Repeat("x", 5000)}}, http.StatusBadRequest, "feedback"},
	} {
		p := s.do(t, "POST", "/moderation/candidates", with(tc.form, "csrf", token, "status", "pending"))
		if p.status != tc.status || !strings.Contains(p.body, tc.want) || !strings.Contains(p.body, `href="/moderation?status=pending#candidates">Back`) {
			t.Errorf("%v: %d; want %d with %q and a way back\n%.2000s", tc.form, p.status, tc.status, tc.want, p.body)
		}
	}
	if got := candidate(t, s, c["invoice-worker"]); got.Status != memory.CandidatePending {
		t.Fatalf("a refused decision decided: %+v", got)
	}
}

// Every moderation post needs the visitor's CSRF token and the page's
// origin: refused, it changes nothing.
func TestModerationCSRF(t *testing.T) {
	s := newSite(t, siteOptions{moderate: true, engine: func(o *cairn.Options) { o.Maintenance.RetentionDays = 0 }})
	sd := s.seeded
	token := csrf(t, s.get(t, "/moderation"))
	// Export first (with the token), so finalize would have work to do.
	wantStatus(t, s.do(t, "POST", "/moderation/removals/export", url.Values{"csrf": {token}, "format": {"jsonl"}}), http.StatusSeeOther)
	archives, _ := s.eng.RemovalArchives(ctx)
	posts := []struct {
		path string
		form url.Values
	}{
		{"/moderation/candidates", url.Values{"action": {"approve"}, "id": {sd.Candidates["redis"]}}},
		{"/moderation/candidates", url.Values{"action": {"blocklist"}, "id": {sd.XSSCandidate}}},
		{"/moderation/unblock", url.Values{"kind": {"entity"}, "key": {"redis"}}},
		{"/moderation/removals/export", url.Values{"format": {"parquet"}}},
		{"/moderation/removals/finalize", url.Values{"confirm": {"yes"}, "mode": {"eligible"}}},
		{"/moderation/removals/finalize", url.Values{"confirm": {"yes"}, "mode": {"selected"}, "id": {sd.MarkedThought}}},
		{"/thoughts/" + sd.MarkedThought + "/mark", url.Values{"status": {"active"}, "back": {"/moderation#removals"}}},
	}
	other := newSiteClient(s)
	otherToken := csrf(t, other.get(t, "/moderation"))
	for _, post := range posts {
		for _, tc := range []struct {
			name   string
			form   url.Values
			header []string
		}{
			{"no token", post.form, nil},
			{"a wrong token", with(post.form, "csrf", "AAAA"+token[4:]), nil},
			{"another visitor's token", with(post.form, "csrf", otherToken), nil},
			{"another origin", with(post.form, "csrf", token), []string{"Origin", "http://evil.example"}},
			{"a cross-site fetch", with(post.form, "csrf", token), []string{"Sec-Fetch-Site", "cross-site"}},
		} {
			if p := s.do(t, "POST", post.path, tc.form, tc.header...); p.status != http.StatusForbidden {
				t.Errorf("POST %s with %s: %d; want 403", post.path, tc.name, p.status)
			}
		}
	}
	if got := candidate(t, s, sd.Candidates["redis"]); got.Status != memory.CandidatePending {
		t.Fatalf("a refused post decided %+v", got)
	}
	if got := candidate(t, s, sd.XSSCandidate); got.Status != memory.CandidatePending {
		t.Fatalf("a refused post blocklisted %+v", got)
	}
	if th, err := s.eng.Thought(ctx, sd.MarkedThought); err != nil || th.Status != memory.StatusRemoval {
		t.Fatalf("a refused post finalized or restored the thought: %+v %v", th, err)
	}
	if again, _ := s.eng.RemovalArchives(ctx); len(again) != len(archives) {
		t.Fatalf("a refused post exported: %d archives, had %d", len(again), len(archives))
	}
}

// Stored markup in candidate names, the sentences they quote and the
// thoughts they come from is shown as text on the moderation page, in
// every list it appears in.
func TestModerationEscapesMemoryText(t *testing.T) {
	s := newSite(t, siteOptions{moderate: true})
	sd := s.seeded
	th, err := s.eng.Think(ctx, cairn.ThinkRequest{Content: "Marked: " + uiseed.XSS})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: th.ID, Status: memory.StatusRemoval}); err != nil {
		t.Fatal(err)
	}
	token := csrf(t, s.get(t, "/moderation"))
	for _, step := range []string{"", "reject"} {
		if step != "" {
			wantStatus(t, s.do(t, "POST", "/moderation/candidates", url.Values{"csrf": {token}, "action": {"blocklist"}, "id": {sd.XSSCandidate},
				"feedback": {uiseed.XSS}}), http.StatusSeeOther)
		}
		for _, path := range []string{"/moderation", "/moderation?status=all", "/moderation?status=rejected", "/moderation?thought=" + candidate(t, s, sd.XSSCandidate).SourceThoughtID} {
			p := s.get(t, path)
			wantStatus(t, p, 200)
			if strings.Contains(p.body, "<script>document") || strings.Contains(p.body, "<img src=x") {
				t.Fatalf("GET %s (%s) prints stored markup unescaped", path, step)
			}
		}
	}
	p := s.get(t, "/moderation?status=rejected")
	mustContain(t, "the rejected list", p, "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;")
	p = s.get(t, "/moderation")
	mustContain(t, "the removal queue", p, `id="rm-`+th.ID+`"`, "Marked: &lt;script&gt;document.title=")
}

var downloadRE = regexp.MustCompile(`href="(/moderation/archives/[^"]+)" download`)

// The removal queue: export in the chosen format (downloadable), finalize
// refused with the engine's reason within the retention period and without
// the confirmation, done once retention allows; keep takes a thought out.
func TestRemovalQueueExportAndFinalize(t *testing.T) {
	s := newSite(t, siteOptions{moderate: true})
	sd := s.seeded
	token := csrf(t, s.get(t, "/moderation"))
	p := s.do(t, "POST", "/moderation/removals/export", url.Values{"csrf": {token}, "format": {"jsonl"}})
	wantStatus(t, p, http.StatusSeeOther)
	if loc := p.header.Get("Location"); !strings.HasSuffix(loc, "#removals") {
		t.Errorf("export went to %q", loc)
	}
	p = s.get(t, p.header.Get("Location"))
	mustContain(t, "the page after exporting", p, "Exported 1 thought to a new archive.", "within the retention period of 30 days")
	m := downloadRE.FindStringSubmatch(p.body)
	if m == nil || !strings.HasSuffix(m[1], ".jsonl") {
		t.Fatalf("no download link to a JSON-lines archive:\n%.6000s", p.body)
	}
	dl := s.get(t, m[1])
	if dl.status != 200 || !strings.Contains(dl.header.Get("Content-Disposition"), "attachment") || !strings.Contains(dl.body, `"id":"`+sd.MarkedThought+`"`) ||
		!strings.Contains(dl.body, "Old idea: cache tokens") {
		t.Fatalf("download: %d %v\n%.500s", dl.status, dl.header, dl.body)
	}
	// Nothing new to export.
	p = s.do(t, "POST", "/moderation/removals/export", url.Values{"csrf": {token}})
	mustContain(t, "a second export", s.get(t, p.header.Get("Location")), "Nothing to export")
	if p = s.do(t, "POST", "/moderation/removals/export", url.Values{"csrf": {token}, "format": {"xml"}}); p.status != http.StatusBadRequest ||
		!strings.Contains(p.body, "want parquet or jsonl") {
		t.Errorf("an unknown format: %d %.1000s", p.status, p.body)
	}
	// Finalize: the confirmation is needed; within the retention the
	// engine refuses and says why.
	p = s.do(t, "POST", "/moderation/removals/finalize", url.Values{"csrf": {token}, "mode": {"selected"}, "id": {sd.MarkedThought}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "tick the confirmation") {
		t.Errorf("finalize without confirmation: %d", p.status)
	}
	p = s.do(t, "POST", "/moderation/removals/finalize", url.Values{"csrf": {token}, "mode": {"selected"}, "id": {sd.MarkedThought}, "confirm": {"yes"}})
	if p.status != http.StatusConflict || !strings.Contains(p.body, "cannot be finalized: within the retention period of 30 days") ||
		!strings.Contains(p.body, "nothing was deleted") || !strings.Contains(p.body, `href="/moderation#removals">Back`) {
		t.Errorf("finalize within retention: %d %.2000s", p.status, p.body)
	}
	p = s.do(t, "POST", "/moderation/removals/finalize", url.Values{"csrf": {token}, "mode": {"eligible"}, "confirm": {"yes"}})
	wantStatus(t, p, http.StatusSeeOther)
	mustContain(t, "finalizing every eligible one", s.get(t, p.header.Get("Location")), "Finalized 0 thoughts", "1 thought could not be finalized yet")
	if _, err := s.eng.Thought(ctx, sd.MarkedThought); err != nil {
		t.Fatalf("finalized within retention: %v", err)
	}
	// Keep: the thought is active again and leaves the queue.
	p = s.do(t, "POST", "/thoughts/"+sd.MarkedThought+"/mark", url.Values{"csrf": {token}, "status": {"active"}, "back": {"/moderation#removals"}})
	wantStatus(t, p, http.StatusSeeOther)
	p = s.get(t, p.header.Get("Location"))
	if strings.Contains(p.body, `id="rm-`+sd.MarkedThought+`"`) || !strings.Contains(p.body, "Thought status changed.") {
		t.Errorf("kept thought still queued:\n%.4000s", p.body)
	}
}

// With the retention passed, an exported thought is finalized: gone from
// the store and the page; its archive stays listed and downloadable.
func TestRemovalQueueFinalizes(t *testing.T) {
	s := newSite(t, siteOptions{moderate: true, engine: func(o *cairn.Options) { o.Maintenance.RetentionDays = 0 }})
	sd := s.seeded
	token := csrf(t, s.get(t, "/moderation"))
	p := s.get(t, "/moderation")
	if strings.Contains(p.body, `name="id" value="`+sd.MarkedThought+`"`) {
		t.Fatal("a thought not exported yet can be selected for finalizing")
	}
	wantStatus(t, s.do(t, "POST", "/moderation/removals/export", url.Values{"csrf": {token}, "format": {"parquet"}}), http.StatusSeeOther)
	p = s.get(t, "/moderation")
	mustContain(t, "the queue after the export", p, "can be finalized", `name="id" value="`+sd.MarkedThought+`"`)
	p = s.do(t, "POST", "/moderation/removals/finalize", url.Values{"csrf": {token}, "mode": {"selected"}, "id": {sd.MarkedThought}, "confirm": {"yes"}})
	wantStatus(t, p, http.StatusSeeOther)
	p = s.get(t, p.header.Get("Location"))
	mustContain(t, "the page after finalizing", p, "Finalized 1 thought: deleted, their text erased", "No thought is marked for removal.")
	if _, err := s.eng.Thought(ctx, sd.MarkedThought); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("the finalized thought: %v", err)
	}
	if p := s.get(t, "/thoughts/"+sd.MarkedThought); p.status != http.StatusNotFound {
		t.Errorf("the finalized thought's page: %d", p.status)
	}
	m := downloadRE.FindStringSubmatch(p.body)
	if m == nil || !strings.HasSuffix(m[1], ".parquet") {
		t.Fatalf("the archive is not listed:\n%.6000s", p.body)
	}
	dl := s.get(t, m[1])
	rows, err := readParquet(t, dl.body)
	if dl.status != 200 || err != nil || len(rows) != 1 || rows[0].ID != sd.MarkedThought {
		t.Fatalf("the downloaded archive: %d %v %+v", dl.status, err, rows)
	}
}

func readParquet(t *testing.T, body string) ([]maintain.ArchivedThought, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.parquet")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return maintain.ReadArchive(p)
}

// Candidates staged from a private thought quote it: the page lists them
// only when asked to include private ones, and otherwise says how many it
// hides; the private thought's page leads to them with private on.
func TestModerationHidesPrivateCandidates(t *testing.T) {
	s := newSite(t, siteOptions{moderate: true})
	th, err := s.eng.Think(ctx, cairn.ThinkRequest{Content: "The ledger-service stores payroll in Cassandra; Zoe maintains ledger-service.",
		IsPrivate: true, Tags: []string{"payroll"}})
	if err != nil {
		t.Fatal(err)
	}
	no, all, k := false, 0.0, 10
	if _, err := s.eng.Ask(ctx, cairn.AskRequest{Content: "Where does the ledger-service store payroll?", StageKG: true, Save: &no,
		SimThresh: &all, TopK: &k, IncludeTags: []string{"payroll"}, IncludePrivate: true, Mode: "none"}); err != nil {
		t.Fatal(err)
	}
	private, err := s.eng.Candidates(ctx, cairn.CandidatesRequest{SourceThoughtID: th.ID, IncludePrivate: true})
	if err != nil || len(private.Candidates) == 0 {
		t.Fatalf("nothing staged from the private thought: %v", err)
	}
	n := len(private.Candidates)
	const quote = "payroll in Cassandra"
	for _, tc := range []struct {
		path   string
		shown  bool
		notice string
	}{
		{"/moderation", false, plural(n) + " from private thoughts hidden"},
		{"/moderation?status=all", false, plural(n) + " from private thoughts hidden"},
		{"/moderation?thought=" + th.ID, false, plural(n) + " from private thoughts hidden"},
		{"/moderation?private=on", true, "candidates from private thoughts included"},
		{"/moderation?thought=" + th.ID + "&private=on", true, "candidates from private thoughts included"},
	} {
		p := s.get(t, tc.path)
		wantStatus(t, p, 200)
		if strings.Contains(p.body, quote) != tc.shown || !strings.Contains(p.body, tc.notice) {
			t.Errorf("GET %s: quotes the private thought: %v, want %v; says %q: %v", tc.path, strings.Contains(p.body, quote), tc.shown,
				tc.notice, strings.Contains(p.body, tc.notice))
		}
		if tc.shown && !strings.Contains(p.body, `value="`+private.Candidates[0].ID+`"`) {
			t.Errorf("GET %s does not list the private candidates", tc.path)
		}
	}
	p := s.get(t, "/thoughts/"+th.ID)
	mustContain(t, "the private thought's page", p, `href="/moderation?private=on&amp;status=all&amp;thought=`+th.ID+`"`)
}

func plural(n int) string {
	if n == 1 {
		return "1 candidate"
	}
	return strconv.Itoa(n) + " candidates"
}

// Approving, on the page, an edge to a blocklisted name is refused with
// the reason and a way back, and decides nothing.
func TestModerationRefusesAnEdgeToABlockedName(t *testing.T) {
	s := newSite(t, siteOptions{moderate: true})
	c := s.seeded.Candidates
	token := csrf(t, s.get(t, "/moderation"))
	wantStatus(t, s.do(t, "POST", "/moderation/candidates", url.Values{"csrf": {token}, "action": {"blocklist"}, "id": {c["redis"]}}), http.StatusSeeOther)
	edge, other := c["checkout-api -> uses -> redis"], c["invoice-worker -> writes_to -> postgres"]
	p := s.do(t, "POST", "/moderation/candidates", url.Values{"csrf": {token}, "action": {"approve"}, "id": {other, edge}, "status": {"pending"}})
	if p.status != http.StatusConflict || !strings.Contains(p.body, "blocked") || !strings.Contains(p.body, `href="/moderation?status=pending#candidates">Back`) {
		t.Fatalf("approving an edge to a blocked name: %d\n%.2000s", p.status, p.body)
	}
	for _, id := range []string{edge, other} {
		if got := candidate(t, s, id); got.Status != memory.CandidatePending {
			t.Fatalf("a refused batch decided %+v", got)
		}
	}
}
