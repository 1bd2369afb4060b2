package llm

import (
	"context"
	"encoding/json"
	"time"
)

// OpenAI speaks the OpenAI chat completions API (POST
// {base}/chat/completions, the key as a bearer token), which OpenAI,
// Ollama's /v1, vLLM, the llama.cpp server and LM Studio all serve.
type OpenAI struct{ base }

var _ Client = (*OpenAI)(nil)

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIRequest struct {
	Model    string          `json:"model"`
	Messages []openAIMessage `json:"messages"`
	Stream   bool            `json:"stream"`
	// MaxTokens is what the local servers read; OpenAI's newer models
	// accept only MaxCompletionTokens.
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	ResponseFormat      json.RawMessage `json:"response_format,omitempty"`
}

type openAIResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Synthesize implements Client.
func (c *OpenAI) Synthesize(ctx context.Context, p Prompt, cfg Config) (Response, error) {
	cfg, n, err := c.prepare(p, cfg)
	if err != nil {
		return Response{}, err
	}
	start := time.Now()
	req := openAIRequest{Model: c.s.Model, Temperature: cfg.Temperature}
	if c.s.Provider == ProviderOpenAI {
		req.MaxCompletionTokens = cfg.MaxOutputTokens
	} else {
		req.MaxTokens = cfg.MaxOutputTokens
	}
	if p.System != "" {
		req.Messages = append(req.Messages, openAIMessage{Role: "system", Content: p.System})
	}
	for _, m := range p.Messages {
		req.Messages = append(req.Messages, openAIMessage{Role: string(m.Role), Content: m.Content})
	}
	if len(cfg.Schema) > 0 {
		switch c.s.JSON {
		case "schema":
			req.ResponseFormat, _ = json.Marshal(map[string]any{
				"type":        "json_schema",
				"json_schema": map[string]any{"name": cfg.SchemaName, "schema": cfg.Schema, "strict": true},
			})
		case "object":
			req.ResponseFormat = json.RawMessage(`{"type":"json_object"}`)
		}
	}
	var res openAIResponse
	attempts, err := c.t.post(ctx, c.s.BaseURL+"/chat/completions", req, &res)
	if err != nil {
		return Response{}, err
	}
	if len(res.Choices) == 0 {
		return Response{}, c.malformed("no choices")
	}
	ch := res.Choices[0]
	out := Response{Model: res.Model, FinishReason: openAIFinish(ch.FinishReason)}
	switch {
	case ch.Message.Refusal != nil && *ch.Message.Refusal != "":
		out.FinishReason = FinishRefusal
	case ch.Message.Content != nil:
		out.Text = *ch.Message.Content
	}
	if res.Usage != nil {
		out.PromptTokens, out.CompletionTokens = res.Usage.PromptTokens, res.Usage.CompletionTokens
	}
	c.finish(&out, n, start, attempts)
	return out, nil
}

func openAIFinish(r string) string {
	switch r {
	case "stop":
		return FinishStop
	case "length":
		return FinishLength
	case "content_filter":
		return FinishFiltered
	}
	return FinishOther
}
