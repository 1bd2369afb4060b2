package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/llmtest"
	"github.com/cairnhq/cairn/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// groundedProviders are the four wire formats cairn speaks, each with
// the environment that points cairn serve at its fake, the header its key
// travels in and what asks the model for JSON in its request.
var groundedProviders = []struct {
	provider, path, keyVar, keyHeader, keyPrefix, jsonField string
}{
	{llm.ProviderOpenAI, "/v1", "OPENAI_API_KEY", "Authorization", "Bearer ", `"json_schema"`},
	{llm.ProviderOllama, "", "OLLAMA_API_KEY", "Authorization", "Bearer ", `"format"`},
	{llm.ProviderGemini, "/v1beta", "GEMINI_API_KEY", "x-goog-api-key", "", `"responseJsonSchema"`},
	{llm.ProviderAnthropic, "/v1", "ANTHROPIC_API_KEY", "x-api-key", "", `"tool_choice"`},
}

// TestServeAnswersWithAGroundedModel runs the real `cairn serve`
// configured by its environment with a language model: for each wire
// format (OpenAI chat completions, Ollama's /api/chat, Gemini
// generateContent, Anthropic Messages) a fake server this test starts (no
// network). An agent asks through MCP (streamable HTTP, the official Go
// SDK's client): the model answers from the knowledge graph, cairn checks
// and returns the grounding contract, records the session, refuses an
// ungrounded answer, answers extractively when the model fails, and counts
// it all on /metrics; the key never shows.
func TestServeAnswersWithAGroundedModel(t *testing.T) {
	for _, p := range groundedProviders {
		t.Run(p.provider, func(t *testing.T) {
			var mu sync.Mutex
			var prompts []string
			fake := llmtest.New(t, p.provider, llmtest.Answer{Reply: func(q string) string {
				mu.Lock()
				prompts = append(prompts, q)
				mu.Unlock()
				return llmtest.Quote(q, 2)
			}})
			serveGrounded(t, fake, p.path, p.keyVar, func() []string {
				mu.Lock()
				defer mu.Unlock()
				return slices.Clone(prompts)
			}, func(req llmtest.Request) bool {
				return req.Header.Get(p.keyHeader) == p.keyPrefix+llmtest.Key && strings.Contains(string(req.Raw), p.jsonField)
			})
		})
	}
}

// serveGrounded is TestServeAnswersWithAGroundedModel for one provider:
// cairn serve pointed at fake (its base URL the fake's plus path, the key
// in keyVar); prompts returns what the model was asked so far, and good
// says whether a request carried the key and the JSON format as the
// provider takes them.
func serveGrounded(t *testing.T, fake *llmtest.Server, path, keyVar string, prompts func() []string, good func(llmtest.Request) bool) {
	dir := t.TempDir()
	base, logs := serveLogged(t, filepath.Join(dir, "cairn.db"), "SURR_ENABLE_INNER_VOICE=1", "SURR_ARCHIVE_DIR="+filepath.Join(dir, "archive"),
		"CAIRN_LLM_PROVIDER="+fake.Provider, "CAIRN_LLM_MODEL="+fake.Model, "CAIRN_LLM_URL="+fake.URL+path, keyVar+"="+llmtest.Key,
		"CAIRN_LLM_RETRIES=0")

	ctx, cancel := context.WithTimeout(context.Background(), stuck)
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
		ans.Session == nil || !ans.Session.Created || ans.Session.Topic != "session tokens" || ans.Provenance.Model != fake.Model ||
		ans.Provenance.Provider != fake.Provider {
		t.Fatalf("inner_voice: %+v", ans)
	}
	for _, c := range g.Sources {
		if c.SourceType != "kg_observation" || c.Span == "" || c.Relevance <= 0 {
			t.Fatalf("citation %+v", c)
		}
	}
	req := fake.Requests()[0]
	if !good(req) || strings.Contains(prompts()[0], "NTP is to blame") {
		t.Fatalf("the model's request: %v %s", req.Header, req.Raw)
	}

	// The next question continues the thread: the model sees the first
	// exchange as context.
	call("inner_voice", map[string]any{"content": "and what does the auth-service use Redis for?", "sim_thresh": 0.3}, &ans)
	if ans.Session == nil || ans.Session.Seq != 2 || ans.Session.Created {
		t.Fatalf("the second exchange: %+v", ans.Session)
	}
	if ps := prompts(); !strings.Contains(ps[len(ps)-1], "Topic: session tokens") || !strings.Contains(ps[len(ps)-1], "Q: "+q) {
		t.Fatalf("the second prompt carries no conversation:\n%s", ps[len(ps)-1])
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
