package llm

import "strings"

// ModelInfo is what cairn knows of a model: its context window in tokens
// and its list price.
type ModelInfo struct {
	ContextWindow int
	Price         Price
}

// Models is the built-in table, keyed by model name prefix (the longest
// matching prefix wins: "gpt-4o-mini-2024-07-18" is "gpt-4o-mini").
// Prices are the providers' published list prices for standard, text-only,
// non-batch calls in US dollars per million tokens, as of 2025 (Gemini 2.5
// Pro's for prompts up to 200k tokens). They change: Settings.Price (or
// CAIRN_LLM_PRICE) overrides the configured model's entry, and
// Settings.ContextWindow (CAIRN_LLM_CONTEXT_WINDOW) its window.
var Models = map[string]ModelInfo{
	// OpenAI
	"gpt-4o":       {128_000, Price{2.50, 10.00}},
	"gpt-4o-mini":  {128_000, Price{0.15, 0.60}},
	"gpt-4.1":      {1_047_576, Price{2.00, 8.00}},
	"gpt-4.1-mini": {1_047_576, Price{0.40, 1.60}},
	"gpt-4.1-nano": {1_047_576, Price{0.10, 0.40}},
	"gpt-5":        {400_000, Price{1.25, 10.00}},
	"gpt-5-mini":   {400_000, Price{0.25, 2.00}},
	"gpt-5-nano":   {400_000, Price{0.05, 0.40}},
	"o3":           {200_000, Price{2.00, 8.00}},
	"o3-mini":      {200_000, Price{1.10, 4.40}},
	"o4-mini":      {200_000, Price{1.10, 4.40}},
	// Anthropic
	"claude-opus-4":     {200_000, Price{15.00, 75.00}},
	"claude-opus-4-5":   {200_000, Price{5.00, 25.00}},
	"claude-sonnet-4":   {200_000, Price{3.00, 15.00}},
	"claude-3-7-sonnet": {200_000, Price{3.00, 15.00}},
	"claude-3-5-sonnet": {200_000, Price{3.00, 15.00}},
	"claude-haiku-4-5":  {200_000, Price{1.00, 5.00}},
	"claude-3-5-haiku":  {200_000, Price{0.80, 4.00}},
	// Google
	"gemini-2.5-pro":        {1_048_576, Price{1.25, 10.00}},
	"gemini-2.5-flash":      {1_048_576, Price{0.30, 2.50}},
	"gemini-2.5-flash-lite": {1_048_576, Price{0.10, 0.40}},
	"gemini-2.0-flash":      {1_048_576, Price{0.10, 0.40}},
	"gemini-2.0-flash-lite": {1_048_576, Price{0.075, 0.30}},
}

// DefaultContextWindow is the window assumed for a model the table does
// not know (and for local servers, whose window is whatever they were
// started with): 8192 tokens.
const DefaultContextWindow = 8192

// Lookup returns the table's entry for model: the entry of its longest
// matching prefix.
func Lookup(model string) (ModelInfo, bool) {
	best, found := "", false
	for prefix := range Models {
		if strings.HasPrefix(model, prefix) && len(prefix) > len(best) {
			best, found = prefix, true
		}
	}
	if !found {
		return ModelInfo{}, false
	}
	return Models[best], true
}
