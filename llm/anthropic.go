package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// AnthropicVersion is the Messages API version cairn speaks.
const AnthropicVersion = "2023-06-01"

// Anthropic speaks Anthropic's Messages API (POST {base}/messages, the key
// in the x-api-key header, the anthropic-version header). The API has no
// response format; with a schema, the model is made to call a tool whose
// input schema it is (tool_choice of that tool), and the tool call's input
// is the answer's JSON.
type Anthropic struct{ base }

var _ Client = (*Anthropic)(nil)

type anthropicRequest struct {
	Model       string          `json:"model"`
	MaxTokens   int             `json:"max_tokens"`
	System      string          `json:"system,omitempty"`
	Messages    []openAIMessage `json:"messages"`
	Temperature *float64        `json:"temperature,omitempty"`
	Tools       []anthropicTool `json:"tools,omitempty"`
	ToolChoice  map[string]any  `json:"tool_choice,omitempty"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicResponse struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// Synthesize implements Client.
func (c *Anthropic) Synthesize(ctx context.Context, p Prompt, cfg Config) (Response, error) {
	cfg, n, err := c.prepare(p, cfg)
	if err != nil {
		return Response{}, err
	}
	start := time.Now()
	req := anthropicRequest{Model: c.s.Model, MaxTokens: cfg.MaxOutputTokens, System: p.System, Temperature: cfg.Temperature}
	for _, m := range p.Messages {
		req.Messages = append(req.Messages, openAIMessage{Role: string(m.Role), Content: m.Content})
	}
	tool := ""
	if len(cfg.Schema) > 0 && c.s.JSON != "off" {
		tool = cfg.SchemaName
		req.Tools = []anthropicTool{{Name: tool, Description: "Give the answer in this shape.", InputSchema: cfg.Schema}}
		req.ToolChoice = map[string]any{"type": "tool", "name": tool}
	}
	var res anthropicResponse
	attempts, err := c.t.post(ctx, c.s.BaseURL+"/messages", req, &res)
	if err != nil {
		return Response{}, err
	}
	if res.Type != "message" {
		return Response{}, c.malformed("not a message")
	}
	out := Response{Model: res.Model, FinishReason: anthropicFinish(res.StopReason)}
	var text strings.Builder
	for _, block := range res.Content {
		switch {
		case block.Type == "text":
			text.WriteString(block.Text)
		case block.Type == "tool_use" && block.Name == tool && tool != "":
			out.Text = string(block.Input)
		}
	}
	if out.Text == "" {
		out.Text = text.String()
	}
	if res.Usage != nil {
		out.PromptTokens, out.CompletionTokens = res.Usage.InputTokens, res.Usage.OutputTokens
	}
	c.finish(&out, n, start, attempts)
	return out, nil
}

func anthropicFinish(r string) string {
	switch r {
	case "end_turn", "tool_use", "stop_sequence":
		return FinishStop
	case "max_tokens":
		return FinishLength
	case "refusal":
		return FinishRefusal
	}
	return FinishOther
}

// anthropicAuth sends the key in Anthropic's header.
func anthropicAuth(h http.Header, key string) { h.Set("x-api-key", key) }
