// Package llmtest serves fake language-model providers for tests: an
// httptest server per provider that speaks its real wire format (the
// request and answer shapes of each API's public reference, recorded in
// llm/testdata), checks what a client sends (path, method, auth header,
// the body's required fields) and answers from a script: good or
// ungrounded answers, malformed ones, slow ones that never come, 429s with
// Retry-After, 5xx, refusals.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/llm"
)

// Key is the API key every fake expects. It is long and distinctive so a
// test can search anything a caller or a log saw for it.
const Key = "sk-cairn-test-7f3a9c2e4b1d8f6a0e5c3b9d7a1f4e2c"

// Answer is one scripted answer.
type Answer struct {
	// Text is the model's answer text (for Anthropic with a tool, the
	// JSON the tool is called with).
	Text string
	// Status, when set, answers with this HTTP status and the provider's
	// error body instead.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header (and, for
	// Gemini, as a RetryInfo retryDelay in seconds).
	RetryAfter string
	// Hang answers nothing until the client gives up.
	Hang bool
	// Raw, when set, is sent as the whole body with status 200.
	Raw string
	// Finish, when set, is the provider's own finish reason (stop,
	// length, content_filter / MAX_TOKENS, SAFETY / max_tokens, refusal).
	Finish string
	// Refusal makes an OpenAI answer a refusal (message.refusal set,
	// content null).
	Refusal string
	// NoUsage leaves token usage out of the answer.
	NoUsage bool
	// Reply, when set, makes Text from the request's last user message
	// (whatever the provider's shape): a model that reads its prompt.
	Reply func(prompt string) string
}

// Request is one request a fake received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Server is a fake provider.
type Server struct {
	*httptest.Server
	Provider string
	Model    string

	mu       sync.Mutex
	script   []Answer
	requests []Request
	// Waits are the retry waits a client made through Settings().Sleep.
	waits []time.Duration
	t     testing.TB
}

// New starts a fake provider (llm.ProviderOpenAI and the OpenAI-compatible
// names, ProviderOllama, ProviderGemini or ProviderAnthropic) that answers
// the script in order; the last answer repeats. It stops with the test.
func New(t testing.TB, provider string, script ...Answer) *Server {
	t.Helper()
	if len(script) == 0 {
		t.Fatal("llmtest.New: empty script")
	}
	s := &Server{Provider: provider, Model: model(provider), script: script, t: t}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func model(provider string) string {
	switch provider {
	case llm.ProviderAnthropic:
		return "claude-sonnet-4-5"
	case llm.ProviderGemini:
		return "gemini-2.5-flash"
	case llm.ProviderOpenAI:
		return "gpt-4o-mini"
	}
	return "llama3.2"
}

// Settings are a client's settings for this server: its URL, the key, a
// timeout of 30s (no answer of the fake's misses it, however loaded the
// machine; a test of a model that never answers sets a short one), 2
// retries and a Sleep that records the wait and returns at once.
func (s *Server) Settings() llm.Settings {
	base := s.URL + "/v1"
	switch s.Provider {
	case llm.ProviderOllama:
		base = s.URL
	case llm.ProviderGemini:
		base = s.URL + "/v1beta"
	}
	return llm.Settings{
		Provider: s.Provider, Model: s.Model, BaseURL: base, APIKey: llm.Secret(Key),
		Timeout: 30 * time.Second, Retries: 2, ContextWindow: 32_000,
		Sleep: func(ctx context.Context, d time.Duration) error {
			s.mu.Lock()
			s.waits = append(s.waits, d)
			s.mu.Unlock()
			return ctx.Err()
		},
	}
}

// Script replaces the answers still to come.
func (s *Server) Script(script ...Answer) {
	if len(script) == 0 {
		s.t.Fatal("llmtest: empty script")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Waits returns the retry waits clients made with Settings().Sleep.
func (s *Server) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

func (s *Server) next() Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.script[0]
	if len(s.script) > 1 {
		s.script = s.script[1:]
	}
	return a
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		s.fail(w, http.StatusBadRequest, "the body is not a JSON object")
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
	s.mu.Unlock()
	if problem := s.check(r, body); problem != "" {
		s.t.Errorf("llmtest %s: bad request: %s", s.Provider, problem)
		s.fail(w, http.StatusBadRequest, problem)
		return
	}
	a := s.next()
	if a.Reply != nil {
		a.Text = a.Reply(LastUserMessage(s.Provider, body))
	}
	switch {
	case a.Hang:
		<-r.Context().Done()
		return
	case a.Raw != "":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, a.Raw)
		return
	case a.Status != 0:
		if a.RetryAfter != "" {
			w.Header().Set("Retry-After", a.RetryAfter)
		}
		s.fail(w, a.Status, fmt.Sprintf("scripted failure; your key %s was received", Key))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.answer(body, a))
}

// check returns what is wrong with a request, or "".
func (s *Server) check(r *http.Request, body map[string]any) string {
	if r.Method != http.MethodPost {
		return "method " + r.Method
	}
	if strings.Contains(r.URL.RawQuery, Key) {
		return "the key is in the URL"
	}
	if r.Header.Get("Content-Type") != "application/json" {
		return "content type " + r.Header.Get("Content-Type")
	}
	str := func(k string) bool { v, ok := body[k].(string); return ok && v != "" }
	msgs := func(k string) bool {
		list, ok := body[k].([]any)
		if !ok || len(list) == 0 {
			return false
		}
		for _, m := range list {
			mm, ok := m.(map[string]any)
			if !ok {
				return false
			}
			if _, ok := mm["role"].(string); !ok {
				return false
			}
			if _, ok := mm["content"].(string); !ok {
				return false
			}
		}
		return true
	}
	switch s.Provider {
	case llm.ProviderAnthropic:
		switch {
		case r.URL.Path != "/v1/messages":
			return "path " + r.URL.Path
		case r.Header.Get("x-api-key") != Key:
			return "x-api-key header"
		case r.Header.Get("anthropic-version") == "":
			return "no anthropic-version header"
		case r.Header.Get("Authorization") != "":
			return "an Authorization header"
		case !str("model") || !msgs("messages"):
			return "model or messages"
		}
		if _, ok := body["max_tokens"].(float64); !ok {
			return "max_tokens is required"
		}
		for _, m := range body["messages"].([]any) {
			mm := m.(map[string]any)
			if mm["role"] == "system" {
				return "a system message (system is a top-level field)"
			}
			if strings.TrimSpace(mm["content"].(string)) == "" {
				return "a message with empty content"
			}
		}
	case llm.ProviderGemini:
		want := "/v1beta/models/" + s.Model + ":generateContent"
		switch {
		case r.URL.Path != want:
			return "path " + r.URL.Path
		case r.Header.Get("x-goog-api-key") != Key:
			return "x-goog-api-key header"
		}
		contents, ok := body["contents"].([]any)
		if !ok || len(contents) == 0 {
			return "contents"
		}
		for _, c := range contents {
			cm, _ := c.(map[string]any)
			role, _ := cm["role"].(string)
			parts, _ := cm["parts"].([]any)
			if (role != "user" && role != "model") || len(parts) == 0 {
				return "a content without role user/model or parts"
			}
		}
	case llm.ProviderOllama:
		switch {
		case r.URL.Path != "/api/chat":
			return "path " + r.URL.Path
		case !str("model") || !msgs("messages"):
			return "model or messages"
		case body["stream"] != false:
			return "stream must be false"
		}
	default:
		switch {
		case r.URL.Path != "/v1/chat/completions":
			return "path " + r.URL.Path
		case r.Header.Get("Authorization") != "Bearer "+Key:
			return "Authorization header"
		case !str("model") || !msgs("messages"):
			return "model or messages"
		}
	}
	return ""
}

// answer is the provider's success body for a.
func (s *Server) answer(req map[string]any, a Answer) any {
	fin := func(def string) string {
		if a.Finish != "" {
			return a.Finish
		}
		return def
	}
	switch s.Provider {
	case llm.ProviderAnthropic:
		block := map[string]any{"type": "text", "text": a.Text}
		stop := fin("end_turn")
		if tc, ok := req["tool_choice"].(map[string]any); ok && json.Valid([]byte(a.Text)) {
			block = map[string]any{"type": "tool_use", "id": "toolu_01", "name": tc["name"], "input": json.RawMessage(a.Text)}
			stop = fin("tool_use")
		}
		out := map[string]any{"id": "msg_01", "type": "message", "role": "assistant", "model": s.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil}
		if !a.NoUsage {
			out["usage"] = map[string]any{"input_tokens": 120, "output_tokens": 40}
		}
		return out
	case llm.ProviderGemini:
		out := map[string]any{
			"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": a.Text}}},
				"finishReason": fin("STOP"), "index": 0}},
			"modelVersion": s.Model, "responseId": "resp-01",
		}
		if !a.NoUsage {
			out["usageMetadata"] = map[string]any{"promptTokenCount": 120, "candidatesTokenCount": 40, "totalTokenCount": 160}
		}
		return out
	case llm.ProviderOllama:
		out := map[string]any{"model": s.Model, "created_at": "2025-06-01T10:00:00Z",
			"message": map[string]any{"role": "assistant", "content": a.Text}, "done": true, "done_reason": fin("stop"),
			"total_duration": 5191566416}
		if !a.NoUsage {
			out["prompt_eval_count"], out["eval_count"] = 120, 40
		}
		return out
	}
	msg := map[string]any{"role": "assistant", "content": a.Text, "refusal": nil}
	if a.Refusal != "" {
		msg["content"], msg["refusal"] = nil, a.Refusal
	}
	out := map[string]any{"id": "chatcmpl-01", "object": "chat.completion", "created": 1748772000, "model": s.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": fin("stop")}}}
	if !a.NoUsage {
		out["usage"] = map[string]any{"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160}
	}
	return out
}

// fail answers status with the provider's error body, which quotes the
// key (as some providers do) so tests can check it never leaks.
func (s *Server) fail(w http.ResponseWriter, status int, msg string) {
	var body any
	switch s.Provider {
	case llm.ProviderAnthropic:
		typ := "api_error"
		switch status {
		case 429:
			typ = "rate_limit_error"
		case 529:
			typ = "overloaded_error"
		case 401:
			typ = "authentication_error"
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	case llm.ProviderGemini:
		e := map[string]any{"code": status, "message": msg, "status": http.StatusText(status)}
		if status == 429 {
			e["status"] = "RESOURCE_EXHAUSTED"
		}
		body = map[string]any{"error": e}
	case llm.ProviderOllama:
		body = map[string]any{"error": msg}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": "requests", "param": nil, "code": "rate_limit_exceeded"}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// LastUserMessage is the text of a request's last user message, in the
// provider's shape (Gemini's contents and parts, the others' messages).
func LastUserMessage(provider string, body map[string]any) string {
	key, text := "messages", func(m map[string]any) string { s, _ := m["content"].(string); return s }
	if provider == llm.ProviderGemini {
		key = "contents"
		text = func(m map[string]any) string {
			var b strings.Builder
			parts, _ := m["parts"].([]any)
			for _, p := range parts {
				if pm, ok := p.(map[string]any); ok {
					s, _ := pm["text"].(string)
					b.WriteString(s)
				}
			}
			return b.String()
		}
	}
	list, _ := body[key].([]any)
	for i := len(list) - 1; i >= 0; i-- {
		m, _ := list[i].(map[string]any)
		if role, _ := m["role"].(string); role == "user" {
			return text(m)
		}
	}
	return ""
}

// PromptSource is a source as a grounded prompt lists it: "[id] (type)
// text".
type PromptSource struct {
	ID, Type, Text string
}

var sourceLine = regexp.MustCompile(`^\[([^\]]+)\] \(([^)]+)\) (.*)$`)

// Sources reads the sources a grounded prompt lists, in order.
func Sources(prompt string) []PromptSource {
	var out []PromptSource
	in := false
	for _, line := range strings.Split(prompt, "\n") {
		switch {
		case line == "Sources:":
			in = true
		case strings.HasPrefix(line, "Question: "):
			in = false
		case in:
			if m := sourceLine.FindStringSubmatch(line); m != nil {
				out = append(out, PromptSource{ID: m[1], Type: m[2], Text: m[3]})
			}
		}
	}
	return out
}

// Quote answers a grounded prompt as a careful model would: the first
// sentence of each of its first n sources, each cited with that sentence
// as the span, as the JSON the grounded schema asks for; extra sentences,
// when given, are appended to the answer uncited (a model adding claims
// of its own).
func Quote(prompt string, n int, extra ...string) string {
	type cite struct {
		SourceID string `json:"source_id"`
		Span     string `json:"span"`
	}
	var answer []string
	cites := []cite{}
	for _, s := range Sources(prompt) {
		if len(cites) == n {
			break
		}
		sent := s.Text
		if i := strings.Index(sent, ". "); i >= 0 {
			sent = sent[:i+1]
		}
		answer = append(answer, sent)
		cites = append(cites, cite{SourceID: s.ID, Span: strings.TrimSuffix(sent, ".")})
	}
	b, _ := json.Marshal(map[string]any{"answer": strings.Join(append(answer, extra...), " "), "sources": cites})
	return string(b)
}
