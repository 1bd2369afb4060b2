package synth_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/internal/llmtest"
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/synth"
)

const (
	goodAnswer = `{"answer": "The grey heron nests in colonies called heronries. Herons hunt fish by standing still in shallow water.",
		"sources": [{"source_id": "t-1", "span": "nests in colonies called heronries"}, {"source_id": "t-2", "span": "hunt fish by standing still in shallow water"}]}`
	partlyGrounded = `{"answer": "The grey heron nests in colonies called heronries. Herons hunt fish by standing still in shallow water. Herons migrate to Africa every winter. They live for forty years in the wild.",
		"sources": [{"source_id": "t-1", "span": "nests in colonies called heronries"}, {"source_id": "t-2", "span": "hunt fish"}]}`
	fabricated = `{"answer": "Herons migrate to Africa every winter. They live for forty years in the wild.",
		"sources": [{"source_id": "t-77", "span": "Herons migrate to Africa every winter"}, {"source_id": "t-78", "span": "live for forty years"}],
		"coverage_ratio": 1.0, "confidence": 0.99, "refused": false}`
	prose = "Sure! Herons nest in colonies called heronries and hunt fish."
)

// script is a ModelFunc answering replies in order, recording requests.
type script struct {
	replies  []synth.ModelReply
	err      error
	requests []synth.ModelRequest
}

func (s *script) model(_ context.Context, req synth.ModelRequest) (synth.ModelReply, error) {
	s.requests = append(s.requests, req)
	if s.err != nil {
		return synth.ModelReply{}, s.err
	}
	r := s.replies[0]
	if len(s.replies) > 1 {
		s.replies = s.replies[1:]
	}
	return r, nil
}

func reply(text string) synth.ModelReply {
	return synth.ModelReply{Text: text, FinishReason: "stop", Model: "m", PromptTokens: 100, CompletionTokens: 20, Cost: 0.001}
}

// A grounded answer comes back verified; the model is asked once, with
// the schema, the sources most relevant first and the question.
func TestLLMSynthesizerGrounded(t *testing.T) {
	s := &script{replies: []synth.ModelReply{reply(goodAnswer)}}
	res, err := synth.LLMSynthesizer{Model: s.model}.Synthesize(context.Background(), "How do herons live?", birds)
	if err != nil {
		t.Fatal(err)
	}
	if res.Refused || res.CoverageRatio != 1 || len(res.Sources) != 2 || res.Calls != 1 || res.PromptTokens != 100 || res.Cost != 0.001 {
		t.Fatalf("got %+v", res)
	}
	if len(res.PromptHash) != 64 || strings.Contains(res.PromptHash, "heron") {
		t.Fatalf("prompt hash %q", res.PromptHash)
	}
	req := s.requests[0]
	if string(req.Schema) != string(synth.GroundedSchema) || req.SchemaName != synth.GroundedSchemaName || len(req.Messages) != 1 {
		t.Fatalf("request %+v", req)
	}
	user := req.Messages[0].Content
	if !strings.Contains(user, "[t-1] (thought) The grey heron") || strings.Index(user, "[t-1]") > strings.Index(user, "[t-3]") ||
		!strings.HasSuffix(user, "Question: How do herons live?") {
		t.Fatalf("user message %q", user)
	}
	var schema map[string]any
	if err := json.Unmarshal(synth.GroundedSchema, &schema); err != nil || schema["additionalProperties"] != false {
		t.Fatalf("schema %s", synth.GroundedSchema)
	}
}

// Ungrounded answers are refused, whatever the model says of its own
// grounding; the refusal passes none of the answer on.
func TestLLMSynthesizerRefusesUngrounded(t *testing.T) {
	for name, answer := range map[string]string{"partly grounded": partlyGrounded, "fabricated": fabricated} {
		s := &script{replies: []synth.ModelReply{reply(answer)}}
		res, err := synth.LLMSynthesizer{Model: s.model}.Synthesize(context.Background(), "How do herons live?", birds)
		if err != nil || !res.Refused || res.Answer != synth.RefusalText || len(res.Sources) != 0 || res.Calls != 1 {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
		if strings.Contains(res.Notes, "Africa") {
			t.Fatalf("%s: notes pass the answer on: %q", name, res.Notes)
		}
	}
}

// A malformed answer is asked for again once, with the schema restated
// and the bad answer shown; a good second answer is used, a second bad
// one refused, never passed through.
func TestLLMSynthesizerMalformedRetriedOnce(t *testing.T) {
	s := &script{replies: []synth.ModelReply{reply(prose), reply(goodAnswer)}}
	res, err := synth.LLMSynthesizer{Model: s.model}.Synthesize(context.Background(), "How do herons live?", birds)
	if err != nil || res.Refused || res.Calls != 2 || res.PromptTokens != 200 {
		t.Fatalf("malformed then good: %+v %v", res, err)
	}
	second := s.requests[1].Messages
	if len(second) != 3 || second[1].Role != "assistant" || second[1].Content != prose || second[2].Role != "user" ||
		!strings.Contains(second[2].Content, string(synth.GroundedSchema)) || !strings.Contains(second[2].Content, "not a JSON object") {
		t.Fatalf("second request %+v", second)
	}

	for name, bad := range map[string]synth.ModelReply{
		"prose":          reply(prose),
		"no answer":      reply(`{"sources": []}`),
		"empty answer":   reply(`{"answer": "  ", "sources": []}`),
		"no sources":     reply(`{"answer": "Herons nest in heronries."}`),
		"bad source":     reply(`{"answer": "Herons nest in heronries.", "sources": [{"source_id": 1, "span": "x"}]}`),
		"trailing text":  reply(goodAnswer + " I hope this helps."),
		"cut off":        {Text: `{"answer": "Herons nest`, FinishReason: "length"},
		"withheld":       {Text: "", FinishReason: "filtered"},
		"refused":        {Text: "", FinishReason: "refusal"},
		"empty":          reply(""),
		"a JSON string":  reply(`"Herons nest in heronries."`),
		"a JSON array":   reply(`[{"answer": "x"}]`),
		"sources object": reply(`{"answer": "Herons nest in heronries.", "sources": {"source_id": "t-1"}}`),
	} {
		s := &script{replies: []synth.ModelReply{bad}}
		res, err := synth.LLMSynthesizer{Model: s.model}.Synthesize(context.Background(), "How do herons live?", birds)
		if err != nil || !res.Refused || res.Answer != synth.RefusalText || res.Calls != 2 || !strings.Contains(res.Notes, "malformed twice") {
			t.Errorf("%s: %+v %v", name, res, err)
		}
		if bad.Text != "" && strings.Contains(res.Notes, bad.Text) {
			t.Errorf("%s: the malformed answer shows in the notes", name)
		}
	}

	// After a withheld (empty) answer, the question and the restated schema
	// go in one message: some APIs refuse an empty turn.
	s = &script{replies: []synth.ModelReply{{FinishReason: "filtered"}, reply(goodAnswer)}}
	if res, _ := (synth.LLMSynthesizer{Model: s.model}).Synthesize(context.Background(), "q", birds); res.Refused || res.Calls != 2 ||
		len(s.requests[1].Messages) != 1 || !strings.Contains(s.requests[1].Messages[0].Content, "Question: q") ||
		!strings.Contains(s.requests[1].Messages[0].Content, "it was withheld") {
		t.Fatalf("withheld: %+v %+v", res, s.requests[1])
	}

	// A fenced JSON answer is not malformed.
	s = &script{replies: []synth.ModelReply{reply("```json\n" + goodAnswer + "\n```")}}
	if res, _ := (synth.LLMSynthesizer{Model: s.model}).Synthesize(context.Background(), "q", birds); res.Refused || res.Calls != 1 {
		t.Fatalf("fenced: %+v", res)
	}
}

// A model failure is returned for the caller to fall back on; too few
// sources refuse without asking; bad input is invalid_params.
func TestLLMSynthesizerEdges(t *testing.T) {
	down := memory.Errorf(llm.CodeUnavailable, "the x model is unavailable")
	s := &script{err: down}
	if _, err := (synth.LLMSynthesizer{Model: s.model}).Synthesize(context.Background(), "q", birds); !errors.Is(err, down) {
		t.Fatalf("err %v", err)
	}
	s = &script{replies: []synth.ModelReply{reply(goodAnswer)}}
	res, err := synth.LLMSynthesizer{Model: s.model}.Synthesize(context.Background(), "q", birds[:1])
	if err != nil || !res.Refused || res.Calls != 0 || len(s.requests) != 0 || !strings.Contains(res.Notes, "Required sources 2, actual 1 in the context") {
		t.Fatalf("one source: %+v %v", res, err)
	}
	if _, err := (synth.LLMSynthesizer{Model: s.model}).Synthesize(context.Background(), "  ", birds); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("empty question: %v", err)
	}
	if _, err := (synth.LLMSynthesizer{}).Synthesize(context.Background(), "q", birds); memory.CodeOf(err) != memory.CodeFeatureDisabled {
		t.Fatalf("no model: %v", err)
	}
}

// modelFor is the adapter the engine wires: an llm.Client as a ModelFunc.
func modelFor(c llm.Client) synth.ModelFunc {
	return func(ctx context.Context, req synth.ModelRequest) (synth.ModelReply, error) {
		p := llm.Prompt{System: req.System}
		for _, m := range req.Messages {
			p.Messages = append(p.Messages, llm.Message{Role: llm.Role(m.Role), Content: m.Content})
		}
		res, err := c.Synthesize(ctx, p, llm.Config{Schema: req.Schema, SchemaName: req.SchemaName})
		return synth.ModelReply{Text: res.Text, FinishReason: res.FinishReason, Model: res.Model,
			PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, Cost: res.Cost}, err
	}
}

// End to end over each provider's wire format (fake servers, no
// network): good answers are accepted, partly grounded and fabricated
// ones refused, malformed ones asked for twice then refused, slow ones
// fail with the provider's typed error, 429s are waited out.
func TestLLMSynthesizerOverEveryProvider(t *testing.T) {
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderOllama, llm.ProviderGemini, llm.ProviderAnthropic} {
		t.Run(p, func(t *testing.T) {
			ask := func(t *testing.T, answers ...llmtest.Answer) (*llmtest.Server, synth.Synthesis, error) {
				srv := llmtest.New(t, p, answers...)
				s := srv.Settings()
				s.Retries = 1
				if answers[0].Hang {
					// Only the model that never answers waits it out; the
					// timeout is long enough that each attempt reaches the
					// fake (which counts it) however loaded the machine.
					s.Timeout = time.Second
				}
				c, err := llm.New(s)
				if err != nil {
					t.Fatal(err)
				}
				res, err := synth.LLMSynthesizer{Model: modelFor(c)}.Synthesize(context.Background(), "How do herons live?", birds)
				return srv, res, err
			}
			compact := func(s string) string { return strings.Join(strings.Fields(s), " ") }

			srv, res, err := ask(t, llmtest.Answer{Text: compact(goodAnswer)})
			if err != nil || res.Refused || res.CoverageRatio != 1 || res.PromptTokens != 120 || len(srv.Requests()) != 1 {
				t.Fatalf("good: %+v %v", res, err)
			}
			if !strings.Contains(string(srv.Requests()[0].Raw), "source_id") {
				t.Fatalf("the schema was not sent: %s", srv.Requests()[0].Raw)
			}

			for name, answer := range map[string]string{"partly grounded": partlyGrounded, "fabricated": fabricated} {
				_, res, err := ask(t, llmtest.Answer{Text: compact(answer)})
				if err != nil || !res.Refused || res.Answer != synth.RefusalText {
					t.Fatalf("%s: %+v %v", name, res, err)
				}
			}

			srv, res, err = ask(t, llmtest.Answer{Text: prose})
			if err != nil || !res.Refused || res.Calls != 2 || len(srv.Requests()) != 2 {
				t.Fatalf("malformed: %+v %v", res, err)
			}
			if second := string(srv.Requests()[1].Raw); !strings.Contains(second, "Answer again with only a JSON object") || !strings.Contains(second, "Sure! Herons") {
				t.Fatalf("the second request does not restate the schema: %s", second)
			}

			// A withheld (empty) answer is asked for again without an empty turn.
			srv, res, err = ask(t, llmtest.Answer{Text: "", Finish: map[string]string{llm.ProviderOpenAI: "content_filter",
				llm.ProviderGemini: "SAFETY", llm.ProviderAnthropic: "refusal", llm.ProviderOllama: "stop"}[p]}, llmtest.Answer{Text: compact(goodAnswer)})
			if err != nil || res.Refused || res.Calls != 2 || len(srv.Requests()) != 2 {
				t.Fatalf("withheld then good: %+v %v", res, err)
			}

			srv, res, err = ask(t, llmtest.Answer{Text: prose}, llmtest.Answer{Text: compact(goodAnswer)})
			if err != nil || res.Refused || res.Calls != 2 || len(srv.Requests()) != 2 {
				t.Fatalf("malformed then good: %+v %v", res, err)
			}

			srv, _, err = ask(t, llmtest.Answer{Hang: true})
			if memory.CodeOf(err) != llm.CodeUnavailable || !strings.Contains(err.Error(), "did not answer within its timeout") || len(srv.Requests()) != 2 {
				t.Fatalf("slow: %v", err)
			}
			if strings.Contains(err.Error(), srv.URL) || strings.Contains(err.Error(), llmtest.Key) {
				t.Fatalf("slow: the error leaks: %v", err)
			}

			srv, res, err = ask(t, llmtest.Answer{Status: 429, RetryAfter: "7"}, llmtest.Answer{Text: compact(goodAnswer)})
			if err != nil || res.Refused || len(srv.Requests()) != 2 || len(srv.Waits()) != 1 || srv.Waits()[0] != 7*time.Second {
				t.Fatalf("429: %+v %v waits %v", res, err, srv.Waits())
			}
		})
	}
}
