package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Gemini speaks Google's Gemini API (POST
// {base}/models/{model}:generateContent, the key in the x-goog-api-key
// header, never in the URL).
type Gemini struct{ base }

var _ Client = (*Gemini)(nil)

type geminiPart struct {
	Text    string `json:"text"`
	Thought bool   `json:"thought,omitempty"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiRequest struct {
	SystemInstruction *geminiContent       `json:"systemInstruction,omitempty"`
	Contents          []geminiContent      `json:"contents"`
	GenerationConfig  geminiGenerateConfig `json:"generationConfig"`
}

type geminiGenerateConfig struct {
	Temperature        *float64        `json:"temperature,omitempty"`
	MaxOutputTokens    int             `json:"maxOutputTokens"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
}

type geminiResponse struct {
	Candidates []struct {
		Content      *geminiContent `json:"content"`
		FinishReason string         `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		ThoughtsTokenCount   int `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string `json:"modelVersion"`
}

// Synthesize implements Client.
func (c *Gemini) Synthesize(ctx context.Context, p Prompt, cfg Config) (Response, error) {
	cfg, n, err := c.prepare(p, cfg)
	if err != nil {
		return Response{}, err
	}
	start := time.Now()
	req := geminiRequest{GenerationConfig: geminiGenerateConfig{Temperature: cfg.Temperature, MaxOutputTokens: cfg.MaxOutputTokens}}
	if p.System != "" {
		req.SystemInstruction = &geminiContent{Parts: []geminiPart{{Text: p.System}}}
	}
	for _, m := range p.Messages {
		role := "user"
		if m.Role == RoleAssistant {
			role = "model"
		}
		req.Contents = append(req.Contents, geminiContent{Role: role, Parts: []geminiPart{{Text: m.Content}}})
	}
	if len(cfg.Schema) > 0 && c.s.JSON != "off" {
		req.GenerationConfig.ResponseMimeType = "application/json"
		if c.s.JSON == "schema" {
			req.GenerationConfig.ResponseJSONSchema = cfg.Schema
		}
	}
	var res geminiResponse
	attempts, err := c.t.post(ctx, c.endpoint(), req, &res)
	if err != nil {
		return Response{}, err
	}
	out := Response{Model: res.ModelVersion}
	if res.UsageMetadata != nil {
		// Thinking tokens are billed as output.
		out.PromptTokens = res.UsageMetadata.PromptTokenCount
		out.CompletionTokens = res.UsageMetadata.CandidatesTokenCount + res.UsageMetadata.ThoughtsTokenCount
	}
	switch {
	case len(res.Candidates) > 0:
		cand := res.Candidates[0]
		if cand.Content != nil {
			var b strings.Builder
			for _, part := range cand.Content.Parts {
				if !part.Thought {
					b.WriteString(part.Text)
				}
			}
			out.Text = b.String()
		}
		out.FinishReason = geminiFinish(cand.FinishReason)
	case res.PromptFeedback != nil && res.PromptFeedback.BlockReason != "":
		out.FinishReason = FinishFiltered
	default:
		return Response{}, c.malformed("no candidates")
	}
	c.finish(&out, n, start, attempts)
	return out, nil
}

// endpoint is the model's generateContent URL.
func (c *Gemini) endpoint() string {
	return c.s.BaseURL + "/models/" + url.PathEscape(strings.TrimPrefix(c.s.Model, "models/")) + ":generateContent"
}

func geminiFinish(r string) string {
	switch r {
	case "STOP":
		return FinishStop
	case "MAX_TOKENS":
		return FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII":
		return FinishFiltered
	}
	return FinishOther
}

// geminiAuth sends the key in Google's API-key header.
func geminiAuth(h http.Header, key string) { h.Set("x-goog-api-key", key) }
