package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeModel is a model provider's API on loopback for an agent's CLI to
// talk to instead of the real one: it records every request; what it
// answers is decided by the function its constructor is given
// (newFakeAnthropic, newFakeGemini).
type fakeModel struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []modelRequest
}

// modelRequest is one request the fake received.
type modelRequest struct {
	Method, Path string
	Body         string
}

func (f *fakeModel) record(r *http.Request) modelRequest {
	body, _ := io.ReadAll(r.Body)
	req := modelRequest{Method: r.Method, Path: r.URL.Path, Body: string(body)}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return req
}

// requests returns the requests received so far.
func (f *fakeModel) requests() []modelRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]modelRequest(nil), f.reqs...)
}

// dump describes the requests received, for a failure's message.
func (f *fakeModel) dump() string {
	var b strings.Builder
	for i, r := range f.requests() {
		body := r.Body
		if len(body) > 600 {
			body = body[:300] + " … " + body[len(body)-300:]
		}
		fmt.Fprintf(&b, "#%d %s %s %s\n", i, r.Method, r.Path, body)
	}
	return b.String()
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
}

func (s sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// anthropicTurn is what the fake Anthropic API answers with: text, or a
// tool call.
type anthropicTurn struct {
	text      string
	toolName  string
	toolInput map[string]any
}

// anthropicRequest is the part of a Messages API request the fake reads.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// hasTool says the request offers the model the named tool.
func (a anthropicRequest) hasTool(name string) bool {
	for _, t := range a.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// toolResults says a message of the conversation holds a tool's result.
func (a anthropicRequest) toolResults() bool {
	for _, m := range a.Messages {
		if strings.Contains(string(m.Content), `"tool_result"`) {
			return true
		}
	}
	return false
}

// newFakeAnthropic starts a fake of Anthropic's Messages API (streamed
// and not) on loopback; answer decides each turn.
func newFakeAnthropic(t *testing.T, answer func(anthropicRequest, string) anthropicTurn) *fakeModel {
	f := &fakeModel{}
	var n int
	var nmu sync.Mutex
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := f.record(r)
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"input_tokens": 1200}`)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages"):
			var ar anthropicRequest
			if err := json.Unmarshal([]byte(req.Body), &ar); err != nil {
				http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad JSON"}}`, http.StatusBadRequest)
				return
			}
			nmu.Lock()
			n++
			id := n
			nmu.Unlock()
			writeAnthropic(w, ar, answer(ar, req.Body), id)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"type":"error","error":{"type":"not_found_error","message":"not in the fake"}}`)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// writeAnthropic answers a Messages API request with one turn, as a
// stream of server-sent events when the request asked for one.
func writeAnthropic(w http.ResponseWriter, ar anthropicRequest, turn anthropicTurn, n int) {
	model := ar.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	msgID := fmt.Sprintf("msg_fake%04d", n)
	var block map[string]any
	stop := "end_turn"
	if turn.toolName != "" {
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake%04d", n), "name": turn.toolName, "input": turn.toolInput}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": turn.text}
	}
	usage := map[string]any{"input_tokens": 1200, "output_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !ar.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	s := sse{w}
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message",
		"role": "assistant", "model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1200, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	if turn.toolName != "" {
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": turn.toolName, "input": map[string]any{}}
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		input, _ := json.Marshal(turn.toolInput)
		// The input arrives in pieces, as the real API sends it.
		for _, part := range splitIn(string(input), 3) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
	} else {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range splitIn(turn.text, 3) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": part}})
		}
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 40}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// splitIn cuts s into n pieces (the last takes the rest).
func splitIn(s string, n int) []string {
	if len(s) < n {
		return []string{s}
	}
	var out []string
	size := len(s) / n
	for i := 0; i < n-1; i++ {
		out = append(out, s[i*size:(i+1)*size])
	}
	return append(out, s[(n-1)*size:])
}

// geminiTurn is what the fake Gemini API answers with: text, or a
// function call.
type geminiTurn struct {
	text     string
	callName string
	callArgs map[string]any
}

// geminiRequest is the part of a generateContent request the fake reads.
type geminiRequest struct {
	Contents []struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// hasFunction says the request offers the model the named function.
func (g geminiRequest) hasFunction(name string) bool {
	for _, t := range g.Tools {
		for _, f := range t.FunctionDeclarations {
			if f.Name == name {
				return true
			}
		}
	}
	return false
}

// functionResponses says the conversation holds a function's result.
func (g geminiRequest) functionResponses() bool {
	for _, c := range g.Contents {
		for _, p := range c.Parts {
			if strings.Contains(string(p), `"functionResponse"`) {
				return true
			}
		}
	}
	return false
}

// newFakeGemini starts a fake of the Gemini API's generateContent,
// streamGenerateContent and countTokens on loopback; answer decides each
// turn from the request and the model it names.
func newFakeGemini(t *testing.T, answer func(g geminiRequest, model, body string) geminiTurn) *fakeModel {
	f := &fakeModel{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := f.record(r)
		path := r.URL.Path
		i := strings.LastIndex(path, "/models/")
		colon := strings.LastIndexByte(path, ':')
		if r.Method != http.MethodPost || i < 0 || colon < i {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"code":404,"message":"not in the fake","status":"NOT_FOUND"}}`)
			return
		}
		model, method := path[i+len("/models/"):colon], path[colon+1:]
		var g geminiRequest
		json.Unmarshal([]byte(req.Body), &g)
		switch method {
		case "countTokens":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"totalTokens": 1200}`)
		case "generateContent", "streamGenerateContent":
			writeGemini(w, model, answer(g, model, req.Body), method == "streamGenerateContent")
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// writeGemini answers with one turn: a response, or for a stream the
// same response as server-sent events.
func writeGemini(w http.ResponseWriter, model string, turn geminiTurn, stream bool) {
	part := map[string]any{"text": turn.text}
	if turn.callName != "" {
		part = map[string]any{"functionCall": map[string]any{"name": turn.callName, "args": turn.callArgs}}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 1200, "candidatesTokenCount": 40, "totalTokenCount": 1240},
		"modelVersion":  model,
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	b, _ := json.Marshal(resp)
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
