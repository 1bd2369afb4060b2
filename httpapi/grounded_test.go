package httpapi_test

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/internal/llmtest"
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// Grounded answers over HTTP with a fake language model: the grounding
// contract in the answer, the session routes, and the inner voice's
// metrics on /metrics (figures only: no question, no answer).
func TestGroundedInnerVoiceOverHTTP(t *testing.T) {
	fake := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Reply: func(p string) string { return llmtest.Quote(p, 2) }})
	c, err := llm.New(fake.Settings())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	iv := retrieve.DefaultInnerVoiceConfig()
	iv.Enabled = true
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Now: func() time.Time { return now }, InnerVoice: &iv, LLM: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv := httptest.NewServer(httpapi.New(eng, nil))
	t.Cleanup(srv.Close)
	var ent struct{ ID string }
	do(t, srv, "POST", "/v1/kg/entities", `{"name":"auth-service","type":"service"}`).decode(t, &ent)
	for _, f := range []string{"Clock drift breaks session token expiry because the auth-service depends on NTP.",
		"The auth-service uses Redis for session tokens, and clock drift breaks session token expiry."} {
		if r := do(t, srv, "POST", "/v1/kg/entities/"+ent.ID+"/observations", `{"content":"`+f+`"}`); r.status != 201 {
			t.Fatalf("observe: %d %s", r.status, r.body)
		}
	}
	question := "why does clock drift break session token expiry on the auth-service?"
	var ans cairn.AskResult
	r := do(t, srv, "POST", "/v1/inner-voice/ask", `{"content":"`+question+`","save":false,"mode":"continue"}`)
	r.decode(t, &ans)
	if r.status != 200 || ans.Synthesizer != "grounded" || ans.Refused || ans.Grounding.CoverageRatio != 1 || len(ans.Grounding.Sources) != 2 ||
		ans.Session == nil || ans.Provenance.PromptTokens != 120 {
		t.Fatalf("ask: %d %s", r.status, r.body)
	}
	for _, key := range []string{`"grounding":{"answer"`, `"source_id"`, `"source_type":"kg_observation"`, `"span"`, `"relevance"`, `"confidence"`,
		`"coverage_ratio"`, `"refused":false`, `"provenance"`, `"prompt_hash"`} {
		if !strings.Contains(string(r.body), key) {
			t.Errorf("the answer lacks %s", key)
		}
	}
	// An ungrounded answer, then a failing model.
	fake.Script(llmtest.Answer{Reply: func(p string) string { return llmtest.Quote(p, 1, "It was rewritten in Rust in 2019.") }})
	do(t, srv, "POST", "/v1/inner-voice/ask", `{"content":"`+question+`","save":false,"mode":"continue"}`).decode(t, &ans)
	if !ans.Refused || ans.Grounding.Answer != "Insufficient grounding in available sources." {
		t.Fatalf("ungrounded: %+v", ans.Grounding)
	}
	fake.Script(llmtest.Answer{Status: 503})
	do(t, srv, "POST", "/v1/inner-voice/ask", `{"content":"`+question+`","save":false,"mode":"continue"}`).decode(t, &ans)
	if ans.Synthesizer != "extractive" || ans.Provenance.DegradedFrom != "grounded" || !strings.Contains(ans.Provenance.DegradedReason, "HTTP 503") {
		t.Fatalf("degraded: %+v", ans.Provenance)
	}

	var list cairn.VoiceSessionList
	r = do(t, srv, "GET", "/v1/inner-voice/sessions?limit=5", "")
	r.decode(t, &list)
	if r.status != 200 || len(list.Sessions) != 1 || list.Totals.Exchanges != 3 || list.Totals.Refused != 1 || list.Totals.Degraded != 1 {
		t.Fatalf("sessions: %d %s", r.status, r.body)
	}
	id := list.Sessions[0].ID
	var view cairn.VoiceSessionView
	r = do(t, srv, "GET", "/v1/inner-voice/sessions/"+id+"?limit=2", "")
	r.decode(t, &view)
	if r.status != 200 || len(view.Exchanges) != 2 || view.NextAfter != 2 || view.Exchanges[0].Query != question {
		t.Fatalf("session: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "GET", "/v1/inner-voice/sessions/"+id+"?limit=0", ""); r.status != 400 || r.code() != "invalid_params" {
		t.Fatalf("limit 0: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "GET", "/v1/inner-voice/sessions/ivs_nope", ""); r.status != 404 {
		t.Fatalf("unknown session: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/v1/inner-voice/ask", `{"content":"q","mode":"later"}`); r.status != 400 {
		t.Fatalf("bad mode: %d %s", r.status, r.body)
	}

	text := string(do(t, srv, "GET", "/metrics", "").body)
	for _, want := range []string{
		`cairn_inner_voice_calls_total{synthesizer="grounded",outcome="answered"} 1`,
		`cairn_inner_voice_calls_total{synthesizer="grounded",outcome="refused"} 1`,
		`cairn_inner_voice_calls_total{synthesizer="extractive",outcome="answered"} 1`,
		`cairn_inner_voice_refusals_total{synthesizer="grounded"} 1`,
		`cairn_inner_voice_degraded_total 1`,
		`cairn_inner_voice_tokens_total{kind="prompt"} 240`,
		`cairn_inner_voice_tokens_total{kind="completion"} 80`,
		`cairn_inner_voice_seconds_count{synthesizer="grounded"} 2`,
		`cairn_inner_voice_coverage_ratio_bucket{synthesizer="grounded",le="1"} 2`,
		"# TYPE cairn_inner_voice_cost_usd_total counter",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(text, "clock drift") || strings.Contains(text, "auth-service") {
		t.Fatal("/metrics holds content")
	}
	// A scoped call has its own thread; the listing filters by scope, its
	// keys given as query parameters.
	reviewer := memory.Scope{RepoID: "/src/auth", AgentID: "reviewer"}
	var scoped cairn.AskResult
	do(t, srv, "POST", "/v1/inner-voice/ask", `{"content":"`+question+`","save":false,"mode":"continue","scopeIds":{"agentId":"reviewer","repoId":"/src/auth"}}`).decode(t, &scoped)
	if scoped.Session == nil || !scoped.Session.Created || scoped.Session.SessionID == id || scoped.Session.Scope != reviewer {
		t.Fatalf("a scoped ask: %+v", scoped.Session)
	}
	r = do(t, srv, "GET", "/v1/inner-voice/sessions?agentId=reviewer&repoId=%2Fsrc%2Fauth", "")
	list = cairn.VoiceSessionList{}
	r.decode(t, &list)
	if r.status != 200 || len(list.Sessions) != 1 || list.ActiveSessionID != scoped.Session.SessionID || list.Sessions[0].Scope != reviewer ||
		list.Totals.Exchanges != 1 {
		t.Fatalf("sessions of the reviewer: %d %s", r.status, r.body)
	}
	r = do(t, srv, "GET", "/v1/inner-voice/sessions", "")
	list = cairn.VoiceSessionList{}
	r.decode(t, &list)
	if len(list.Sessions) != 2 || list.ActiveSessionID != id || list.Totals.Exchanges != 4 {
		t.Fatalf("every session: %s", r.body)
	}
	if r := do(t, srv, "GET", "/v1/inner-voice/sessions?agentId=", ""); r.status != 400 || r.code() != "invalid_params" {
		t.Fatalf("an empty scope value: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "DELETE", "/v1/inner-voice/sessions/"+id, ""); r.status != 200 || !strings.Contains(string(r.body), `"exchanges":3`) {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
}

// With the grounding judge on, over HTTP: provenance.judge says what it
// took; a judge that contradicts every claim has the answer refused, one
// that answers no JSON leaves it verified offline, and notes say so.
func TestGroundingJudgeOverHTTP(t *testing.T) {
	answer := llmtest.Answer{Reply: func(p string) string { return llmtest.Quote(p, 2) }}
	fake := llmtest.New(t, llm.ProviderOpenAI, answer)
	c, err := llm.New(fake.Settings())
	if err != nil {
		t.Fatal(err)
	}
	iv := retrieve.DefaultInnerVoiceConfig()
	iv.Enabled = true
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{InnerVoice: &iv, LLM: c, GroundingJudge: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv := httptest.NewServer(httpapi.New(eng, nil))
	t.Cleanup(srv.Close)
	var ent struct{ ID string }
	do(t, srv, "POST", "/v1/kg/entities", `{"name":"auth-service","type":"service"}`).decode(t, &ent)
	for _, f := range []string{"Clock drift breaks session token expiry because the auth-service depends on NTP.",
		"The auth-service uses Redis for session tokens, and clock drift breaks session token expiry."} {
		if r := do(t, srv, "POST", "/v1/kg/entities/"+ent.ID+"/observations", `{"content":"`+f+`"}`); r.status != 201 {
			t.Fatalf("observe: %d %s", r.status, r.body)
		}
	}
	contradicts := llmtest.Answer{Reply: func(p string) string {
		var vs []string
		for i := 1; i <= strings.Count(p, "\nClaim "); i++ {
			vs = append(vs, fmt.Sprintf(`{"claim":%d,"verdict":"contradicted","source_id":"","evidence":""}`, i))
		}
		return `{"verdicts":[` + strings.Join(vs, ",") + `]}`
	}}
	for _, tc := range []struct {
		name    string
		judge   llmtest.Answer
		refused bool
		notes   string
	}{
		{"contradicts every claim", contradicts, true, "Required coverage 0.60"},
		{"answers no JSON", llmtest.Answer{Text: "They all look right."}, false, "verified offline alone"},
	} {
		fake.Script(answer, tc.judge)
		var ans cairn.AskResult
		r := do(t, srv, "POST", "/v1/inner-voice/ask", `{"content":"why does clock drift break session token expiry?","save":false,"mode":"none"}`)
		r.decode(t, &ans)
		if r.status != 200 || ans.Refused != tc.refused || !strings.Contains(ans.Grounding.Notes, tc.notes) || ans.Provenance.Judge == nil ||
			ans.Provenance.Judge.Calls != 1 || (ans.Provenance.Judge.Failed != "") == tc.refused || !strings.Contains(string(r.body), `"judge":{"calls":1`) {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
		}
	}
}
