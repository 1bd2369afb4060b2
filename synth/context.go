package synth

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/memory"
)

// Turn is an earlier exchange of a conversation: the question and the
// answer given ("" when none was).
type Turn struct {
	Query  string `json:"query"`
	Answer string `json:"answer"`
}

// Conversation is what a session brings to a prompt: its topic, the
// rolling summary of its older exchanges and its recent ones, oldest
// first. It is context for the model, never a source: nothing in it may
// be cited, so an answer resting on it alone is refused.
type Conversation struct {
	Topic   string
	Summary string
	Turns   []Turn
}

// empty reports whether c adds nothing to a prompt.
func (c Conversation) empty() bool {
	return strings.TrimSpace(c.Topic) == "" && strings.TrimSpace(c.Summary) == "" && len(c.Turns) == 0
}

// conversationNote is added to the system instruction when a prompt
// carries a conversation.
const conversationNote = " The conversation so far is given as context for the question only: it is not a source, and nothing may be cited from it."

// SessionPrompt is DefaultPrompt with the conversation before the
// sources: the thread's topic, its summary and its recent exchanges.
func SessionPrompt(c Conversation) PromptFunc {
	return func(query string, sources []Source) (string, string) {
		system, user := DefaultPrompt(query, sources)
		if c.empty() {
			return system, user
		}
		return system + conversationNote, renderConversation(c) + "\n" + user
	}
}

func renderConversation(c Conversation) string {
	var b strings.Builder
	b.WriteString("Conversation so far (context only, not a source):\n")
	if t := oneLine(c.Topic); t != "" {
		b.WriteString("Topic: " + t + "\n")
	}
	if s := oneLine(c.Summary); s != "" {
		b.WriteString("Summary: " + s + "\n")
	}
	for _, t := range c.Turns {
		b.WriteString(turnText(t))
	}
	return b.String()
}

func turnText(t Turn) string {
	a := oneLine(t.Answer)
	if a == "" {
		a = "(no grounded answer)"
	}
	return "Q: " + oneLine(t.Query) + "\nA: " + a + "\n"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ContextOptions bound a prompt.
type ContextOptions struct {
	// MaxTokens is the hard budget of the whole prompt: the system
	// instruction, the conversation, the sources, the question and the
	// answer's schema, with room kept for one retry after a malformed
	// answer (RetryText). It must be positive.
	MaxTokens int
	// CountText counts the tokens of a piece of text (default
	// content.EstimateTokens); it chooses what goes in.
	CountText func(string) int
	// CountPrompt counts a whole prompt as it is sent, schema included
	// (default: CountText of the system instruction, the message and
	// GroundedSchema, plus a few tokens a message); it has the last word.
	CountPrompt func(system, user string) int
}

// Context is what a prompt holds after budgeting: the conversation and
// sources kept, and what was left out.
type Context struct {
	Conversation Conversation `json:"-"`
	Sources      []Source     `json:"-"`
	// Budget is MaxTokens; PromptTokens the prompt's count (CountPrompt)
	// and Reserved the tokens kept for a retry.
	Budget       int `json:"budget"`
	PromptTokens int `json:"prompt_tokens"`
	Reserved     int `json:"reserved_for_retry"`
	// Summary says the rolling summary went in; Exchanges and Sources
	// count what went in, Dropped... what did not fit.
	Summary          bool `json:"summary"`
	Exchanges        int  `json:"exchanges"`
	SourceCount      int  `json:"sources"`
	DroppedSummary   bool `json:"dropped_summary,omitempty"`
	DroppedExchanges int  `json:"dropped_exchanges"`
	DroppedSources   int  `json:"dropped_sources"`
}

// RetryText is the longest message LLMSynthesizer adds when it asks again
// after a malformed answer; a budgeted prompt keeps room for it.
func RetryText() string {
	return "\n\n" + restate(`a source is not an object with a "source_id" and a "span", both strings`)
}

// keepConversation keeps what of the conversation fits within limit
// tokens: its topic, its summary, then its exchanges newest first; ctx
// records what was dropped. used is what the kept part takes.
func keepConversation(conv Conversation, countText func(string) int, limit int, ctx *Context) (kept Conversation, used int) {
	kept = Conversation{Topic: conv.Topic}
	if t := oneLine(conv.Topic); t != "" {
		used += countText("Conversation so far (context only, not a source):\nTopic: " + t + "\n")
	}
	if s := oneLine(conv.Summary); s != "" {
		if n := countText("Summary: " + s + "\n"); used+n <= limit {
			kept.Summary, used = conv.Summary, used+n
		} else {
			ctx.DroppedSummary = true
		}
	}
	var turns []Turn
	for i := len(conv.Turns) - 1; i >= 0; i-- {
		n := countText(turnText(conv.Turns[i]))
		if used+n > limit {
			ctx.DroppedExchanges = i + 1
			break
		}
		turns = append(turns, conv.Turns[i])
		used += n
	}
	slices.Reverse(turns)
	kept.Turns = turns
	return kept, used
}

// BuildContext fits a question, a conversation and sources into
// opts.MaxTokens, in the specification's order of precedence: the rolling
// summary, then the recent exchanges, newest first, while the two take at
// most a third of the budget, then the sources, most relevant first, while
// the whole prompt fits (a source too large to fit is skipped for a
// smaller one). The prompt is then counted as sent (CountPrompt) and, while
// it is over, the least relevant source kept, then the oldest exchange,
// then the summary are dropped. It fails with invalid_params when the
// question alone does not fit.
func BuildContext(question string, conv Conversation, sources []Source, opts ContextOptions) (Context, error) {
	if opts.MaxTokens <= 0 {
		return Context{}, memory.Errorf(memory.CodeInvalidParams, "the prompt budget must be positive")
	}
	countText := opts.CountText
	if countText == nil {
		countText = content.EstimateTokens
	}
	countPrompt := opts.CountPrompt
	if countPrompt == nil {
		countPrompt = func(system, user string) int {
			return countText(system) + countText(user) + countText(string(GroundedSchema)) + 12
		}
	}
	ctx := Context{Budget: opts.MaxTokens, Reserved: countText(RetryText())}
	measure := func(c Conversation, ss []Source) int {
		system, user := SessionPrompt(c)(question, ss)
		return countPrompt(system, user) + ctx.Reserved
	}
	base := measure(Conversation{}, nil)
	if base > opts.MaxTokens {
		return ctx, memory.Errorf(memory.CodeInvalidParams,
			"the question and the instructions take %d tokens with room for a retry, over the prompt budget of %d (SURR_INNER_VOICE_MAX_TOKENS)",
			base, opts.MaxTokens)
	}
	avail := opts.MaxTokens - base
	kept, used := keepConversation(conv, countText, min(opts.MaxTokens/3, avail), &ctx)

	order := make([]int, 0, len(sources))
	for i, s := range sources {
		if strings.TrimSpace(s.Text) != "" {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sources[b].Relevance, sources[a].Relevance) })
	var chosen []int
	for _, i := range order {
		s := sources[i]
		n := countText(fmt.Sprintf("[%s] (%s) %s\n", s.ID, cmp.Or(s.Type, "memory"), oneLine(s.Text)))
		if used+n > avail {
			ctx.DroppedSources++
			continue
		}
		chosen = append(chosen, i)
		used += n
	}
	pick := func() []Source {
		idx := slices.Clone(chosen)
		slices.Sort(idx)
		out := make([]Source, len(idx))
		for k, i := range idx {
			out[k] = sources[i]
		}
		return out
	}
	// The last word: the prompt as sent.
	for {
		n := measure(kept, pick())
		if n <= opts.MaxTokens {
			ctx.PromptTokens = n - ctx.Reserved
			break
		}
		switch {
		case len(chosen) > 0:
			chosen = chosen[:len(chosen)-1]
			ctx.DroppedSources++
		case len(kept.Turns) > 0:
			kept.Turns = kept.Turns[1:]
			ctx.DroppedExchanges++
		case kept.Summary != "":
			kept.Summary, ctx.DroppedSummary = "", true
		case kept.Topic != "":
			kept.Topic = ""
		default:
			return ctx, memory.Errorf(memory.CodeInvalidParams, "the question does not fit the prompt budget of %d tokens", opts.MaxTokens)
		}
	}
	ctx.Conversation, ctx.Sources = kept, pick()
	ctx.Summary, ctx.Exchanges, ctx.SourceCount = kept.Summary != "", len(kept.Turns), len(ctx.Sources)
	return ctx, nil
}
