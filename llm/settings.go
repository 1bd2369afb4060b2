package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// Settings choose and configure a client. SettingsFromEnv reads them from
// the environment; New makes the client.
type Settings struct {
	// Provider is openai, anthropic, gemini, ollama (native /api/chat),
	// or an OpenAI-compatible server: ollama-openai (Ollama's /v1), vllm,
	// llamacpp, lmstudio. Empty: no model is configured.
	Provider string `json:"provider"`
	// Model is the model name the provider knows. The hosted providers
	// have a default (DefaultModels); the local servers need one.
	Model string `json:"model"`
	// BaseURL is the API's base URL (DefaultURLs per provider).
	BaseURL string `json:"base_url,omitempty"`
	// APIKey is the provider's key, from the environment only.
	APIKey Secret `json:"-"`
	// Timeout bounds one HTTP request (default 60s).
	Timeout time.Duration `json:"timeout"`
	// Retries is how many times a failed request is retried (network
	// errors, timeouts, 429 and 5xx; never other 4xx): 0 is the default,
	// 2; negative is never.
	Retries int `json:"retries"`
	// MaxRetryAfter is the longest wait a provider's Retry-After is
	// honoured for (default 30s); a provider asking for longer fails the
	// call at once.
	MaxRetryAfter time.Duration `json:"max_retry_after"`
	// ContextWindow overrides the model's window in tokens (0: the
	// table's, or DefaultContextWindow).
	ContextWindow int `json:"context_window,omitempty"`
	// Price, when set, overrides the model's price.
	Price *Price `json:"price,omitempty"`
	// Prices override or extend the built-in table (Models), by model-name
	// prefix: an entry replaces the price of the same prefix (and its
	// window, when it gives one) or adds a prefix; the longest prefix of
	// the model still wins. Price, when set, wins over both.
	Prices map[string]PriceEntry `json:"prices,omitempty"`
	// MaxOutputTokens is a call's answer budget when its Config sets none
	// (default 1024).
	MaxOutputTokens int `json:"max_output_tokens"`
	// Temperature is a call's temperature when its Config sets none (nil:
	// the model's default).
	Temperature *float64 `json:"temperature,omitempty"`
	// JSON is how an OpenAI-compatible server is asked for JSON when a
	// schema is given: schema (response_format json_schema, the default),
	// object (json_object, for servers without schemas) or off.
	JSON string `json:"json,omitempty"`

	// HTTPClient makes the requests (default: a client of its own).
	HTTPClient *http.Client `json:"-"`
	// Backoff is the wait before retry attempt n (default DefaultBackoff);
	// a provider's Retry-After takes its place when given.
	Backoff func(attempt int) time.Duration `json:"-"`
	// Sleep waits between attempts (default: a timer that stops when ctx
	// ends). Tests pass one that records the wait and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error `json:"-"`
	// Logger receives retries at debug level (never a key, a prompt or an
	// answer). Default: discard.
	Logger *slog.Logger `json:"-"`
}

// Provider names.
const (
	ProviderOpenAI       = "openai"
	ProviderAnthropic    = "anthropic"
	ProviderGemini       = "gemini"
	ProviderOllama       = "ollama"
	ProviderOllamaOpenAI = "ollama-openai"
	ProviderVLLM         = "vllm"
	ProviderLlamaCpp     = "llamacpp"
	ProviderLMStudio     = "lmstudio"
)

// Providers lists the provider names in a stable order.
var Providers = []string{ProviderOpenAI, ProviderAnthropic, ProviderGemini, ProviderOllama,
	ProviderOllamaOpenAI, ProviderVLLM, ProviderLlamaCpp, ProviderLMStudio}

// DefaultURLs are the providers' base URLs.
var DefaultURLs = map[string]string{
	ProviderOpenAI:       "https://api.openai.com/v1",
	ProviderAnthropic:    "https://api.anthropic.com/v1",
	ProviderGemini:       "https://generativelanguage.googleapis.com/v1beta",
	ProviderOllama:       "http://127.0.0.1:11434",
	ProviderOllamaOpenAI: "http://127.0.0.1:11434/v1",
	ProviderVLLM:         "http://127.0.0.1:8000/v1",
	ProviderLlamaCpp:     "http://127.0.0.1:8080/v1",
	ProviderLMStudio:     "http://127.0.0.1:1234/v1",
}

// DefaultModels are the hosted providers' default models (Gemini's is the
// one the grounded inner voice was designed with).
var DefaultModels = map[string]string{
	ProviderOpenAI:    "gpt-4o-mini",
	ProviderAnthropic: "claude-sonnet-4-5",
	ProviderGemini:    "gemini-2.5-pro",
}

// KeyVars names, per provider, the environment variables its API key is
// read from, first found wins; CAIRN_LLM_API_KEY, when set, wins over all.
// A provider with no variable here needs no key (one may still be given
// with CAIRN_LLM_API_KEY and is then sent as a bearer token).
var KeyVars = map[string][]string{
	ProviderOpenAI:       {"OPENAI_API_KEY"},
	ProviderAnthropic:    {"ANTHROPIC_API_KEY"},
	ProviderGemini:       {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
	ProviderVLLM:         {"VLLM_API_KEY"},
	ProviderLlamaCpp:     {"LLAMA_API_KEY"},
	ProviderOllama:       {"OLLAMA_API_KEY"},
	ProviderOllamaOpenAI: {"OLLAMA_API_KEY"},
}

// needsKey lists the providers that refuse every call without a key.
var needsKey = map[string]bool{ProviderOpenAI: true, ProviderAnthropic: true, ProviderGemini: true}

// local lists the providers that run on the user's machine: free, and
// with a window set when the server starts.
var local = map[string]bool{ProviderOllama: true, ProviderOllamaOpenAI: true, ProviderVLLM: true,
	ProviderLlamaCpp: true, ProviderLMStudio: true}

// SettingsFromEnv reads the LLM settings: CAIRN_LLM_PROVIDER (or the
// seed's SURR_INNER_VOICE_PROVIDER), CAIRN_LLM_MODEL
// (SURR_INNER_VOICE_MODEL), CAIRN_LLM_URL, CAIRN_LLM_TIMEOUT,
// CAIRN_LLM_RETRIES, CAIRN_LLM_CONTEXT_WINDOW, CAIRN_LLM_MAX_OUTPUT_TOKENS,
// CAIRN_LLM_TEMPERATURE (SURR_INNER_VOICE_TEMP), CAIRN_LLM_PRICE ("input/
// output" dollars per million tokens, like "2.5/10"), CAIRN_LLM_PRICES (a
// JSON object of model prefix → price, or a file holding one; see
// ParsePrices), CAIRN_LLM_JSON, and
// the key from CAIRN_LLM_API_KEY or the provider's own variable (KeyVars).
// The CAIRN_ name wins when both are set. It returns notes on every
// default filled in or setting overridden (never a key's value). With no
// provider set, Provider is "" and no model is configured.
func SettingsFromEnv(getenv func(string) string) (Settings, []string, error) {
	var notes []string
	pick := func(cairn, surr string) string {
		c, s := strings.TrimSpace(getenv(cairn)), strings.TrimSpace(getenv(surr))
		if c != "" && s != "" && c != s {
			notes = append(notes, fmt.Sprintf("%s=%q overrides %s=%q", cairn, c, surr, s))
		}
		if c != "" {
			return c
		}
		return s
	}
	s := Settings{
		Provider: strings.ToLower(pick("CAIRN_LLM_PROVIDER", "SURR_INNER_VOICE_PROVIDER")),
		Model:    pick("CAIRN_LLM_MODEL", "SURR_INNER_VOICE_MODEL"),
		BaseURL:  strings.TrimSpace(getenv("CAIRN_LLM_URL")),
		JSON:     strings.ToLower(strings.TrimSpace(getenv("CAIRN_LLM_JSON"))),
	}
	if s.Provider == "" {
		return Settings{}, notes, nil
	}
	if v := strings.TrimSpace(getenv("CAIRN_LLM_TIMEOUT")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 10*time.Minute {
			return s, notes, memory.Errorf(memory.CodeInvalidParams, "CAIRN_LLM_TIMEOUT=%q: want a duration up to 10m, like 60s", v)
		}
		s.Timeout = d
	}
	whole := func(name string, lo, hi int) (int, bool, error) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return 0, false, memory.Errorf(memory.CodeInvalidParams, "%s=%q: want a whole number from %d to %d", name, v, lo, hi)
		}
		return n, true, nil
	}
	if n, ok, err := whole("CAIRN_LLM_RETRIES", 0, 10); err != nil {
		return s, notes, err
	} else if ok {
		s.Retries = n
		if n == 0 {
			s.Retries = -1
		}
	}
	if n, ok, err := whole("CAIRN_LLM_CONTEXT_WINDOW", 512, 10_000_000); err != nil {
		return s, notes, err
	} else if ok {
		s.ContextWindow = n
	}
	if n, ok, err := whole("CAIRN_LLM_MAX_OUTPUT_TOKENS", 16, 1_000_000); err != nil {
		return s, notes, err
	} else if ok {
		s.MaxOutputTokens = n
	}
	if v := pick("CAIRN_LLM_TEMPERATURE", "SURR_INNER_VOICE_TEMP"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 2 {
			return s, notes, memory.Errorf(memory.CodeInvalidParams, "temperature %q: want a number from 0 to 2", v)
		}
		s.Temperature = &f
	}
	if v := strings.TrimSpace(getenv("CAIRN_LLM_PRICE")); v != "" {
		p, err := ParsePrice(v)
		if err != nil {
			return s, notes, err
		}
		s.Price = &p
	}
	if v := strings.TrimSpace(getenv("CAIRN_LLM_PRICES")); v != "" {
		ps, err := ParsePrices(v)
		if err != nil {
			return s, notes, err
		}
		s.Prices = ps
	}
	if k := strings.TrimSpace(getenv("CAIRN_LLM_API_KEY")); k != "" {
		s.APIKey = Secret(k)
	} else {
		for _, name := range KeyVars[s.Provider] {
			if k := strings.TrimSpace(getenv(name)); k != "" {
				s.APIKey = Secret(k)
				break
			}
		}
	}
	checked, more, err := s.check()
	return checked, append(notes, more...), err
}

// ParsePrice reads "input/output" dollars per million tokens ("2.5/10").
func ParsePrice(v string) (Price, error) {
	in, out, ok := strings.Cut(v, "/")
	a, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(out), 64)
	if !ok || err1 != nil || err2 != nil || a < 0 || b < 0 || math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return Price{}, memory.Errorf(memory.CodeInvalidParams,
			"price %q: want input/output US dollars per million tokens, like 2.5/10", v)
	}
	return Price{Input: a, Output: b}, nil
}

var schemaNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// check validates s and fills in its defaults, with a note for each.
func (s Settings) check() (Settings, []string, error) {
	var notes []string
	s.Provider = strings.ToLower(strings.TrimSpace(s.Provider))
	if _, ok := DefaultURLs[s.Provider]; !ok {
		return s, notes, memory.Errorf(memory.CodeInvalidParams, "unknown LLM provider %q: want one of %s", s.Provider, strings.Join(Providers, ", "))
	}
	if s.Model == "" {
		m, ok := DefaultModels[s.Provider]
		if !ok {
			return s, notes, memory.Errorf(memory.CodeInvalidParams, "the %s provider needs a model name (CAIRN_LLM_MODEL)", s.Provider)
		}
		s.Model = m
		notes = append(notes, fmt.Sprintf("LLM model defaults to %s", m))
	}
	if s.BaseURL == "" {
		s.BaseURL = DefaultURLs[s.Provider]
	}
	s.BaseURL = strings.TrimRight(s.BaseURL, "/")
	if !strings.HasPrefix(s.BaseURL, "http://") && !strings.HasPrefix(s.BaseURL, "https://") {
		return s, notes, memory.Errorf(memory.CodeInvalidParams, "the LLM base URL must start with http:// or https://")
	}
	if needsKey[s.Provider] && !s.APIKey.Set() {
		return s, notes, memory.Errorf(memory.CodeInvalidParams, "the %s provider needs an API key: set %s (or CAIRN_LLM_API_KEY)",
			s.Provider, strings.Join(KeyVars[s.Provider], " or "))
	}
	if s.Timeout <= 0 {
		s.Timeout = 60 * time.Second
	}
	if s.Retries == 0 {
		s.Retries = 2 // negative stays negative: never, however often checked
	}
	if s.MaxRetryAfter <= 0 {
		s.MaxRetryAfter = 30 * time.Second
	}
	if s.MaxOutputTokens <= 0 {
		s.MaxOutputTokens = 1024
	}
	keys := make([]string, 0, len(s.Prices))
	for k := range s.Prices {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := checkPriceEntry(k, s.Prices[k]); err != nil {
			return s, notes, memory.Errorf(memory.CodeInvalidParams, "CAIRN_LLM_PRICES entry %q: %s", k, err.Error())
		}
	}
	if s.Price != nil {
		if err := checkPriceEntry("price", PriceEntry{Input: s.Price.Input, Output: s.Price.Output}); err != nil {
			return s, notes, memory.Errorf(memory.CodeInvalidParams, "CAIRN_LLM_PRICE: %s", err.Error())
		}
	}
	if s.ContextWindow <= 0 {
		info, _, overridden, ok := lookup(s.Model, s.Prices)
		if ok && info.ContextWindow > 0 && (!local[s.Provider] || overridden) {
			s.ContextWindow = info.ContextWindow
		} else {
			s.ContextWindow = DefaultContextWindow
			notes = append(notes, fmt.Sprintf("LLM context window of %s defaults to %d tokens (set CAIRN_LLM_CONTEXT_WINDOW)", s.Model, DefaultContextWindow))
		}
	}
	if s.MaxOutputTokens >= s.ContextWindow {
		return s, notes, memory.Errorf(memory.CodeInvalidParams, "the answer budget of %d tokens does not fit the context window of %d", s.MaxOutputTokens, s.ContextWindow)
	}
	switch s.JSON {
	case "":
		s.JSON = "schema"
	case "schema", "object", "off":
	default:
		return s, notes, memory.Errorf(memory.CodeInvalidParams, "CAIRN_LLM_JSON=%q: want schema, object or off", s.JSON)
	}
	if !s.ModelPrice().Known {
		notes = append(notes, fmt.Sprintf("LLM model %s has no price in cairn's table: costs read 0 (set CAIRN_LLM_PRICE or CAIRN_LLM_PRICES)", s.Model))
	}
	return s, notes, nil
}

// MarshalJSON writes the settings with durations as strings ("60s") and
// the key as whether one is set, never its value.
func (s Settings) MarshalJSON() ([]byte, error) {
	type plain Settings
	out := struct {
		plain
		Timeout       string `json:"timeout,omitempty"`
		MaxRetryAfter string `json:"max_retry_after,omitempty"`
		APIKey        bool   `json:"api_key_set"`
	}{plain: plain(s), APIKey: s.APIKey.Set()}
	if s.Timeout > 0 {
		out.Timeout = s.Timeout.String()
	}
	if s.MaxRetryAfter > 0 {
		out.MaxRetryAfter = s.MaxRetryAfter.String()
	}
	return json.Marshal(out)
}

// New makes the client s describes: feature_disabled when no provider is
// set, invalid_params when a setting cannot work.
func New(s Settings) (Client, error) {
	if strings.TrimSpace(s.Provider) == "" {
		return nil, memory.Errorf(memory.CodeFeatureDisabled, "no LLM is configured: set CAIRN_LLM_PROVIDER (%s)", strings.Join(Providers, ", "))
	}
	s, _, err := s.check()
	if err != nil {
		return nil, err
	}
	b := newBase(s)
	switch s.Provider {
	case ProviderAnthropic:
		b.t.auth = anthropicAuth
		b.t.headers = map[string]string{"anthropic-version": AnthropicVersion}
		return &Anthropic{base: b}, nil
	case ProviderGemini:
		b.t.auth = geminiAuth
		return &Gemini{base: b}, nil
	case ProviderOllama:
		return &Ollama{base: b}, nil
	default:
		return &OpenAI{base: b}, nil
	}
}
