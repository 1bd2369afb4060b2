package webui_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/internal/uiseed"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/webui"
)

// fakeModeration stands in for the engine's moderation in this test of
// the page's template and handlers.
type fakeModeration struct {
	decided  []webui.Decision
	removed  []string
	exported bool
}

func (f *fakeModeration) Candidates(ctx context.Context, q webui.CandidateQuery) (webui.CandidatePage, error) {
	all := []webui.Candidate{
		{ID: "cand_1", Kind: "entity", Name: uiseed.XSS, Type: "person", Confidence: 0.8, SourceThought: "th_1", SourceText: "Alice owns auth"},
		{ID: "cand_2", Kind: "edge", Source: "alice", Relation: "owns", Target: "auth-service", Confidence: 0.6, SourceThought: "th_1"},
	}
	var out []webui.Candidate
	for _, c := range all {
		if q.Kind == "" || q.Kind == c.Kind {
			out = append(out, c)
		}
	}
	return webui.CandidatePage{Candidates: out, Total: len(out)}, nil
}

func (f *fakeModeration) Decide(ctx context.Context, d webui.Decision) (webui.DecisionReport, error) {
	f.decided = append(f.decided, d)
	return webui.DecisionReport{Approved: len(d.IDs)}, nil
}

func (f *fakeModeration) Removals(ctx context.Context, q webui.RemovalQuery) (webui.RemovalPage, error) {
	return webui.RemovalPage{Thoughts: []memory.Thought{{ID: "th_9", Content: "old idea", Status: memory.StatusRemoval}}, Total: 1}, nil
}

func (f *fakeModeration) ExportRemovals(ctx context.Context, w io.Writer) error {
	f.exported = true
	_, err := io.WriteString(w, `{"thought":{"id":"th_9"}}`+"\n")
	return err
}

func (f *fakeModeration) ExportInfo() (string, string) {
	return "application/x-ndjson", "removals.jsonl"
}

func (f *fakeModeration) FinalizeRemovals(ctx context.Context, ids []string) (webui.FinalizeReport, error) {
	f.removed = append(f.removed, ids...)
	return webui.FinalizeReport{Removed: len(ids)}, nil
}

// The moderation page, when connected: queue, bulk decisions with CSRF,
// export and finalize.
func TestModerationPage(t *testing.T) {
	fake := &fakeModeration{}
	s := newSite(t, siteOptions{moderation: fake})
	if p := s.get(t, "/"); !strings.Contains(p.body, `href="/moderation"`) {
		t.Fatal("the menu does not offer moderation")
	}
	p := s.get(t, "/moderation")
	wantStatus(t, p, 200)
	if !strings.Contains(p.body, "auth-service") || !strings.Contains(p.body, "old idea") || strings.Contains(p.body, "<script>document") {
		t.Fatalf("moderation page: %.3000s", p.body)
	}
	if p = s.do(t, "POST", "/moderation/candidates", url.Values{"id": {"cand_1"}, "action": {"approve"}}); p.status != http.StatusForbidden || len(fake.decided) != 0 {
		t.Fatalf("without CSRF: %d %v", p.status, fake.decided)
	}
	token := csrf(t, s.get(t, "/moderation"))
	p = s.do(t, "POST", "/moderation/candidates", url.Values{"csrf": {token}, "id": {"cand_1", "cand_2"}, "action": {"approve"}})
	wantStatus(t, p, http.StatusSeeOther)
	if len(fake.decided) != 1 || !slices.Equal(fake.decided[0].IDs, []string{"cand_1", "cand_2"}) || fake.decided[0].Action != "approve" {
		t.Fatalf("decided %+v", fake.decided)
	}
	if p = s.do(t, "POST", "/moderation/candidates", url.Values{"csrf": {token}, "id": {"cand_1"}, "action": {"promote"}}); p.status != http.StatusBadRequest {
		t.Errorf("unknown action: %d", p.status)
	}
	p = s.get(t, "/moderation/removals/export")
	if p.status != 200 || !fake.exported || !strings.Contains(p.header.Get("Content-Disposition"), "removals.jsonl") {
		t.Errorf("export: %d %v", p.status, p.header)
	}
	if p = s.do(t, "POST", "/moderation/removals/finalize", url.Values{"csrf": {token}, "id": {"th_9"}}); p.status != http.StatusBadRequest || len(fake.removed) != 0 {
		t.Errorf("finalize without confirmation: %d", p.status)
	}
	p = s.do(t, "POST", "/moderation/removals/finalize", url.Values{"csrf": {token}, "id": {"th_9"}, "confirm": {"yes"}})
	if p.status != http.StatusSeeOther || !slices.Equal(fake.removed, []string{"th_9"}) {
		t.Errorf("finalize: %d %v", p.status, fake.removed)
	}
}
