package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/llmtest"
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/synth"
)

// Grounded answers and sessions from the command line, with a language
// model configured by the environment (a fake OpenAI server): the
// subcommands' JSON is the tools' JSON.
func TestGroundedInnerVoiceFromTheCommandLine(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Reply: func(p string) string { return llmtest.Quote(p, 2) }})
	t.Setenv("SURR_ENABLE_INNER_VOICE", "1")
	t.Setenv("SURR_ARCHIVE_DIR", filepath.Join(t.TempDir(), "archive"))
	t.Setenv("CAIRN_LLM_PROVIDER", "openai")
	t.Setenv("CAIRN_LLM_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", llmtest.Key)
	db := filepath.Join(t.TempDir(), "cairn.db")
	ent := decode[memory.KGEntity](t, mustCLI(t, db, "call", "kg_entity_create", `{"name":"auth-service","type":"service"}`))
	for _, f := range []string{
		"Clock drift breaks session token expiry because the auth-service depends on NTP.",
		"The auth-service uses Redis for session tokens, and clock drift breaks session token expiry.",
	} {
		mustCLI(t, db, "call", "kg_observe", `{"entityId":"`+ent.ID+`","content":"`+f+`"}`)
	}
	// The configuration shows the model, never its key.
	if cfg := strings.Join(strings.Fields(mustCLI(t, db, "--json", "config")), ""); !strings.Contains(cfg, `"llm":{"provider":"openai"`) || !strings.Contains(cfg, `"apiKeySet":true`) ||
		!strings.Contains(cfg, `"maxPromptTokens":8000`) || strings.Contains(cfg, llmtest.Key) {
		t.Fatalf("config: %s", cfg)
	}
	q := "why does clock drift break session token expiry on the auth-service?"
	text := mustCLI(t, db, "inner-voice", "ask", "--no-save", "--mode", "new_thread", "--topic", "tokens", q)
	for _, want := range []string{"grounded: coverage 1.00", "kg_observation kgo_", "model openai/gpt-4o-mini: 1 call(s), 120+40 tokens", "session ivs_", "(started, exchange 1; \"tokens\")"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	res := decode[cairn.AskResult](t, mustCLI(t, db, "--json", "inner-voice", "ask", "--no-save", "--mode", "continue", q))
	if res.Synthesizer != "grounded" || res.Refused || res.Session == nil || res.Session.Seq != 2 || res.Grounding.CoverageRatio != 1 {
		t.Fatalf("ask: %+v", res)
	}
	id := res.Session.SessionID
	if canonical(t, mustCLI(t, db, "--json", "inner-voice", "sessions")) != canonical(t, mustCLI(t, db, "call", "inner_voice_sessions", "{}")) {
		t.Fatal("sessions: the CLI and the tool differ")
	}
	if canonical(t, mustCLI(t, db, "--json", "inner-voice", "sessions", "show", id)) != canonical(t, mustCLI(t, db, "call", "inner_voice_session", `{"session_id":"`+id+`"}`)) {
		t.Fatal("show: the CLI and the tool differ")
	}
	list := mustCLI(t, db, "inner-voice", "sessions")
	if !strings.Contains(list, "* "+id) || !strings.Contains(list, "2 exchanges, 320 tokens") || !strings.Contains(list, "-- 1 session, 2 exchanges (0 refused") {
		t.Fatalf("sessions:\n%s", list)
	}
	show := mustCLI(t, db, "inner-voice", "sessions", "show", id)
	if !strings.Contains(show, "1. ") || !strings.Contains(show, "2. ") || !strings.Contains(show, "grounded, coverage 1.00, 120+40 tokens") {
		t.Fatalf("show:\n%s", show)
	}
	// A scoped call has its own thread; --scope lists it, as the tool does.
	reviewer := memory.Scope{RepoID: "/src/auth", AgentID: "reviewer"}
	scoped := decode[cairn.AskResult](t, mustCLI(t, db, "--json", "inner-voice", "ask", "--no-save", "--mode", "continue", "--scope", "agent=reviewer", "--scope", "repo=/src/auth", q))
	if scoped.Session == nil || !scoped.Session.Created || scoped.Session.SessionID == id || scoped.Session.Scope != reviewer {
		t.Fatalf("a scoped ask: %+v", scoped.Session)
	}
	if canonical(t, mustCLI(t, db, "--json", "inner-voice", "sessions", "--scope", "agent=reviewer")) !=
		canonical(t, mustCLI(t, db, "call", "inner_voice_sessions", `{"scopeIds":{"agentId":"reviewer"}}`)) {
		t.Fatal("sessions --scope: the CLI and the tool differ")
	}
	list = mustCLI(t, db, "inner-voice", "sessions", "--scope", "agent=reviewer")
	if !strings.Contains(list, "* "+scoped.Session.SessionID) || !strings.Contains(list, "repo=/src/auth,agent=reviewer)") ||
		strings.Contains(list, id) || !strings.Contains(list, "-- 1 session, 1 exchange") {
		t.Fatalf("sessions --scope agent=reviewer:\n%s", list)
	}
	if _, errs, code := cli(t, db, "", "inner-voice", "sessions", "--scope", "team=x"); code == 0 || !strings.Contains(errs, "unknown scope key") {
		t.Fatalf("a bad scope: exit %d %s", code, errs)
	}
	// A model that fails: the extractive answer, and why.
	srv.Script(llmtest.Answer{Status: 500})
	text = mustCLI(t, db, "inner-voice", "ask", "--no-save", "--mode", "none", q)
	if !strings.Contains(text, "answered by the extractive synthesiser: the openai model is unavailable: it failed (HTTP 500)") {
		t.Fatalf("degraded:\n%s", text)
	}
	if out := mustCLI(t, db, "inner-voice", "sessions", "delete", id); !strings.Contains(out, "deleted session "+id+" and its 2 exchanges") {
		t.Fatalf("delete: %s", out)
	}
	if _, errs, code := cli(t, db, "", "inner-voice", "sessions", "show", id); code == 0 || !strings.Contains(errs, "not_found") {
		t.Fatalf("show a deleted session: exit %d %s", code, errs)
	}
	// A bad setting stops the command with invalid_params before anything runs.
	t.Setenv("CAIRN_LLM_PROVIDER", "gpt")
	if _, errs, code := cli(t, db, "", "inner-voice", "ask", q); code == 0 || !strings.Contains(errs, "unknown LLM provider") {
		t.Fatalf("a bad provider: exit %d %s", code, errs)
	}
}

// Without a model, a session names its synthesiser alone: "(extractive)".
func TestExtractiveSessionsFromTheCommandLine(t *testing.T) {
	t.Setenv("SURR_ENABLE_INNER_VOICE", "1")
	t.Setenv("SURR_ARCHIVE_DIR", filepath.Join(t.TempDir(), "archive"))
	db := filepath.Join(t.TempDir(), "cairn.db")
	for _, th := range []string{
		"Clock drift breaks session token expiry because the auth-service depends on NTP.",
		"The auth-service uses Redis for session tokens, and clock drift breaks session token expiry.",
	} {
		mustCLI(t, db, "think", "--origin", "human", th)
	}
	res := decode[cairn.AskResult](t, mustCLI(t, db, "--json", "inner-voice", "ask", "--no-save", "--mode", "new_thread", "--topic", "tokens",
		"why does clock drift break session token expiry?"))
	if res.Session == nil {
		t.Fatalf("no session: %+v", res)
	}
	list := mustCLI(t, db, "inner-voice", "sessions")
	show := mustCLI(t, db, "inner-voice", "sessions", "show", res.Session.SessionID)
	if !strings.Contains(list, "(extractive)") || !strings.Contains(show, `"tokens"  (extractive, budget 8000 tokens)`) {
		t.Fatalf("sessions:\n%s\nshow:\n%s", list, show)
	}
}

// CAIRN_LLM_PRICES overrides the price table: cairn config shows the
// entries and the price the model is charged at with its source, a call
// costs that, and a bad entry stops the command naming it.
func TestPriceTableFromTheCommandLine(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Reply: func(p string) string { return llmtest.Quote(p, 2) }})
	t.Setenv("SURR_ENABLE_INNER_VOICE", "1")
	t.Setenv("SURR_ARCHIVE_DIR", filepath.Join(t.TempDir(), "archive"))
	t.Setenv("CAIRN_LLM_PROVIDER", "openai")
	t.Setenv("CAIRN_LLM_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", llmtest.Key)
	t.Setenv("CAIRN_LLM_PRICES", `{"gpt-4o-mini": {"input": 0.2, "output": 0.8}, "my-finetune": "1/4"}`)
	db := filepath.Join(t.TempDir(), "cairn.db")
	cfg := strings.Join(strings.Fields(mustCLI(t, db, "--json", "config")), "")
	for _, want := range []string{`"prices":{"gpt-4o-mini":{"input":0.2,"output":0.8},"my-finetune":{"input":1,"output":4}}`,
		`"modelPrice":{"price":{"input_per_mtok":0.2,"output_per_mtok":0.8},"known":true,"source":"CAIRN_LLM_PRICESgpt-4o-mini"}`} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %s:\n%s", want, cfg)
		}
	}
	if text := mustCLI(t, db, "config"); !strings.Contains(text, "openai, model gpt-4o-mini, window 128000 tokens, $0.2/$0.8 per million tokens in/out (CAIRN_LLM_PRICES gpt-4o-mini); 2 price table entries from CAIRN_LLM_PRICES") {
		t.Errorf("config:\n%s", text)
	}
	for _, th := range []string{
		"Clock drift breaks session token expiry because the auth-service depends on NTP.",
		"The auth-service uses Redis for session tokens, and clock drift breaks session token expiry.",
	} {
		mustCLI(t, db, "think", "--origin", "human", th)
	}
	res := decode[cairn.AskResult](t, mustCLI(t, db, "--json", "inner-voice", "ask", "--no-save", "--context", "thoughts",
		"why does clock drift break session token expiry on the auth-service?"))
	if res.Provenance.Calls != 1 || res.Provenance.CostUSD != (120*0.2+40*0.8)/1e6 {
		t.Fatalf("provenance %+v; want one call at the table's price", res.Provenance)
	}
	t.Setenv("CAIRN_LLM_PRICES", `{"gpt-4o-mini": {"input": 0.2}}`)
	if _, errs, code := cli(t, db, "", "config"); code == 0 || !strings.Contains(errs, `CAIRN_LLM_PRICES: entry "gpt-4o-mini": want both "input" and "output"`) {
		t.Fatalf("a bad table: exit %d %s", code, errs)
	}
}

// The rolling summary excerpt in docs/grounding.md is what cairn makes:
// the same ten thoughts and eleven questions, answered offline, roll the
// summary forward at the eleventh exchange (exchanges 1 to 6 folded, five
// left in the window) into the text the docs show.
func TestRollingSummaryExcerpt(t *testing.T) {
	t.Setenv("SURR_ENABLE_INNER_VOICE", "1")
	t.Setenv("SURR_ARCHIVE_DIR", filepath.Join(t.TempDir(), "archive"))
	db := filepath.Join(t.TempDir(), "cairn.db")
	for _, th := range []string{
		"The auth-service depends on NTP; clock drift breaks session token expiry.",
		"Session token expiry on the auth-service tolerates five seconds of clock drift.",
		"The auth-service keeps session tokens in Redis.",
		"Redis evicts session tokens under memory pressure, which logs users out of the auth-service.",
		"Alice owns the auth-service.",
		"Alice reviews every change to the auth-service's session token expiry.",
		"The billing-service calls payments-api synchronously, which blocks checkout when payments-api is slow.",
		"Checkout blocks when payments-api is slow because the billing-service waits for it.",
		"The staging deploy failed because migration 0042 timed out after 300 seconds.",
		"The staging deploy was fixed by creating the index concurrently and raising the statement timeout to 900 seconds.",
	} {
		mustCLI(t, db, "think", "--origin", "human", th)
	}
	var last cairn.AskResult
	for i, q := range []string{
		"why does clock drift break session token expiry?",
		"how much clock drift does session token expiry tolerate?",
		"where does the auth-service keep session tokens?",
		"who owns the auth-service?",
		"why does checkout block?",
		"what does the billing-service call?",
		"why did the staging deploy fail?",
		"how was the staging deploy fixed?",
		"what does the auth-service depend on?",
		"when does Redis evict session tokens?",
		"what timed out in the staging deploy?",
	} {
		args := []string{"--json", "inner-voice", "ask", "--no-save", "--top-k", "3", "--sim-thresh", "0.3", "--mode", "continue"}
		if i == 0 {
			args = append(args[:len(args)-1], "new_thread", "--topic", "auth-and-deploys")
		}
		last = decode[cairn.AskResult](t, mustCLI(t, db, append(args, q)...))
		if got := last.Session != nil && last.Session.Summarized; got != (i == 10) || last.Refused != (i == 4) {
			t.Fatalf("exchange %d: summarized %v, refused %v; want a summary at the eleventh only, exchange 5 refused: %+v", i+1, got, last.Refused, last.Session)
		}
	}
	if s := last.Session; s.Seq != 11 || s.SummarizedThrough != 6 {
		t.Fatalf("the eleventh exchange's session %+v; want seq 11, summarised through 6", s)
	}
	shown := decode[struct {
		Session       memory.InnerVoiceSession `json:"session"`
		ContextWindow int                      `json:"context_window"`
	}](t, mustCLI(t, db, "--json", "inner-voice", "sessions", "show", last.Session.SessionID))
	sum := shown.Session.Summary
	if shown.ContextWindow != 5 || sum.ExchangesSummarized != 6 || sum.CoverageRatio != 1 || sum.TokenSavings != 187 {
		t.Fatalf("session %+v, window %d; want 6 exchanges summarised (coverage 1, 187 tokens saved), 5 in the window", sum, shown.ContextWindow)
	}
	doc, err := os.ReadFile("../../docs/grounding.md")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := json.Marshal(sum.Text)
	if !strings.Contains(string(doc), `"text": `+string(text)) {
		t.Fatalf("docs/grounding.md does not show the rolling summary cairn makes now:\n%s", text)
	}
}

// With CAIRN_GROUNDING_JUDGE=1 the model judges its answer's claims: a
// claim it finds not stated is taken out of the answer, which the text
// output says, and the JSON (the tool's) lists in grounding.claims, with
// the judge's share in provenance.judge.
func TestGroundingJudgeFromTheCommandLine(t *testing.T) {
	bare := llmtest.Answer{Reply: func(p string) string {
		var answer, cites []string
		for _, s := range llmtest.Sources(p)[:3] {
			_, sent, _ := strings.Cut(s.Text, ": ")
			sent = strings.TrimSuffix(sent, ".")
			answer = append(answer, sent+".")
			cites = append(cites, `{"source_id":"`+s.ID+`","span":"`+sent+`"}`)
		}
		return `{"answer":"` + strings.Join(answer, " ") + `","sources":[` + strings.Join(cites, ",") + `]}`
	}}
	// The judge finds the claim about Redis not stated, and the others
	// entailed by the span they cite.
	judge := llmtest.Answer{Reply: func(p string) string {
		var verdicts []string
		claim := 0
		for _, line := range strings.Split(p, "\n") {
			if strings.HasPrefix(line, "Claim ") {
				claim++
				if strings.Contains(line, "Redis") {
					verdicts = append(verdicts, fmt.Sprintf(`{"claim":%d,"verdict":"not_stated","source_id":"","evidence":""}`, claim))
				}
			} else if l := strings.TrimSpace(line); strings.HasPrefix(l, "[") && len(verdicts) < claim {
				id, span, _ := strings.Cut(strings.TrimPrefix(l, "["), "] ")
				verdicts = append(verdicts, fmt.Sprintf(`{"claim":%d,"verdict":"entailed","source_id":%q,"evidence":%q}`, claim, id, span))
			}
		}
		return `{"verdicts":[` + strings.Join(verdicts, ",") + `]}`
	}}
	srv := llmtest.New(t, llm.ProviderOpenAI, bare)
	t.Setenv("SURR_ENABLE_INNER_VOICE", "1")
	t.Setenv("CAIRN_LLM_PROVIDER", "openai")
	t.Setenv("CAIRN_LLM_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", llmtest.Key)
	t.Setenv("CAIRN_GROUNDING_JUDGE", "1")
	db := filepath.Join(t.TempDir(), "cairn.db")
	ent := decode[memory.KGEntity](t, mustCLI(t, db, "call", "kg_entity_create", `{"name":"auth-service","type":"service"}`))
	for _, f := range []string{
		"Clock drift breaks session token expiry because the auth-service depends on NTP.",
		"The auth-service uses Redis for session tokens, and clock drift breaks session token expiry.",
		"Session token expiry on the auth-service tolerates five seconds of clock drift.",
	} {
		mustCLI(t, db, "call", "kg_observe", `{"entityId":"`+ent.ID+`","content":"`+f+`"}`)
	}
	if cfg := strings.Join(strings.Fields(mustCLI(t, db, "--json", "config")), ""); !strings.Contains(cfg, `"judge":true`) {
		t.Fatalf("config: %s", cfg)
	}
	q := "why does clock drift break session token expiry on the auth-service?"
	for _, args := range [][]string{
		{"--json", "inner-voice", "ask", "--no-save", "--mode", "none", "--top-k", "3", q},
		{"call", "inner_voice", `{"content":"` + q + `","top_k":3,"save":false,"mode":"none"}`},
	} {
		srv.Script(bare, judge)
		res := decode[cairn.AskResult](t, mustCLI(t, db, args...))
		j, g := res.Provenance.Judge, res.Grounding
		removed := slices.IndexFunc(g.Claims, func(c synth.ClaimCheck) bool { return !c.Supported })
		if res.Refused || j == nil || j.Calls != 1 || j.Vetoed != 1 || res.Provenance.Calls != 2 || len(g.Claims) != 3 || removed < 0 ||
			!strings.Contains(g.Claims[removed].Text, "Redis") || strings.Contains(res.SynthesizedAnswer, "Redis") || res.SynthesizedAnswer == "" {
			t.Fatalf("cairn %v: answer %q, claims %+v, judge %+v", args[:3], res.SynthesizedAnswer, g.Claims, j)
		}
	}
	srv.Script(bare, judge)
	text := mustCLI(t, db, "inner-voice", "ask", "--no-save", "--mode", "none", "--top-k", "3", q)
	for _, want := range []string{"removed as unsupported: \"The auth-service uses Redis", "(the grounding judge found the",
		"grounding judge: 1 claim withheld support", "model openai/gpt-4o-mini: 2 call(s), 240+80 tokens"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
}
