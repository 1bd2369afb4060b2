package llm

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// base is what every client shares: its settings, its transport and its
// token counter.
type base struct {
	s     Settings
	t     *transport
	count counter
}

func newBase(s Settings) base {
	t := &transport{
		provider:      s.Provider,
		model:         s.Model,
		key:           s.APIKey,
		timeout:       s.Timeout,
		retries:       max(s.Retries, 0),
		maxRetryAfter: s.MaxRetryAfter,
		backoff:       s.Backoff,
		sleep:         s.Sleep,
		client:        s.HTTPClient,
		log:           logger(s.Logger),
		auth:          func(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) },
	}
	if t.backoff == nil {
		t.backoff = DefaultBackoff
	}
	if t.sleep == nil {
		t.sleep = sleepCtx
	}
	if t.client == nil {
		t.client = &http.Client{}
	}
	return base{s: s, t: t, count: counterFor(s.Provider, s.Model)}
}

// Provider implements Client.
func (b *base) Provider() string { return b.s.Provider }

// Model implements Client.
func (b *base) Model() string { return b.s.Model }

// ContextWindow implements Client.
func (b *base) ContextWindow() int { return b.s.ContextWindow }

// Price implements Client: the configured price, the table's (with
// Settings.Prices laid over it), or zero (known) for a server on the
// user's machine (Settings.ModelPrice).
func (b *base) Price() (Price, bool) {
	mp := b.s.ModelPrice()
	return mp.Price, mp.Known
}

// CountTokens implements Client.
func (b *base) CountTokens(p Prompt, cfg Config) int { return b.count.prompt(p, cfg) }

// Exact implements Client.
func (b *base) Exact() bool { return b.count.exact }

// prepare checks a call before anything is sent and fills in cfg's
// defaults: the prompt must end with a user's turn, the schema must be a
// JSON object, and the prompt with the answer's budget must fit the
// context window. It returns the prompt's token count.
func (b *base) prepare(p Prompt, cfg Config) (Config, int, error) {
	if len(p.Messages) == 0 || p.Messages[len(p.Messages)-1].Role != RoleUser || strings.TrimSpace(p.Messages[len(p.Messages)-1].Content) == "" {
		return cfg, 0, memory.Errorf(memory.CodeInvalidParams, "a prompt must end with a user's message that is not empty")
	}
	for _, m := range p.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return cfg, 0, memory.Errorf(memory.CodeInvalidParams, "a prompt's message has role %q: want user or assistant", m.Role)
		}
	}
	if cfg.MaxOutputTokens <= 0 {
		cfg.MaxOutputTokens = b.s.MaxOutputTokens
	}
	if cfg.Temperature == nil {
		cfg.Temperature = b.s.Temperature
	}
	if t := cfg.Temperature; t != nil && (*t < 0 || *t > 2) {
		return cfg, 0, memory.Errorf(memory.CodeInvalidParams, "temperature %v: want a number from 0 to 2", *t)
	}
	if len(cfg.Schema) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(cfg.Schema, &obj); err != nil {
			return cfg, 0, memory.Errorf(memory.CodeInvalidParams, "the answer's schema is not a JSON object")
		}
		if cfg.SchemaName == "" {
			cfg.SchemaName = "answer"
		}
		if !schemaNameRE.MatchString(cfg.SchemaName) {
			return cfg, 0, memory.Errorf(memory.CodeInvalidParams, "schema name %q: want 1 to 64 letters, digits, _ or -", cfg.SchemaName)
		}
	}
	n := b.count.prompt(p, cfg)
	if n+cfg.MaxOutputTokens > b.s.ContextWindow {
		kind := "is"
		if !b.count.exact {
			kind = "is estimated at"
		}
		return cfg, n, memory.Errorf(memory.CodeInvalidParams,
			"the prompt %s %d tokens and the answer may take %d: together they exceed the context window of %s (%d tokens); nothing was sent",
			kind, n, cfg.MaxOutputTokens, b.s.Model, b.s.ContextWindow)
	}
	return cfg, n, nil
}

// finish fills in what every response carries: the tokens (counted when
// the provider reported none), the cost, the latency and the attempts.
func (b *base) finish(r *Response, promptTokens int, start time.Time, attempts int) {
	if r.PromptTokens > 0 || r.CompletionTokens > 0 {
		r.UsageReported = true
	} else {
		r.PromptTokens = promptTokens
		r.CompletionTokens = b.count.text(r.Text)
	}
	if r.Model == "" {
		r.Model = b.s.Model
	}
	p, known := b.Price()
	r.Cost, r.CostKnown = p.Cost(r.PromptTokens, r.CompletionTokens), known
	r.Latency = time.Since(start)
	r.Attempts = attempts
}

// malformed is the error of a 200 answer that lacks what its API promises.
func (b *base) malformed(what string) error {
	return memory.Errorf(CodeUnavailable, "the %s model is unavailable: its answer is not in its API's shape (%s)", b.s.Provider, what)
}
