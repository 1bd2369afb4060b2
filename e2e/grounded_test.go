package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/llmtest"
	"github.com/cairnhq/cairn/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeAnswersWithAGroundedModel runs the real `cairn serve`
// configured by its environment with a language model: a fake OpenAI
// server this test starts (the chat completions wire format, no network).
// An agent asks through MCP (streamable HTTP, the official Go SDK's
// client): the model answers from the knowledge graph, cairn checks and
// returns the grounding contract, records the session, refuses an
// ungrounded answer, answers extractively when the model fails, and counts
// it all on /metrics; the key never shows.
func TestServeAnswersWithAGroundedModel(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	fake := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Reply: func(p string) string {
		mu.Lock()
		prompts = append(prompts, p)
		mu.Unlock()
		return llmtest.Quote(p, 2)
	}})
	dir := t.TempDir()
	base, logs := serveLogged(t, filepath.Join(dir, "cairn.db"), "SURR_ENABLE_INNER_VOICE=1", "SURR_ARCHIVE_DIR="+filepath.Join(dir, "archive"),
		"CAIRN_LLM_PROVIDER=openai", "CAIRN_LLM_URL="+fake.URL+"/v1", "OPENAI_API_KEY="+llmtest.Key, "CAIRN_LLM_RETRIES=0")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	call := func(name string, args map[string]any, out any) *mcp.CallToolResult {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out != nil {
			if res.IsError {
				t.Fatalf("%s: %+v", name, res.Content)
			}
			b, _ := json.Marshal(res.StructuredContent)
			// A fresh value each time: fields a result omits must not keep
			// the last one's.
			v := reflect.ValueOf(out).Elem()
			v.Set(reflect.Zero(v.Type()))
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatal(err)
			}
		}
		return res
	}

	var ent struct{ ID string }
	call("kg_entity_create", map[string]any{"name": "auth-service", "type": "service"}, &ent)
	for _, f := range []string{
		"Clock drift breaks session token expiry because the auth-service depends on NTP.",
		"The auth-service uses Redis for session tokens, and clock drift breaks session token expiry.",
		"Session token expiry on the auth-service tolerates five seconds of clock drift.",
	} {
		call("kg_observe", map[string]any{"entityId": ent.ID, "content": f}, &struct{}{})
	}
	call("think", map[string]any{"content": "Clock drift breaks session token expiry; I think NTP is to blame.", "origin": "model"}, &struct{}{})
	q := "why does clock drift break session token expiry on the auth-service?"

	var ans cairn.AskResult
	call("inner_voice", map[string]any{"content": q, "mode": "new_thread", "topic": "session tokens"}, &ans)
	g := ans.Grounding
	if ans.Synthesizer != "grounded" || ans.Refused || g.Refused || g.CoverageRatio != 1 || len(g.Sources) != 2 || ans.SavedThoughtID == "" ||
		ans.Session == nil || !ans.Session.Created || ans.Session.Topic != "session tokens" || ans.Provenance.Model != "gpt-4o-mini" {
		t.Fatalf("inner_voice: %+v", ans)
	}
	for _, c := range g.Sources {
		if c.SourceType != "kg_observation" || c.Span == "" || c.Relevance <= 0 {
			t.Fatalf("citation %+v", c)
		}
	}
	req := fake.Requests()[0]
	if req.Header.Get("Authorization") != "Bearer "+llmtest.Key || !strings.Contains(string(req.Raw), `"json_schema"`) ||
		strings.Contains(prompts[0], "NTP is to blame") {
		t.Fatalf("the model's request: %s", req.Raw)
	}

	// The next question continues the thread: the model sees the first
	// exchange as context.
	call("inner_voice", map[string]any{"content": "and what does the auth-service use Redis for?", "sim_thresh": 0.3}, &ans)
	if ans.Session == nil || ans.Session.Seq != 2 || ans.Session.Created {
		t.Fatalf("the second exchange: %+v", ans.Session)
	}
	if last := prompts[len(prompts)-1]; !strings.Contains(last, "Topic: session tokens") || !strings.Contains(last, "Q: "+q) {
		t.Fatalf("the second prompt carries no conversation:\n%s", last)
	}

	// An answer that adds what no source says is refused.
	fake.Script(llmtest.Answer{Reply: func(p string) string {
		return llmtest.Quote(p, 1, "The auth-service was rewritten in Rust in 2019.", "Bob turned NTP off in March.")
	}})
	call("inner_voice", map[string]any{"content": q, "save": false, "mode": "continue"}, &ans)
	if !ans.Refused || ans.SynthesizedAnswer != "" || ans.Grounding.Answer != "Insufficient grounding in available sources." || ans.Grounding.Notes == "" {
		t.Fatalf("ungrounded: %+v", ans.Grounding)
	}
	// A failing model: the extractive answer, with the reason.
	fake.Script(llmtest.Answer{Status: 500})
	call("inner_voice", map[string]any{"content": q, "save": false, "mode": "continue"}, &ans)
	if ans.Synthesizer != "extractive" || ans.Refused || ans.Provenance.DegradedFrom != "grounded" ||
		!strings.Contains(ans.Provenance.DegradedReason, "HTTP 500") || strings.Contains(ans.Provenance.DegradedReason, fake.URL) {
		t.Fatalf("degraded: %+v %+v", ans.Provenance, ans.Grounding)
	}

	var list cairn.VoiceSessionList
	call("inner_voice_sessions", map[string]any{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].TotalExchanges != 4 || list.Totals.Refused != 1 || list.Totals.Degraded != 1 || !list.Sessions[0].Active {
		t.Fatalf("sessions: %+v", list)
	}
	var view cairn.VoiceSessionView
	call("inner_voice_session", map[string]any{"session_id": list.Sessions[0].ID}, &view)
	if len(view.Exchanges) != 4 || len(view.Exchanges[0].PromptHash) != 64 || view.Exchanges[0].PromptTokens != 120 {
		t.Fatalf("session: %+v", view)
	}
	if res := call("inner_voice", map[string]any{"content": q, "mode": "sometimes"}, nil); !res.IsError || res.Meta["cairn/code"] != "invalid_params" {
		t.Fatalf("a bad mode: %+v", res)
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`cairn_inner_voice_calls_total{synthesizer="grounded",outcome="answered"} 2`,
		`cairn_inner_voice_calls_total{synthesizer="grounded",outcome="refused"} 1`, `cairn_inner_voice_degraded_total 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	call("inner_voice_session_delete", map[string]any{"session_id": list.Sessions[0].ID}, &struct{}{})
	session.Close()
	for {
		select {
		case line := <-logs:
			if strings.Contains(line, llmtest.Key) {
				t.Fatalf("the key is in the server's log: %s", line)
			}
			continue
		default:
		}
		break
	}
}
