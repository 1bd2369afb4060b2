package embed

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/embed/glove"
	"github.com/cairnhq/cairn/memory"
)

// Config chooses the embedder. It is read once at start-up; the embedder
// it makes is used for every call.
type Config struct {
	// Provider is glove (default), ollama, openai or hash.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Dim      int    `json:"dim"`
	// BaseURL is the remote provider's base URL (defaults per provider).
	BaseURL string `json:"baseURL,omitempty"`
	// APIKey is sent as a bearer token to remote providers.
	APIKey string `json:"-"`
	// Timeout bounds one request to a remote provider.
	Timeout time.Duration `json:"-"`
	// Retries is how many times a failed request to a remote provider is
	// retried (nil: the default, 3; 0: never).
	Retries *int `json:"retries,omitempty"`
}

// MarshalJSON writes the configuration with the timeout as a duration
// string ("30s"), and never the API key.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	out := struct {
		plain
		Timeout   string `json:"timeout,omitempty"`
		HasAPIKey bool   `json:"apiKeySet,omitempty"`
	}{plain: plain(c), HasAPIKey: c.APIKey != ""}
	if c.Timeout > 0 {
		out.Timeout = c.Timeout.String()
	}
	return json.Marshal(out)
}

// knownDims are the dimensions of common models, used when no dimension is
// configured.
var knownDims = map[string]int{
	"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536,
	"nomic-embed-text": 768, "mxbai-embed-large": 1024, "all-minilm": 384, "snowflake-arctic-embed": 1024, "bge-m3": 1024,
}

// ConfigFromEnv reads the embedder settings: CAIRN_EMBED_PROVIDER,
// CAIRN_EMBED_MODEL, CAIRN_EMBED_DIM, CAIRN_EMBED_URL, CAIRN_EMBED_API_KEY
// (for openai, OPENAI_API_KEY too), CAIRN_EMBED_TIMEOUT and
// CAIRN_EMBED_RETRIES, and the seed's
// names SURR_EMBED_PROVIDER, SURR_EMBED_MODEL and SURR_EMBED_DIM (the
// CAIRN_ name wins when both are set). It returns notes on every default
// filled in or setting overridden.
func ConfigFromEnv(getenv func(string) string) (Config, []string, error) {
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
	c := Config{
		Provider: strings.ToLower(pick("CAIRN_EMBED_PROVIDER", "SURR_EMBED_PROVIDER")),
		Model:    pick("CAIRN_EMBED_MODEL", "SURR_EMBED_MODEL"),
		BaseURL:  strings.TrimSpace(getenv("CAIRN_EMBED_URL")),
		APIKey:   strings.TrimSpace(getenv("CAIRN_EMBED_API_KEY")),
		Timeout:  30 * time.Second,
	}
	if c.Provider == "" {
		c.Provider = "glove"
	}
	if d := pick("CAIRN_EMBED_DIM", "SURR_EMBED_DIM"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 || n > 16384 {
			return c, notes, memory.Errorf(memory.CodeInvalidParams, "embedding dimension %q: want a whole number from 1 to 16384", d)
		}
		c.Dim = n
	}
	if t := strings.TrimSpace(getenv("CAIRN_EMBED_TIMEOUT")); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 || d > 10*time.Minute {
			return c, notes, memory.Errorf(memory.CodeInvalidParams, "CAIRN_EMBED_TIMEOUT=%q: want a duration up to 10m, like 30s", t)
		}
		c.Timeout = d
	}
	retries := 3
	if v := strings.TrimSpace(getenv("CAIRN_EMBED_RETRIES")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 10 {
			return c, notes, memory.Errorf(memory.CodeInvalidParams, "CAIRN_EMBED_RETRIES=%q: want a whole number from 0 to 10", v)
		}
		retries = n
	}
	c.Retries = &retries
	switch c.Provider {
	case "glove":
		if c.Model != "" && c.Model != glove.Model {
			return c, notes, memory.Errorf(memory.CodeInvalidParams, "the glove embedder has one model, %s (got %q)", glove.Model, c.Model)
		}
		if c.Dim != 0 && c.Dim != glove.Dim {
			return c, notes, memory.Errorf(memory.CodeInvalidParams, "the glove embedder has %d dimensions (got %d)", glove.Dim, c.Dim)
		}
		c.Model, c.Dim = glove.Model, glove.Dim
	case "hash":
		if c.Dim == 0 {
			c.Dim = 256
			notes = append(notes, "hash embedder: dimension defaults to 256")
		}
		c.Model = "fnv1a-words"
	case "ollama", "openai":
		if c.Model == "" {
			return c, notes, memory.Errorf(memory.CodeInvalidParams, "the %s embedder needs a model (CAIRN_EMBED_MODEL or SURR_EMBED_MODEL)", c.Provider)
		}
		if c.Dim == 0 {
			d, ok := knownDims[strings.SplitN(c.Model, ":", 2)[0]]
			if !ok {
				return c, notes, memory.Errorf(memory.CodeInvalidParams, "the dimension of %s %q is unknown: set CAIRN_EMBED_DIM (or SURR_EMBED_DIM)", c.Provider, c.Model)
			}
			c.Dim = d
			notes = append(notes, fmt.Sprintf("%s model %s: dimension %d (known default)", c.Provider, c.Model, d))
		}
		if c.Provider == "openai" && c.APIKey == "" {
			c.APIKey = strings.TrimSpace(getenv("OPENAI_API_KEY"))
		}
	default:
		return c, notes, memory.Errorf(memory.CodeInvalidParams, "unknown embedder %q (want glove, ollama, openai or hash)", c.Provider)
	}
	return c, notes, nil
}

// New makes the embedder the configuration names.
func (c Config) New() (Embedder, error) {
	r := Remote{BaseURL: c.BaseURL, Model: c.Model, Dim: c.Dim, APIKey: c.APIKey, Timeout: c.Timeout}
	if c.Retries != nil {
		r.Retries = *c.Retries
		if r.Retries == 0 {
			r.Retries = -1 // Remote reads 0 as the default
		}
	}
	switch c.Provider {
	case "glove", "":
		return NewGloVe()
	case "hash":
		return Hash{Dim: c.Dim}, nil
	case "ollama":
		return NewOllama(r), nil
	case "openai":
		return NewOpenAI(r), nil
	}
	return nil, memory.Errorf(memory.CodeInvalidParams, "unknown embedder %q", c.Provider)
}
