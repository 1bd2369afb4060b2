package synth

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// Sessions: inner_voice keeps its exchanges in threads (the store's
// memory.InnerVoiceSession), folds the older ones into a rolling summary,
// and builds each prompt from the summary, the recent exchanges and the
// knowledge retrieved for the question, within a token budget.

// Session defaults and bounds, as the specification sets them.
const (
	DefaultMaxPromptTokens = 8000
	MinMaxPromptTokens     = 512
	MaxMaxPromptTokens     = 2_000_000
	DefaultSessionTimeout  = 24 * time.Hour
	// SummaryAfter: once a session's window (its exchanges not yet
	// summarised) holds more exchanges than this, the older ones are
	// folded into the rolling summary.
	SummaryAfter = 10
	// SummaryKeep is how many recent exchanges stay in the window after a
	// summary.
	SummaryKeep = 5
)

// Context policies: what knowledge goes into a grounded answer's context.
const (
	// ContextKG is the specification's KG-only injection: entities and
	// facts of the knowledge graph, no raw thoughts.
	ContextKG = "kg"
	// ContextBoth is the graph and thoughts, shared by the inner voice's
	// mix (SURR_INNER_VOICE_MIX).
	ContextBoth = "kg+thoughts"
	// ContextThoughts is thoughts only.
	ContextThoughts = "thoughts"
)

// ContextPolicies lists the policies.
var ContextPolicies = []string{ContextKG, ContextBoth, ContextThoughts}

// SessionConfig is the configuration of inner_voice's sessions and
// prompts, read once at start-up.
type SessionConfig struct {
	// MaxPromptTokens is the hard budget of one prompt
	// (SURR_INNER_VOICE_MAX_TOKENS, 512 to 2,000,000; default 8000).
	MaxPromptTokens int `json:"maxPromptTokens"`
	// Timeout is how long a session stays active without an exchange
	// (SURR_INNER_VOICE_TIMEOUT: hours, or a duration such as 90m;
	// default 24h).
	Timeout time.Duration `json:"-"`
	// Context is the default context policy (CAIRN_INNER_VOICE_CONTEXT:
	// kg, kg+thoughts or thoughts). Empty: kg when a language model
	// answers, thoughts for the extractive synthesiser.
	Context string `json:"context,omitempty"`
	// NoMetrics turns inner_voice's metrics off (SURR_INNER_VOICE_METRICS=0;
	// default on): no metric series updates, no per-call metric log line,
	// and exchanges recorded without figures (tokens, latency, cost), so
	// the stored aggregates (the sessions' lifetime tokens and cost, and
	// the totals of every session) do not move.
	NoMetrics bool `json:"-"`
	// NoCostTracking turns cost tracking off
	// (SURR_INNER_VOICE_COST_TRACKING=0; default on): no cost is taken
	// from the model's calls or stored, and every cost field is 0.
	NoCostTracking bool `json:"-"`
}

// DefaultSessionConfig is the configuration with nothing set.
func DefaultSessionConfig() SessionConfig {
	return SessionConfig{MaxPromptTokens: DefaultMaxPromptTokens, Timeout: DefaultSessionTimeout}
}

// ParseContextPolicy reads a context policy ("kg", "kg+thoughts" or
// "both", "thoughts"); invalid_params otherwise.
func ParseContextPolicy(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "kg", "kg-only", "kg_only":
		return ContextKG, nil
	case "kg+thoughts", "both", "kg_thoughts", "kg,thoughts":
		return ContextBoth, nil
	case "thoughts":
		return ContextThoughts, nil
	}
	return "", memory.Errorf(memory.CodeInvalidParams, "context %q: want kg (the knowledge graph only), kg+thoughts or thoughts", v)
}

// SessionConfigFromEnv reads SURR_INNER_VOICE_MAX_TOKENS,
// SURR_INNER_VOICE_TIMEOUT, CAIRN_INNER_VOICE_CONTEXT,
// SURR_INNER_VOICE_METRICS and SURR_INNER_VOICE_COST_TRACKING. A number
// out of bounds is clamped and a value that cannot be read ignored (a
// switch stays on), each with a warning; an unknown context policy is an
// error.
func SessionConfigFromEnv(getenv func(string) string) (SessionConfig, []string, error) {
	c := DefaultSessionConfig()
	var warns []string
	if v := strings.TrimSpace(getenv("SURR_INNER_VOICE_MAX_TOKENS")); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
			warns = append(warns, fmt.Sprintf("SURR_INNER_VOICE_MAX_TOKENS=%q is not a number; using %d", v, c.MaxPromptTokens))
		default:
			c.MaxPromptTokens = min(MaxMaxPromptTokens, max(MinMaxPromptTokens, int(math.Round(f))))
			if float64(c.MaxPromptTokens) != f {
				warns = append(warns, fmt.Sprintf("SURR_INNER_VOICE_MAX_TOKENS=%v is outside [%d, %d] or not whole; set to %d",
					f, MinMaxPromptTokens, MaxMaxPromptTokens, c.MaxPromptTokens))
			}
		}
	}
	if v := strings.TrimSpace(getenv("SURR_INNER_VOICE_TIMEOUT")); v != "" {
		d, ok := parseHours(v)
		switch {
		case !ok:
			warns = append(warns, fmt.Sprintf("SURR_INNER_VOICE_TIMEOUT=%q is neither hours nor a duration; using %s", v, c.Timeout))
		case d < time.Minute || d > 365*24*time.Hour:
			c.Timeout = min(365*24*time.Hour, max(time.Minute, d))
			warns = append(warns, fmt.Sprintf("SURR_INNER_VOICE_TIMEOUT=%q is outside 1m to 8760h; set to %s", v, c.Timeout))
		default:
			c.Timeout = d
		}
	}
	if v := strings.TrimSpace(getenv("CAIRN_INNER_VOICE_CONTEXT")); v != "" {
		p, err := ParseContextPolicy(v)
		if err != nil {
			return c, warns, memory.Errorf(memory.CodeInvalidParams, "CAIRN_INNER_VOICE_CONTEXT=%q: want kg, kg+thoughts or thoughts", v)
		}
		c.Context = p
	}
	for _, sw := range []struct {
		name string
		off  *bool
	}{{"SURR_INNER_VOICE_METRICS", &c.NoMetrics}, {"SURR_INNER_VOICE_COST_TRACKING", &c.NoCostTracking}} {
		switch v := strings.ToLower(strings.TrimSpace(getenv(sw.name))); v {
		case "", "1", "true", "yes", "on":
		case "0", "false", "no", "off":
			*sw.off = true
		default:
			warns = append(warns, fmt.Sprintf("%s=%q is not 1 or 0; it stays on", sw.name, v))
		}
	}
	return c, warns, nil
}

// parseHours reads a number of hours ("24", "0.5") or a duration ("90m").
func parseHours(v string) (time.Duration, bool) {
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return time.Duration(f * float64(time.Hour)), true
	}
	d, err := time.ParseDuration(v)
	return d, err == nil
}

// Summary sources are typed so a prompt and a note can tell them apart
// from memories.
const (
	SourceExchange = "inner_voice_exchange"
	SourceSummary  = "inner_voice_summary"
	// summarySourceID is the previous summary's id among a summary's
	// sources.
	summarySourceID = "rolling_summary"
)

// SummaryFold returns the exchanges of a session's window (its exchanges
// after the summary, in order) that a rolling summary should fold in: all
// but the SummaryKeep most recent, once the window holds more than
// SummaryAfter; none before.
func SummaryFold(window []memory.InnerVoiceExchange) []memory.InnerVoiceExchange {
	if len(window) <= SummaryAfter {
		return nil
	}
	return window[:len(window)-SummaryKeep]
}

// SummaryInput is what a synthesiser is asked to make a rolling summary:
// a question naming the thread's topic and the folded exchanges'
// questions, and as sources the previous summary and the folded
// exchanges' answers (refused, redacted and empty ones are left out, and
// an answer given again counts once).
// The summary is held to the same grounding rules as any answer: every
// sentence must rest on these sources.
func SummaryInput(topic, previous string, fold []memory.InnerVoiceExchange) (question string, sources []Source) {
	var qs []string
	if t := oneLine(topic); t != "" {
		qs = append(qs, t)
	}
	if strings.TrimSpace(previous) != "" {
		sources = append(sources, Source{ID: summarySourceID, Type: SourceSummary, Text: previous, Relevance: 1})
	}
	// An answer given again (the same text, normalised) is one source:
	// the latest.
	seen := map[string]int{}
	for _, x := range fold {
		if x.Refused || x.Redacted || strings.TrimSpace(x.Answer) == "" {
			continue
		}
		qs = append(qs, oneLine(x.Query))
		src := Source{ID: x.ID, Type: SourceExchange, Text: x.Answer, Relevance: 1}
		if i, ok := seen[normalizeText(x.Answer)]; ok {
			sources[i] = src
			continue
		}
		seen[normalizeText(x.Answer)] = len(sources)
		sources = append(sources, src)
	}
	question = "Summarise what this conversation found"
	if len(qs) > 0 {
		question += " about: " + strings.Join(qs, "; ")
	}
	return question, sources
}
