package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/internal/llmtest"
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/memory"
)

// allProviders are the provider names a fake speaks, OpenAI-compatible
// servers included.
var allProviders = []string{llm.ProviderOpenAI, llm.ProviderOllamaOpenAI, llm.ProviderVLLM, llm.ProviderLlamaCpp,
	llm.ProviderLMStudio, llm.ProviderOllama, llm.ProviderGemini, llm.ProviderAnthropic}

var schema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`)

func prompt(q string) llm.Prompt {
	return llm.Prompt{System: "Answer from the sources given.", Messages: []llm.Message{{Role: llm.RoleUser, Content: q}}}
}

func client(t *testing.T, s llm.Settings) llm.Client {
	t.Helper()
	c, err := llm.New(s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// leaks reports what of the provider's a caller-facing text holds: the
// key (whole or its ends), the fake's address, or its error body.
func leaks(s *llmtest.Server, text string) []string {
	var out []string
	u, _ := url.Parse(s.URL)
	for what, needle := range map[string]string{"key": llmtest.Key, "key start": llmtest.Key[:12], "key end": llmtest.Key[len(llmtest.Key)-10:],
		"host": u.Host, "address": s.URL, "body": "scripted failure", "path": "/chat/completions"} {
		if strings.Contains(text, needle) {
			out = append(out, what)
		}
	}
	return out
}

// Every provider answers through its own wire format; the client sends
// the fields its API requires and reads the answer, the usage and the
// finish reason back.
func TestEveryProviderSpeaksItsWireFormat(t *testing.T) {
	for _, p := range allProviders {
		t.Run(p, func(t *testing.T) {
			srv := llmtest.New(t, p, llmtest.Answer{Text: `{"answer":"Alice moved to Lisbon."}`})
			temp := 0.0
			res, err := client(t, srv.Settings()).Synthesize(context.Background(), prompt("Where did Alice move?"),
				llm.Config{Schema: schema, Temperature: &temp, MaxOutputTokens: 300})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != `{"answer":"Alice moved to Lisbon."}` || res.FinishReason != llm.FinishStop || res.Attempts != 1 {
				t.Fatalf("response %+v", res)
			}
			if !res.UsageReported || res.PromptTokens != 120 || res.CompletionTokens != 40 {
				t.Fatalf("usage %+v", res)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			body := reqs[0].Body
			switch p {
			case llm.ProviderAnthropic:
				if body["system"] != "Answer from the sources given." || body["max_tokens"] != 300.0 || body["temperature"] != 0.0 {
					t.Fatalf("anthropic body %s", reqs[0].Raw)
				}
				tc := body["tool_choice"].(map[string]any)
				tools := body["tools"].([]any)
				if tc["type"] != "tool" || tc["name"] != "answer" || tools[0].(map[string]any)["input_schema"] == nil {
					t.Fatalf("anthropic schema as a forced tool: %s", reqs[0].Raw)
				}
			case llm.ProviderGemini:
				gc := body["generationConfig"].(map[string]any)
				if gc["responseMimeType"] != "application/json" || gc["responseJsonSchema"] == nil || gc["maxOutputTokens"] != 300.0 {
					t.Fatalf("gemini body %s", reqs[0].Raw)
				}
				if body["systemInstruction"] == nil {
					t.Fatalf("gemini system instruction missing: %s", reqs[0].Raw)
				}
			case llm.ProviderOllama:
				opts := body["options"].(map[string]any)
				if body["format"] == nil || opts["num_ctx"] != 32000.0 || opts["num_predict"] != 300.0 {
					t.Fatalf("ollama body %s", reqs[0].Raw)
				}
			default:
				rf := body["response_format"].(map[string]any)
				if rf["type"] != "json_schema" || rf["json_schema"].(map[string]any)["name"] != "answer" {
					t.Fatalf("response_format %s", reqs[0].Raw)
				}
				msgs := body["messages"].([]any)
				if msgs[0].(map[string]any)["role"] != "system" {
					t.Fatalf("system message first: %s", reqs[0].Raw)
				}
				tokens := "max_tokens"
				if p == llm.ProviderOpenAI {
					tokens = "max_completion_tokens"
				}
				if body[tokens] != 300.0 {
					t.Fatalf("%s: %s", tokens, reqs[0].Raw)
				}
			}
		})
	}
}

// The client's requests have every field, with the same JSON type, of
// the request examples in testdata (taken from each API's reference).
func TestRequestsMatchDocumentedShape(t *testing.T) {
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderOllama, llm.ProviderGemini, llm.ProviderAnthropic} {
		t.Run(p, func(t *testing.T) {
			var want any
			readJSON(t, "testdata/"+p+".request.json", &want)
			srv := llmtest.New(t, p, llmtest.Answer{Text: `{"answer":"x"}`})
			temp := 0.0
			c := client(t, srv.Settings())
			if _, err := c.Synthesize(context.Background(), prompt("Where did Alice move?"), llm.Config{Schema: schema, Temperature: &temp, MaxOutputTokens: 512}); err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(srv.Requests()[0].Raw, &got); err != nil {
				t.Fatal(err)
			}
			sameShape(t, "body", want, got)
		})
	}
}

func readJSON(t *testing.T, path string, v any) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return b
}

// sameShape fails unless got has every key of want, recursively, with the
// same JSON type (arrays compared by their first element).
func sameShape(t *testing.T, path string, want, got any) {
	t.Helper()
	kind := func(v any) string { return fmt.Sprintf("%T", v) }
	if kind(want) != kind(got) {
		t.Errorf("%s: want a %s, got a %s", path, kind(want), kind(got))
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k, v := range w {
			gv, ok := g[k]
			if !ok {
				t.Errorf("%s.%s: missing", path, k)
				continue
			}
			sameShape(t, path+"."+k, v, gv)
		}
	case []any:
		g := got.([]any)
		if len(w) > 0 && len(g) > 0 {
			sameShape(t, path+"[0]", w[0], g[0])
		}
	}
}

// The documented answers in testdata decode into the answer, the usage
// (Gemini's thinking tokens billed as output) and the finish reason.
func TestDecodesDocumentedAnswers(t *testing.T) {
	cases := []struct {
		provider, file string
		schema         bool
		text           string
		in, out        int
	}{
		{llm.ProviderOpenAI, "openai.response.json", true, `{"answer":"Alice moved to Lisbon."}`, 19, 10},
		{llm.ProviderOllama, "ollama.response.json", true, `{"answer": "Alice moved to Lisbon."}`, 26, 12},
		{llm.ProviderGemini, "gemini.response.json", true, `{"answer": "Alice moved to Lisbon."}`, 17, 35},
		{llm.ProviderAnthropic, "anthropic.response.json", false, "Alice moved to Lisbon.", 21, 9},
		{llm.ProviderAnthropic, "anthropic.tool.response.json", true, `{"answer": "Alice moved to Lisbon."}`, 410, 35},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			body := readJSON(t, "testdata/"+tc.file, nil)
			srv := rawServer(t, func(w http.ResponseWriter) { _, _ = w.Write(body) })
			s := settingsFor(tc.provider, srv.URL)
			cfg := llm.Config{}
			if tc.schema {
				cfg.Schema = schema
			}
			res, err := client(t, s).Synthesize(context.Background(), prompt("Where did Alice move?"), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tc.text || res.PromptTokens != tc.in || res.CompletionTokens != tc.out || res.FinishReason != llm.FinishStop {
				t.Fatalf("got %+v", res)
			}
		})
	}
}

func rawServer(t *testing.T, answer func(w http.ResponseWriter)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		answer(w)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func settingsFor(provider, base string) llm.Settings {
	model := map[string]string{llm.ProviderGemini: "gemini-2.5-flash", llm.ProviderAnthropic: "claude-sonnet-4-5", llm.ProviderOpenAI: "gpt-4o-mini"}[provider]
	if model == "" {
		model = "llama3.2"
	}
	// A timeout no answer from a local fake can miss however loaded the
	// machine; the tests of timeouts set their own.
	return llm.Settings{Provider: provider, Model: model, BaseURL: base, APIKey: llmtest.Key, Timeout: 30 * time.Second,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}
}

// A 429 is retried after the wait its Retry-After asks for (through the
// injected Sleep: the test never sleeps), then the answer comes.
func TestRateLimitHonoursRetryAfter(t *testing.T) {
	for _, p := range allProviders {
		t.Run(p, func(t *testing.T) {
			srv := llmtest.New(t, p, llmtest.Answer{Status: 429, RetryAfter: "3"}, llmtest.Answer{Text: "fine"})
			res, err := client(t, srv.Settings()).Synthesize(context.Background(), prompt("q"), llm.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "fine" || res.Attempts != 2 {
				t.Fatalf("got %+v", res)
			}
			if w := srv.Waits(); len(w) != 1 || w[0] != 3*time.Second {
				t.Fatalf("waits %v, want [3s]", w)
			}
		})
	}
}

// Gemini says how long to wait in the body (google.rpc.RetryInfo), and an
// HTTP date in Retry-After is a wait until then.
func TestRetryAfterFromBodyAndDate(t *testing.T) {
	quota := readJSON(t, "testdata/gemini.error429.json", nil)
	good := readJSON(t, "testdata/gemini.response.json", nil)
	calls := 0
	srv := rawServer(t, func(w http.ResponseWriter) {
		calls++
		if calls == 1 {
			w.WriteHeader(429)
			_, _ = w.Write(quota)
			return
		}
		_, _ = w.Write(good)
	})
	var waits []time.Duration
	s := settingsFor(llm.ProviderGemini, srv.URL)
	s.Sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	if _, err := client(t, s).Synthesize(context.Background(), prompt("q"), llm.Config{}); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0] != 13*time.Second {
		t.Fatalf("waits %v, want [13s] from RetryInfo", waits)
	}

	calls, waits = 0, nil
	var sent, date time.Time // when the fake answered, and the date it named
	srv2 := rawServer(t, func(w http.ResponseWriter) {
		calls++
		if calls == 1 {
			sent = time.Now()
			date, _ = http.ParseTime(sent.Add(20 * time.Second).UTC().Format(http.TimeFormat))
			w.Header().Set("Retry-After", date.Format(http.TimeFormat))
			w.WriteHeader(503)
			return
		}
		_, _ = w.Write(good)
	})
	s = settingsFor(llm.ProviderGemini, srv2.URL)
	s.Sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	if _, err := client(t, s).Synthesize(context.Background(), prompt("q"), llm.Config{}); err != nil {
		t.Fatal(err)
	}
	// The client read the date between the fake's answer and the end of
	// the call: the wait is the date less that moment, however long the
	// machine took.
	if done := time.Now(); len(waits) != 1 || waits[0] > date.Sub(sent) || waits[0] < date.Sub(done) {
		t.Fatalf("waits %v, want the time to %v, between %v and %v", waits, date, date.Sub(done), date.Sub(sent))
	}
}

// Retries are bounded: a provider that keeps answering 429 fails the
// call after 1 + Retries attempts, with a typed error that says so and
// holds nothing of the provider's (no key, address or body).
func TestRateLimitExhaustedIsTypedAndClean(t *testing.T) {
	for _, p := range allProviders {
		t.Run(p, func(t *testing.T) {
			srv := llmtest.New(t, p, llmtest.Answer{Status: 429, RetryAfter: "1"})
			_, err := client(t, srv.Settings()).Synthesize(context.Background(), prompt("q"), llm.Config{})
			if memory.CodeOf(err) != llm.CodeUnavailable {
				t.Fatalf("code %q: %v", memory.CodeOf(err), err)
			}
			msg := memory.Public(err).Message
			if !strings.Contains(msg, "HTTP 429") || !strings.Contains(msg, "3 attempts") {
				t.Fatalf("message %q", msg)
			}
			if l := leaks(srv, err.Error()); l != nil {
				t.Fatalf("the error shows %v: %s", l, err)
			}
			if strings.Contains(memory.Detail(err), llmtest.Key) || strings.Contains(memory.Detail(err), llmtest.Key[:12]) {
				t.Fatalf("the detail for logs holds the key: %s", memory.Detail(err))
			}
			if !strings.Contains(memory.Detail(err), "[redacted]") {
				t.Fatalf("the detail should keep the provider's words, key scrubbed: %s", memory.Detail(err))
			}
			if len(srv.Requests()) != 3 {
				t.Fatalf("%d requests, want 3", len(srv.Requests()))
			}
		})
	}
}

// A provider asking for a wait longer than MaxRetryAfter fails the call at
// once rather than holding the caller.
func TestRetryAfterTooLongFailsAtOnce(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Status: 429, RetryAfter: "3600"}, llmtest.Answer{Text: "late"})
	_, err := client(t, srv.Settings()).Synthesize(context.Background(), prompt("q"), llm.Config{})
	if memory.CodeOf(err) != llm.CodeUnavailable || !strings.Contains(err.Error(), "asks to wait 1h0m0s") {
		t.Fatalf("err %v", err)
	}
	if len(srv.Requests()) != 1 || len(srv.Waits()) != 0 {
		t.Fatalf("%d requests, waits %v", len(srv.Requests()), srv.Waits())
	}
}

// 5xx answers are retried with the backoff; other 4xx are not retried.
func TestServerErrorsRetriedClientErrorsNot(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderAnthropic, llmtest.Answer{Status: 529}, llmtest.Answer{Status: 500}, llmtest.Answer{Text: "ok"})
	s := srv.Settings()
	s.Backoff = func(n int) time.Duration { return time.Duration(n) * time.Minute }
	res, err := client(t, s).Synthesize(context.Background(), prompt("q"), llm.Config{})
	if err != nil || res.Attempts != 3 {
		t.Fatalf("res %+v err %v", res, err)
	}
	if w := srv.Waits(); len(w) != 2 || w[0] != time.Minute || w[1] != 2*time.Minute {
		t.Fatalf("waits %v", w)
	}

	for status, words := range map[int]string{401: "check the API key", 403: "check the API key", 404: "check the model name", 400: "HTTP 400"} {
		srv := llmtest.New(t, llm.ProviderGemini, llmtest.Answer{Status: status}, llmtest.Answer{Text: "never"})
		_, err := client(t, srv.Settings()).Synthesize(context.Background(), prompt("q"), llm.Config{})
		if memory.CodeOf(err) != llm.CodeUnavailable || !strings.Contains(err.Error(), words) {
			t.Fatalf("HTTP %d: %v", status, err)
		}
		if len(srv.Requests()) != 1 {
			t.Fatalf("HTTP %d retried: %d requests", status, len(srv.Requests()))
		}
		if l := leaks(srv, err.Error()); l != nil || strings.Contains(memory.Detail(err), llmtest.Key) {
			t.Fatalf("HTTP %d: the error shows %v", status, l)
		}
	}
}

// A model that does not answer within the timeout fails the call with a
// typed error naming the timeout; the caller's cancellation is told apart.
func TestSlowModelTimesOut(t *testing.T) {
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderOllama, llm.ProviderGemini, llm.ProviderAnthropic} {
		t.Run(p, func(t *testing.T) {
			srv := llmtest.New(t, p, llmtest.Answer{Hang: true})
			s := srv.Settings()
			s.Timeout, s.Retries = 50*time.Millisecond, 1
			_, err := client(t, s).Synthesize(context.Background(), prompt("q"), llm.Config{})
			if memory.CodeOf(err) != llm.CodeUnavailable || !strings.Contains(err.Error(), "did not answer within its timeout of 50ms (2 attempts)") {
				t.Fatalf("err %v", err)
			}
			if l := leaks(srv, err.Error()); l != nil {
				t.Fatalf("the error shows %v", l)
			}
		})
	}
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	s := srv.Settings()
	s.HTTPClient = &http.Client{Transport: cancelOnSend{cancel: cancel}}
	_, err := client(t, s).Synthesize(ctx, prompt("q"), llm.Config{})
	if memory.CodeOf(err) != llm.CodeUnavailable || !strings.Contains(err.Error(), "canceled before the model answered") {
		t.Fatalf("err %v", err)
	}
}

// cancelOnSend cancels the caller's context as the request goes out, then
// sends it: the call ends with the caller's cancellation, deterministically.
type cancelOnSend struct{ cancel func() }

func (c cancelOnSend) RoundTrip(r *http.Request) (*http.Response, error) {
	c.cancel()
	return http.DefaultTransport.RoundTrip(r)
}

// A 200 answer that is not its API's shape is a typed error, not a
// silent empty answer.
func TestMalformedEnvelope(t *testing.T) {
	for body, words := range map[string]string{"<html>proxy</html>": "not the JSON its API promises", `{"object":"chat.completion"}`: "no choices"} {
		srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Raw: body})
		_, err := client(t, srv.Settings()).Synthesize(context.Background(), prompt("q"), llm.Config{})
		if memory.CodeOf(err) != llm.CodeUnavailable || !strings.Contains(err.Error(), words) || strings.Contains(err.Error(), "proxy") {
			t.Fatalf("%s: %v", body, err)
		}
	}
	for p, body := range map[string]string{llm.ProviderGemini: `{}`, llm.ProviderAnthropic: `{"type":"error"}`, llm.ProviderOllama: `{"done":false}`} {
		srv := llmtest.New(t, p, llmtest.Answer{Raw: body})
		_, err := client(t, srv.Settings()).Synthesize(context.Background(), prompt("q"), llm.Config{})
		if memory.CodeOf(err) != llm.CodeUnavailable || !strings.Contains(err.Error(), "not in its API's shape") {
			t.Fatalf("%s %s: %v", p, body, err)
		}
	}
}

// Refusals, safety filters and cut answers come back as finish reasons,
// with no text taken for an answer.
func TestFinishReasons(t *testing.T) {
	cases := []struct {
		provider string
		a        llmtest.Answer
		want     string
	}{
		{llm.ProviderOpenAI, llmtest.Answer{Refusal: "I can't help with that."}, llm.FinishRefusal},
		{llm.ProviderOpenAI, llmtest.Answer{Text: `{"ans`, Finish: "length"}, llm.FinishLength},
		{llm.ProviderOpenAI, llmtest.Answer{Text: "", Finish: "content_filter"}, llm.FinishFiltered},
		{llm.ProviderGemini, llmtest.Answer{Text: "", Finish: "SAFETY"}, llm.FinishFiltered},
		{llm.ProviderGemini, llmtest.Answer{Text: "cut", Finish: "MAX_TOKENS"}, llm.FinishLength},
		{llm.ProviderAnthropic, llmtest.Answer{Text: "", Finish: "refusal"}, llm.FinishRefusal},
		{llm.ProviderAnthropic, llmtest.Answer{Text: "cut", Finish: "max_tokens"}, llm.FinishLength},
		{llm.ProviderOllama, llmtest.Answer{Text: "cut", Finish: "length"}, llm.FinishLength},
	}
	for _, tc := range cases {
		srv := llmtest.New(t, tc.provider, tc.a)
		res, err := client(t, srv.Settings()).Synthesize(context.Background(), prompt("q"), llm.Config{})
		if err != nil || res.FinishReason != tc.want {
			t.Fatalf("%s %+v: got %+v, %v", tc.provider, tc.a, res, err)
		}
		if tc.a.Refusal != "" && res.Text != "" {
			t.Fatalf("a refusal's words are not an answer: %q", res.Text)
		}
	}
}

// A prompt that does not fit the context window is refused before
// anything is sent.
func TestContextWindowCheckedBeforeSending(t *testing.T) {
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderGemini} {
		srv := llmtest.New(t, p, llmtest.Answer{Text: "never"})
		s := srv.Settings()
		s.ContextWindow, s.MaxOutputTokens = 1000, 200
		c := client(t, s)
		long := strings.Repeat("The heron waded through the estuary at dawn. ", 100)
		_, err := c.Synthesize(context.Background(), prompt(long), llm.Config{MaxOutputTokens: 200})
		if memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), "context window") || !strings.Contains(err.Error(), "nothing was sent") {
			t.Fatalf("%s: %v", p, err)
		}
		if len(srv.Requests()) != 0 {
			t.Fatalf("%s: %d requests sent", p, len(srv.Requests()))
		}
		// The answer's budget counts: a prompt that fits alone does not fit
		// with a budget that fills the window.
		short := prompt("Where did the heron wade?")
		n := c.CountTokens(short, llm.Config{})
		if _, err := c.Synthesize(context.Background(), short, llm.Config{MaxOutputTokens: 1000 - n + 1}); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Fatalf("%s: budget over the window by one token: %v", p, err)
		}
		if _, err := c.Synthesize(context.Background(), short, llm.Config{MaxOutputTokens: 1000 - n}); err != nil {
			t.Fatalf("%s: budget filling the window exactly: %v", p, err)
		}
	}
}

// Bad calls are invalid_params and send nothing.
func TestBadCallsSendNothing(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Text: "never"})
	c := client(t, srv.Settings())
	hot := 2.5
	for name, call := range map[string]func() error{
		"no messages": func() error {
			_, err := c.Synthesize(context.Background(), llm.Prompt{System: "s"}, llm.Config{})
			return err
		},
		"ends with assistant": func() error {
			_, err := c.Synthesize(context.Background(), llm.Prompt{Messages: []llm.Message{{Role: llm.RoleAssistant, Content: "x"}}}, llm.Config{})
			return err
		},
		"bad role": func() error {
			_, err := c.Synthesize(context.Background(), llm.Prompt{Messages: []llm.Message{{Role: "system", Content: "x"}, {Role: llm.RoleUser, Content: "q"}}}, llm.Config{})
			return err
		},
		"schema not an object": func() error {
			_, err := c.Synthesize(context.Background(), prompt("q"), llm.Config{Schema: json.RawMessage(`[1]`)})
			return err
		},
		"bad schema name": func() error {
			_, err := c.Synthesize(context.Background(), prompt("q"), llm.Config{Schema: schema, SchemaName: "a b"})
			return err
		},
		"temperature": func() error {
			_, err := c.Synthesize(context.Background(), prompt("q"), llm.Config{Temperature: &hot})
			return err
		},
	} {
		if err := call(); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Fatalf("%d requests sent", len(srv.Requests()))
	}
}

// The key never shows: not in printed or marshalled settings, not in the
// retry log, not in errors.
func TestKeyNeverShows(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Status: 503}, llmtest.Answer{Status: 401})
	var logs bytes.Buffer
	s := srv.Settings()
	s.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	js, _ := json.Marshal(s)
	var seen []string
	seen = append(seen, fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s.APIKey, s.APIKey, s.APIKey), string(js))
	s.Logger.Info("settings", "settings", s, "key", s.APIKey)
	_, err := client(t, s).Synthesize(context.Background(), prompt("q"), llm.Config{})
	if err == nil {
		t.Fatal("want an error")
	}
	seen = append(seen, err.Error(), memory.Detail(err), fmt.Sprintf("%+v", err), logs.String())
	if !strings.Contains(logs.String(), "llm retry") {
		t.Fatalf("the retry was not logged: %s", logs.String())
	}
	if !strings.Contains(string(js), `"api_key_set":true`) {
		t.Fatalf("marshalled settings should say a key is set: %s", js)
	}
	for _, text := range seen {
		if strings.Contains(text, llmtest.Key) || strings.Contains(text, llmtest.Key[:12]) || strings.Contains(text, llmtest.Key[len(llmtest.Key)-10:]) {
			t.Fatalf("the key shows in %q", text)
		}
	}
}

// Prices: the longest prefix of the table wins, a configured price
// overrides it, local servers are free, unknown models are priced 0 and
// say so; a response's cost follows its usage.
func TestPricesAndCost(t *testing.T) {
	if info, ok := llm.Lookup("gpt-4o-mini-2024-07-18"); !ok || info.Price != (llm.Price{Input: 0.15, Output: 0.60}) {
		t.Fatalf("gpt-4o-mini: %+v %v", info, ok)
	}
	if info, _ := llm.Lookup("claude-opus-4-5-20251101"); info.Price.Input != 5 {
		t.Fatalf("claude-opus-4-5 is not claude-opus-4: %+v", info)
	}
	if _, ok := llm.Lookup("my-finetune"); ok {
		t.Fatal("unknown model found")
	}
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Text: "ok"})
	res, err := client(t, srv.Settings()).Synthesize(context.Background(), prompt("q"), llm.Config{})
	if err != nil || !res.CostKnown || res.Cost != (120*0.15+40*0.60)/1e6 {
		t.Fatalf("cost %+v %v", res, err)
	}
	s := srv.Settings()
	s.Price = &llm.Price{Input: 1, Output: 2}
	res, _ = client(t, s).Synthesize(context.Background(), prompt("q"), llm.Config{})
	if res.Cost != (120*1+40*2)/1e6 {
		t.Fatalf("overridden cost %v", res.Cost)
	}
	s = srv.Settings()
	s.Model = "my-finetune"
	res, _ = client(t, s).Synthesize(context.Background(), prompt("q"), llm.Config{})
	if res.CostKnown || res.Cost != 0 {
		t.Fatalf("unknown model's cost %+v", res)
	}
	local := llmtest.New(t, llm.ProviderOllama, llmtest.Answer{Text: "ok"})
	res, _ = client(t, local.Settings()).Synthesize(context.Background(), prompt("q"), llm.Config{})
	if !res.CostKnown || res.Cost != 0 {
		t.Fatalf("local model's cost %+v", res)
	}
}

// The whole price table can be overridden by configuration
// (CAIRN_LLM_PRICES, inline or as a file): an entry replaces the price
// of its prefix or adds one (with a window when it gives one), the
// longest prefix still wins, CAIRN_LLM_PRICE wins over the table, a
// local server's model is priced when the table names it, and calls cost
// what the table says.
func TestPriceTableFromConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{"CAIRN_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	table := `{"gpt-4o-mini": {"input": 0.2, "output": 0.8}, "gpt-4o": "3/12",
		"my-finetune": {"input": 1, "output": 4, "context_window": 32768}, "qwen": {"input": 0.05, "output": 0.1}}`
	file := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(file, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, given := range []string{table, file} {
		for _, c := range []struct {
			provider, model, price string
			want                   llm.ModelPrice
			window                 int
		}{
			{"openai", "gpt-4o-mini-2024-07-18", "", llm.ModelPrice{Price: llm.Price{Input: 0.2, Output: 0.8}, Known: true, Source: "CAIRN_LLM_PRICES gpt-4o-mini"}, 128_000},
			{"openai", "gpt-4o-2024-08-06", "", llm.ModelPrice{Price: llm.Price{Input: 3, Output: 12}, Known: true, Source: "CAIRN_LLM_PRICES gpt-4o"}, 128_000},
			{"openai", "gpt-4.1-mini", "", llm.ModelPrice{Price: llm.Price{Input: 0.4, Output: 1.6}, Known: true, Source: "built-in table gpt-4.1-mini"}, 1_047_576},
			{"openai", "my-finetune-v2", "", llm.ModelPrice{Price: llm.Price{Input: 1, Output: 4}, Known: true, Source: "CAIRN_LLM_PRICES my-finetune"}, 32768},
			{"openai", "my-finetune-v2", "7/9", llm.ModelPrice{Price: llm.Price{Input: 7, Output: 9}, Known: true, Source: "CAIRN_LLM_PRICE"}, 32768},
			{"vllm", "qwen2.5-7b", "", llm.ModelPrice{Price: llm.Price{Input: 0.05, Output: 0.1}, Known: true, Source: "CAIRN_LLM_PRICES qwen"}, llm.DefaultContextWindow},
			{"vllm", "llama-3", "", llm.ModelPrice{Known: true, Source: "local server"}, llm.DefaultContextWindow},
			{"openai", "mystery", "", llm.ModelPrice{Source: "unknown"}, llm.DefaultContextWindow},
		} {
			s, notes, err := llm.SettingsFromEnv(env("CAIRN_LLM_PROVIDER", c.provider, "CAIRN_LLM_MODEL", c.model, "CAIRN_LLM_PRICES", given, "CAIRN_LLM_PRICE", c.price))
			if err != nil {
				t.Fatalf("%s %s: %v", c.provider, c.model, err)
			}
			if got := s.ModelPrice(); got != c.want || s.ContextWindow != c.window || len(s.Prices) != 4 {
				t.Errorf("%s %s: price %+v window %d (%d entries); want %+v window %d", c.provider, c.model, got, s.ContextWindow, len(s.Prices), c.want, c.window)
			}
			if unknown := strings.Contains(strings.Join(notes, "\n"), "has no price"); unknown == c.want.Known {
				t.Errorf("%s %s: notes %q", c.provider, c.model, notes)
			}
		}
	}
	// A call costs what the table says, and cairn config shows it.
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Text: "ok"})
	s := srv.Settings()
	s.Prices = map[string]llm.PriceEntry{srv.Model: {Input: 2, Output: 6}}
	res, err := client(t, s).Synthesize(context.Background(), prompt("q"), llm.Config{})
	if err != nil || !res.CostKnown || res.Cost != (120*2+40*6)/1e6 {
		t.Fatalf("cost %+v %v", res, err)
	}
	if b, _ := json.Marshal(s); !strings.Contains(string(b), `"prices":{"`+srv.Model+`":{"input":2,"output":6}}`) {
		t.Errorf("settings %s; want the table", b)
	}

	// Bad tables are invalid_params naming what is wrong, and where.
	for given, want := range map[string]string{
		`{"gpt-4o": {"input": -1, "output": 2}}`:                             `entry "gpt-4o": input -1`,
		`{"gpt-4o": {"input": 1}}`:                                           `entry "gpt-4o": want both "input" and "output"`,
		`{"gpt-4o": {"inptu": 1, "output": 2}}`:                              `entry "gpt-4o": want {"input"`,
		`{"gpt-4o": "cheap"}`:                                                `entry "gpt-4o": want "input/output"`,
		`{"gpt-4o": 3}`:                                                      `entry "gpt-4o"`,
		`{"": {"input": 1, "output": 2}}`:                                    `entry "": the model prefix is empty`,
		`{"m": {"input": 1, "output": 2, "context_window": 10}}`:             `entry "m": context_window 10`,
		`{"m": {"input": 1, "output": 2}, "n": {"input": 1, "output": 1e9}}`: `entry "n": output 1e+09`,
		`{"m": {"input": 1, "output": 2}} {"n": 1}`:                          `text after the JSON object`,
		`{"m": `: `not a JSON object`,
		filepath.Join(t.TempDir(), "missing.json"): `no such file`,
		`[{"m": 1}]`: `no such file`, // not an object: read as a path
	} {
		_, _, err := llm.SettingsFromEnv(env("CAIRN_LLM_PRICES", given))
		if memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "CAIRN_LLM_PRICES") {
			t.Errorf("CAIRN_LLM_PRICES=%s: %v; want invalid_params saying %q", given, err, want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"gpt-5": {"input": "a lot", "output": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := llm.SettingsFromEnv(env("CAIRN_LLM_PRICES", bad)); memory.CodeOf(err) != memory.CodeInvalidParams ||
		!strings.Contains(err.Error(), `file "`+bad+`": entry "gpt-5"`) {
		t.Errorf("a bad file: %v; want the file and the entry named", err)
	}
	// Go callers' tables are checked by New too.
	s = srv.Settings()
	s.Prices = map[string]llm.PriceEntry{"x": {Input: -1}}
	if _, err := llm.New(s); memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), `entry "x"`) {
		t.Errorf("New with a bad table: %v", err)
	}
}

// Without usage in the answer, the tokens are counted.
func TestTokensCountedWhenNotReported(t *testing.T) {
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Text: "hello world", NoUsage: true})
	c := client(t, srv.Settings())
	p := prompt("Where did Alice move?")
	res, err := c.Synthesize(context.Background(), p, llm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.UsageReported || res.PromptTokens != c.CountTokens(p, llm.Config{}) || res.CompletionTokens != 2 {
		t.Fatalf("got %+v", res)
	}
}

// OpenAI's models are counted with their own BPE; the others get
// cl100k_base's count plus the margin, never less than the exact count.
func TestCountTokens(t *testing.T) {
	gpt := client(t, llm.Settings{Provider: llm.ProviderOpenAI, Model: "gpt-4o", APIKey: "k"})
	if !gpt.Exact() {
		t.Fatal("gpt-4o should count exactly")
	}
	// "hello world" is 2 tokens in o200k_base; one message of it is 3 + 2,
	// and 3 more prime the reply.
	if n := gpt.CountTokens(llm.Prompt{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello world"}}}, llm.Config{}); n != 8 {
		t.Fatalf("gpt-4o: %d tokens, want 8", n)
	}
	claude := client(t, llm.Settings{Provider: llm.ProviderAnthropic, APIKey: "k"})
	p := prompt(strings.Repeat("Alice moved to Lisbon in 2021 and works at a bakery. ", 20))
	if claude.Exact() || claude.CountTokens(p, llm.Config{}) <= gpt.CountTokens(p, llm.Config{}) {
		t.Fatalf("the estimate should be above the exact count: %d vs %d", claude.CountTokens(p, llm.Config{}), gpt.CountTokens(p, llm.Config{}))
	}
	if gpt.CountTokens(p, llm.Config{Schema: schema}) <= gpt.CountTokens(p, llm.Config{}) {
		t.Fatal("the schema should count")
	}
}

// New: no provider is feature_disabled; settings that cannot work are
// invalid_params.
func TestNew(t *testing.T) {
	if _, err := llm.New(llm.Settings{}); memory.CodeOf(err) != memory.CodeFeatureDisabled {
		t.Fatalf("no provider: %v", err)
	}
	for name, s := range map[string]llm.Settings{
		"unknown provider":       {Provider: "cohere"},
		"no key":                 {Provider: llm.ProviderOpenAI},
		"local without a model":  {Provider: llm.ProviderVLLM},
		"bad url":                {Provider: llm.ProviderOllama, Model: "m", BaseURL: "127.0.0.1:11434"},
		"budget over the window": {Provider: llm.ProviderOllama, Model: "m", ContextWindow: 1000, MaxOutputTokens: 1000},
		"bad json mode":          {Provider: llm.ProviderOllama, Model: "m", JSON: "yaml"},
	} {
		if _, err := llm.New(s); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := client(t, llm.Settings{Provider: llm.ProviderGemini, APIKey: "k"})
	if c.Provider() != "gemini" || c.Model() != "gemini-2.5-pro" || c.ContextWindow() != 1_048_576 {
		t.Fatalf("gemini defaults: %s %s %d", c.Provider(), c.Model(), c.ContextWindow())
	}
	if c := client(t, llm.Settings{Provider: llm.ProviderOllama, Model: "qwen2.5"}); c.ContextWindow() != llm.DefaultContextWindow {
		t.Fatalf("local default window %d", c.ContextWindow())
	}
}

// The environment: CAIRN_ names win over the seed's SURR_ names, keys
// come from each provider's variable, bad values are invalid_params.
func TestSettingsFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	s, _, err := llm.SettingsFromEnv(env())
	if err != nil || s.Provider != "" {
		t.Fatalf("nothing set: %+v %v", s, err)
	}
	s, notes, err := llm.SettingsFromEnv(env("SURR_INNER_VOICE_PROVIDER", "gemini", "GOOGLE_API_KEY", "g-key", "SURR_INNER_VOICE_TEMP", "0.8"))
	if err != nil || s.Provider != "gemini" || s.Model != "gemini-2.5-pro" || s.APIKey != "g-key" || *s.Temperature != 0.8 {
		t.Fatalf("seed names: %+v %v", s, err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "defaults to gemini-2.5-pro") {
		t.Fatalf("notes %v", notes)
	}
	s, notes, err = llm.SettingsFromEnv(env("CAIRN_LLM_PROVIDER", "anthropic", "SURR_INNER_VOICE_PROVIDER", "gemini",
		"ANTHROPIC_API_KEY", "a-key", "CAIRN_LLM_API_KEY", "override", "CAIRN_LLM_MODEL", "claude-haiku-4-5",
		"CAIRN_LLM_TIMEOUT", "90s", "CAIRN_LLM_RETRIES", "0", "CAIRN_LLM_PRICE", "1/5", "CAIRN_LLM_CONTEXT_WINDOW", "100000"))
	if err != nil || s.Provider != "anthropic" || s.APIKey != "override" || s.Timeout != 90*time.Second || s.Retries >= 0 ||
		*s.Price != (llm.Price{Input: 1, Output: 5}) || s.ContextWindow != 100000 {
		t.Fatalf("cairn names: %+v %v", s, err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), `CAIRN_LLM_PROVIDER="anthropic" overrides SURR_INNER_VOICE_PROVIDER="gemini"`) {
		t.Fatalf("notes %v", notes)
	}
	// CAIRN_LLM_RETRIES=0 means no retry, through New too.
	srv := llmtest.New(t, llm.ProviderOpenAI, llmtest.Answer{Status: 429})
	s, _, err = llm.SettingsFromEnv(env("CAIRN_LLM_PROVIDER", "openai", "OPENAI_API_KEY", llmtest.Key, "CAIRN_LLM_URL", srv.URL+"/v1", "CAIRN_LLM_RETRIES", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, s).Synthesize(context.Background(), prompt("q"), llm.Config{}); !strings.Contains(fmt.Sprint(err), "HTTP 429") || len(srv.Requests()) != 1 {
		t.Fatalf("retries 0: %d requests, %v", len(srv.Requests()), err)
	}
	for name, e := range map[string]func(string) string{
		"no key":         env("CAIRN_LLM_PROVIDER", "openai"),
		"bad timeout":    env("CAIRN_LLM_PROVIDER", "ollama", "CAIRN_LLM_MODEL", "m", "CAIRN_LLM_TIMEOUT", "soon"),
		"bad retries":    env("CAIRN_LLM_PROVIDER", "ollama", "CAIRN_LLM_MODEL", "m", "CAIRN_LLM_RETRIES", "11"),
		"bad price":      env("CAIRN_LLM_PROVIDER", "ollama", "CAIRN_LLM_MODEL", "m", "CAIRN_LLM_PRICE", "cheap"),
		"bad temp":       env("CAIRN_LLM_PROVIDER", "ollama", "CAIRN_LLM_MODEL", "m", "SURR_INNER_VOICE_TEMP", "3"),
		"bad window":     env("CAIRN_LLM_PROVIDER", "ollama", "CAIRN_LLM_MODEL", "m", "CAIRN_LLM_CONTEXT_WINDOW", "10"),
		"unknown":        env("CAIRN_LLM_PROVIDER", "watson"),
		"local no model": env("CAIRN_LLM_PROVIDER", "llamacpp"),
	} {
		_, _, err := llm.SettingsFromEnv(e)
		if memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "a-key") {
			t.Errorf("%s: the error shows a key", name)
		}
	}
	_, _, err = llm.SettingsFromEnv(env("CAIRN_LLM_PROVIDER", "openai"))
	if !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("the error should name the variable: %v", err)
	}
}
