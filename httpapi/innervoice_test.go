package httpapi_test

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/retrieve"
)

// The inner voice's answers, moderation and maintenance over HTTP: the
// routes of the tool table, their status codes, and query parameters on
// the GET route.
func TestInnerVoiceRoutes(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	iv := retrieve.DefaultInnerVoiceConfig()
	iv.Enabled = true
	eng, err := cairn.Open(filepath.Join(dir, "cairn.db"), &cairn.Options{Now: func() time.Time { return now }, InnerVoice: &iv,
		Maintenance: &maintain.Config{RetentionDays: 30, ArchiveDir: filepath.Join(dir, "archive"), Format: "parquet"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv := httptest.NewServer(httpapi.New(eng, nil))
	t.Cleanup(srv.Close)
	for _, text := range []string{"The auth-service depends on NTP; clock drift breaks session token expiry.",
		"The auth-service uses Redis for session tokens, and clock drift breaks token expiry."} {
		if r := do(t, srv, "POST", "/v1/thoughts", `{"content":"`+text+`","origin":"human"}`); r.status != 201 {
			t.Fatalf("think: %d %s", r.status, r.body)
		}
	}
	r := do(t, srv, "POST", "/v1/inner-voice/ask", `{"content":"why does clock drift break session token expiry?","stage_kg":true}`)
	var ans cairn.AskResult
	r.decode(t, &ans)
	if r.status != 200 || ans.SynthesizedAnswer == "" || ans.SavedThoughtID == "" || ans.Staged.PendingEntities == 0 {
		t.Fatalf("ask: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/v1/inner-voice/ask", `{"content":""}`); r.status != 400 || r.code() != "invalid_params" {
		t.Fatalf("empty question: %d %s", r.status, r.body)
	}
	var list cairn.CandidateList
	r = do(t, srv, "GET", "/v1/kg/candidates?kind=entity&min_confidence=0.8&limit=2", "")
	r.decode(t, &list)
	if r.status != 200 || len(list.Candidates) == 0 || len(list.Candidates) > 2 {
		t.Fatalf("candidates: %d %s", r.status, r.body)
	}
	for _, c := range list.Candidates {
		if c.Kind != "entity" || c.Confidence < 0.8 {
			t.Fatalf("candidate %+v", c)
		}
	}
	id := list.Candidates[0].ID
	r = do(t, srv, "POST", "/v1/kg/moderate", `{"action":"decide","items":[{"id":"`+id+`","decision":"approve"}]}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"status":"approved"`) {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/v1/kg/moderate", `{"action":"decide","items":[{"id":"`+id+`","decision":"approve"}]}`); r.status != 409 {
		t.Fatalf("approving twice: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/v1/kg/moderate", `{"action":"decide","items":[{"id":"kgc_nope","decision":"approve"}]}`); r.status != 404 {
		t.Fatalf("an unknown candidate: %d %s", r.status, r.body)
	}
	r = do(t, srv, "POST", "/v1/maintenance", `{"subcommand":"mark_removal","thought_ids":["`+ans.Sources[0].ThoughtID+`"]}`)
	if r.status != 200 {
		t.Fatalf("mark: %d %s", r.status, r.body)
	}
	r = do(t, srv, "POST", "/v1/maintenance", `{"subcommand":"finalize_removal","thought_ids":["`+ans.Sources[0].ThoughtID+`"]}`)
	if r.status != 409 || !strings.Contains(string(r.body), "not exported") {
		t.Fatalf("finalizing an unexported thought: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/v1/maintenance", `{"subcommand":"export_removals","format":"jsonl"}`); r.status != 200 || !strings.Contains(string(r.body), ".jsonl") {
		t.Fatalf("export: %d %s", r.status, r.body)
	}
}

// Over HTTP, candidates staged from a private thought are listed (by GET
// /v1/kg/candidates and the moderation review) only with include_private,
// and counted otherwise; approving an edge to a blocked name is a 409
// conflict that a dry run reports as would_refuse.
func TestKGCandidatesPrivateAndBlockedRoutes(t *testing.T) {
	iv := retrieve.DefaultInnerVoiceConfig()
	iv.Enabled = true
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{InnerVoice: &iv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv := httptest.NewServer(httpapi.New(eng, nil))
	t.Cleanup(srv.Close)
	for _, body := range []string{`{"content":"The auth-service uses Redis for session tokens, and clock drift breaks token expiry.","origin":"human"}`,
		`{"content":"Clock drift breaks session token expiry; the auth-service depends on NTP.","origin":"human","is_private":true}`} {
		if r := do(t, srv, "POST", "/v1/thoughts", body); r.status != 201 {
			t.Fatalf("think: %d %s", r.status, r.body)
		}
	}
	if r := do(t, srv, "POST", "/v1/inner-voice/ask", `{"content":"why does clock drift break session token expiry?","stage_kg":true,"include_private":true,"save":false}`); r.status != 200 {
		t.Fatalf("ask: %d %s", r.status, r.body)
	}
	lists := map[string]cairn.CandidateList{}
	for _, path := range []string{"/v1/kg/candidates", "/v1/kg/candidates?include_private=true"} {
		var l cairn.CandidateList
		r := do(t, srv, "GET", path, "")
		r.decode(t, &l)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		lists[path] = l
	}
	shared, all := lists["/v1/kg/candidates"], lists["/v1/kg/candidates?include_private=true"]
	if hidden := len(all.Candidates) - len(shared.Candidates); hidden == 0 || shared.PrivateExcluded != hidden || all.PrivateExcluded != 0 {
		t.Fatalf("private candidates: %d in all, %d shared, private_excluded %d", len(all.Candidates), len(shared.Candidates), shared.PrivateExcluded)
	}
	for _, tc := range []struct {
		body    string
		private bool
	}{{`{"action":"review"}`, false}, {`{"action":"review","include_private":true}`, true}} {
		var res cairn.ModerateResult
		r := do(t, srv, "POST", "/v1/kg/moderate", tc.body)
		r.decode(t, &res)
		if r.status != 200 || res.Review == nil || strings.Contains(string(r.body), "NTP") != tc.private || (res.Review.PrivateExcluded > 0) == tc.private {
			t.Fatalf("review %s: %d %s", tc.body, r.status, r.body)
		}
	}
	var redis, edge string
	for _, c := range all.Candidates {
		switch {
		case strings.EqualFold(c.Name, "redis"):
			redis = c.ID
		case strings.EqualFold(c.TargetName, "redis"):
			edge = c.ID
		}
	}
	if r := do(t, srv, "POST", "/v1/kg/moderate", `{"action":"decide","items":[{"id":"`+redis+`","decision":"reject","block":true}]}`); r.status != 200 {
		t.Fatalf("reject: %d %s", r.status, r.body)
	}
	approve := `{"action":"decide","items":[{"id":"` + edge + `","decision":"approve"}]`
	if r := do(t, srv, "POST", "/v1/kg/moderate", approve+`,"dry_run":true}`); r.status != 200 || !strings.Contains(string(r.body), `"status":"would_refuse"`) {
		t.Fatalf("dry run: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/v1/kg/moderate", approve+`}`); r.status != 409 || r.code() != "conflict" {
		t.Fatalf("approving an edge to a blocked name: %d %s", r.status, r.body)
	}
}
