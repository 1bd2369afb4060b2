package llm

import (
	"strings"
	"sync"

	"github.com/cairnhq/cairn/content"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Token counting. OpenAI's models use tiktoken's o200k_base (GPT-4o,
// GPT-4.1, GPT-5, the o-series) or cl100k_base (GPT-4, GPT-3.5), whose BPE
// ranks ship inside the binary (tiktoken-go-loader: nothing is fetched)
// and load on the first count, about 300 ms, once per process. Other
// providers' tokenizers are not public or not bundled: their count is
// cl100k_base's plus EstimateMargin, an overestimate on purpose, so the
// context-window check never lets through a prompt the model would cut.

// EstimateMargin is the share added to cl100k_base's count for a model
// whose own tokenizer cairn does not have.
const EstimateMargin = 0.2

// Per-message overheads of the chat format (role markers, separators), as
// OpenAI documents them: 3 tokens a message, 3 more to prime the reply.
const (
	tokensPerMessage = 3
	tokensReply      = 3
)

// encodings are the loaded BPE tables, shared by every client of the
// process: read-only once built, and costly to build.
var encodings struct {
	sync.Mutex
	loader sync.Once
	byName map[string]*lazyEncoding
}

type lazyEncoding struct {
	once sync.Once
	tk   *tiktoken.Tiktoken
}

// encoding returns the named encoding, loading it on first use; nil if it
// cannot be loaded (the count then falls back to content.EstimateTokens).
func encoding(name string) *tiktoken.Tiktoken {
	encodings.loader.Do(func() { tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader()) })
	encodings.Lock()
	if encodings.byName == nil {
		encodings.byName = map[string]*lazyEncoding{}
	}
	e := encodings.byName[name]
	if e == nil {
		e = &lazyEncoding{}
		encodings.byName[name] = e
	}
	encodings.Unlock()
	e.once.Do(func() {
		if tk, err := tiktoken.GetEncoding(name); err == nil {
			e.tk = tk
		}
	})
	return e.tk
}

// counter counts tokens for one model.
type counter struct {
	encoding string
	exact    bool
}

// counterFor picks the tokenizer of model at provider.
func counterFor(provider, model string) counter {
	if provider == "openai" {
		m := strings.ToLower(model)
		switch {
		case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-4.5"),
			strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
			return counter{encoding: "o200k_base", exact: true}
		case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"):
			return counter{encoding: "cl100k_base", exact: true}
		}
	}
	return counter{encoding: "cl100k_base"}
}

// text counts the tokens of s.
func (c counter) text(s string) int {
	if s == "" {
		return 0
	}
	tk := encoding(c.encoding)
	var n int
	if tk == nil {
		n = content.EstimateTokens(s)
	} else {
		n = len(tk.EncodeOrdinary(s))
	}
	return n
}

// prompt counts a whole prompt as sent with cfg: the system instruction
// and every message with the chat format's overheads, and the schema.
func (c counter) prompt(p Prompt, cfg Config) int {
	n := tokensReply
	if p.System != "" {
		n += tokensPerMessage + c.text(p.System)
	}
	for _, m := range p.Messages {
		n += tokensPerMessage + c.text(m.Content)
	}
	if len(cfg.Schema) > 0 {
		n += tokensPerMessage + c.text(string(cfg.Schema))
	}
	if !c.exact {
		n += int(float64(n)*EstimateMargin + 0.999)
	}
	return n
}
