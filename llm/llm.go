package llm

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// CodeUnavailable is the error code of a call the model's provider did not
// answer usefully: it could not be reached, did not answer in time, kept
// turning requests away (429) or failing (5xx) past every retry, refused
// the request (a bad key or model name), or answered something that is not
// its API's shape. The message says which, in words fit for a caller.
const CodeUnavailable memory.Code = "llm_unavailable"

// Role is who speaks a message.
type Role string

// The roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

// Prompt is what a model is asked: a system instruction and the
// conversation so far, ending with the user's turn.
type Prompt struct {
	System   string    `json:"system,omitempty"`
	Messages []Message `json:"messages"`
}

// Config is one call's settings.
type Config struct {
	// Temperature, when set, is the sampling temperature (0 to 2); nil
	// leaves the model's default (some models accept no other).
	Temperature *float64
	// MaxOutputTokens bounds the answer (0: the client's default, 1024).
	// The context-window check reserves this many tokens for it.
	MaxOutputTokens int
	// Schema, when set, is a JSON Schema (an object) the answer must
	// follow: the client asks for JSON in that shape where its API offers
	// a way (OpenAI-compatible response_format json_schema, Ollama's
	// format, Gemini's responseJsonSchema, an Anthropic tool the model is
	// made to call). The answer's text is then that JSON.
	Schema json.RawMessage
	// SchemaName names the schema where an API wants a name (default
	// "answer"): letters, digits, _ and -.
	SchemaName string
}

// Response is a model's answer and what it cost.
type Response struct {
	// Text is the answer (the JSON when Config.Schema was set). It may be
	// empty when the provider withheld it (FinishReason says why).
	Text string `json:"text"`
	// Model is the model that answered, as the provider named it.
	Model string `json:"model"`
	// FinishReason is why the model stopped: stop, length (it hit
	// MaxOutputTokens; the answer is cut), filtered (a safety filter
	// withheld it), refusal (the model declined) or other.
	FinishReason string `json:"finish_reason"`
	// PromptTokens and CompletionTokens are the tokens the call used, as
	// the provider reported them, or as cairn counted them when it did not
	// (UsageReported false).
	PromptTokens     int  `json:"prompt_tokens"`
	CompletionTokens int  `json:"completion_tokens"`
	UsageReported    bool `json:"usage_reported"`
	// Cost is the call's price in US dollars from the price table;
	// CostKnown is false when the model has no price there (Cost is 0).
	Cost      float64 `json:"cost_usd"`
	CostKnown bool    `json:"cost_known"`
	// Latency is the wall time of the call, retries and waits included.
	Latency time.Duration `json:"latency"`
	// Attempts is how many HTTP requests the call made (1 without retries).
	Attempts int `json:"attempts"`
}

// The finish reasons.
const (
	FinishStop     = "stop"
	FinishLength   = "length"
	FinishFiltered = "filtered"
	FinishRefusal  = "refusal"
	FinishOther    = "other"
)

// Price is what a model's tokens cost, in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input_per_mtok"`
	Output float64 `json:"output_per_mtok"`
}

// Cost is the price of a call with these token counts, in US dollars.
func (p Price) Cost(promptTokens, completionTokens int) float64 {
	return (float64(promptTokens)*p.Input + float64(completionTokens)*p.Output) / 1e6
}

// Client is a language model behind one provider's API.
type Client interface {
	// Synthesize asks the model for an answer to prompt. It checks the
	// prompt fits the context window first (invalid_params, nothing sent,
	// when it does not).
	Synthesize(ctx context.Context, prompt Prompt, cfg Config) (Response, error)
	// Provider names the provider (openai, ollama, gemini, anthropic, or
	// an OpenAI-compatible server's name: vllm, llamacpp, lmstudio,
	// ollama-openai).
	Provider() string
	// Model names the model asked.
	Model() string
	// ContextWindow is how many tokens the model takes in and gives out
	// in one call.
	ContextWindow() int
	// Price is what the model's tokens cost; known is false when the
	// price table has no entry for it.
	Price() (p Price, known bool)
	// CountTokens is how many tokens prompt takes as this client sends it
	// with cfg (the schema included). It is exact for OpenAI models and an
	// estimate for the others (Exact says which).
	CountTokens(prompt Prompt, cfg Config) int
	// Exact reports whether CountTokens is the model's own count.
	Exact() bool
}

// logger is l or a logger that discards.
func logger(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}
