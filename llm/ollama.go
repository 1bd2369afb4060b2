package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Ollama speaks Ollama's native chat API (POST {base}/api/chat, not
// streamed). It sets the model's context window (options.num_ctx) to the
// configured one, so that Ollama does not silently cut a prompt at its own
// smaller default.
type Ollama struct{ base }

var _ Client = (*Ollama)(nil)

type ollamaRequest struct {
	Model    string          `json:"model"`
	Messages []openAIMessage `json:"messages"`
	Stream   bool            `json:"stream"`
	Format   json.RawMessage `json:"format,omitempty"`
	Options  ollamaOptions   `json:"options"`
}

type ollamaOptions struct {
	Temperature *float64 `json:"temperature,omitempty"`
	NumCtx      int      `json:"num_ctx"`
	NumPredict  int      `json:"num_predict"`
}

type ollamaResponse struct {
	Model   string `json:"model"`
	Message *struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
	Done            bool   `json:"done"`
	DoneReason      string `json:"done_reason"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
}

// Synthesize implements Client.
func (c *Ollama) Synthesize(ctx context.Context, p Prompt, cfg Config) (Response, error) {
	cfg, n, err := c.prepare(p, cfg)
	if err != nil {
		return Response{}, err
	}
	start := time.Now()
	req := ollamaRequest{Model: c.s.Model, Options: ollamaOptions{Temperature: cfg.Temperature, NumCtx: c.s.ContextWindow, NumPredict: cfg.MaxOutputTokens}}
	if p.System != "" {
		req.Messages = append(req.Messages, openAIMessage{Role: "system", Content: p.System})
	}
	for _, m := range p.Messages {
		req.Messages = append(req.Messages, openAIMessage{Role: string(m.Role), Content: m.Content})
	}
	if len(cfg.Schema) > 0 {
		switch c.s.JSON {
		case "schema":
			req.Format = cfg.Schema
		case "object":
			req.Format = json.RawMessage(`"json"`)
		}
	}
	var res ollamaResponse
	attempts, err := c.t.post(ctx, c.s.BaseURL+"/api/chat", req, &res)
	if err != nil {
		return Response{}, err
	}
	if res.Message == nil || !res.Done {
		return Response{}, c.malformed("no finished message")
	}
	out := Response{Model: res.Model, Text: res.Message.Content, PromptTokens: res.PromptEvalCount, CompletionTokens: res.EvalCount}
	switch res.DoneReason {
	case "stop", "":
		out.FinishReason = FinishStop
	case "length":
		out.FinishReason = FinishLength
	default:
		out.FinishReason = FinishOther
	}
	c.finish(&out, n, start, attempts)
	return out, nil
}
