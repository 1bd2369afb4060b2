package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

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
// Pro's for prompts up to 200k tokens). They change: Settings.Prices
// (CAIRN_LLM_PRICES) overrides or extends the table, Settings.Price
// (CAIRN_LLM_PRICE) the configured model's price, and
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

// Lookup returns the built-in table's entry for model: the entry of its
// longest matching prefix.
func Lookup(model string) (ModelInfo, bool) {
	info, _, _, ok := lookup(model, nil)
	return info, ok
}

// lookup returns the entry of model's longest matching prefix in the
// built-in table with overrides laid over it (an override of a prefix
// the table has replaces its price, and its window when it gives one),
// the prefix, and whether the entry's price is an override.
func lookup(model string, overrides map[string]PriceEntry) (info ModelInfo, prefix string, overridden, found bool) {
	for p := range Models {
		if strings.HasPrefix(model, p) && len(p) > len(prefix) {
			prefix, found = p, true
		}
	}
	for p := range overrides {
		if strings.HasPrefix(model, p) && len(p) > len(prefix) {
			prefix, found = p, true
		}
	}
	if !found {
		return ModelInfo{}, "", false, false
	}
	info = Models[prefix]
	if o, ok := overrides[prefix]; ok {
		info.Price, overridden = Price{Input: o.Input, Output: o.Output}, true
		if o.ContextWindow > 0 {
			info.ContextWindow = o.ContextWindow
		}
	}
	return info, prefix, overridden, true
}

// PriceEntry is one entry of a price table given by configuration
// (CAIRN_LLM_PRICES): a model-name prefix's price in US dollars per
// million tokens and, optionally, its context window in tokens.
type PriceEntry struct {
	Input         float64 `json:"input"`
	Output        float64 `json:"output"`
	ContextWindow int     `json:"context_window,omitempty"`
}

// Bounds of a price table given by configuration.
const (
	maxPriceFileBytes = 1 << 20
	maxPriceEntries   = 10_000
	maxPrefixBytes    = 200
	// MaxPrice bounds a price: US dollars per million tokens.
	MaxPrice = 1_000_000
)

// ParsePrices reads a price table: a JSON object of model-name prefix →
// {"input": dollars, "output": dollars, "context_window": tokens
// (optional)} per million tokens, or → "input/output" as
// CAIRN_LLM_PRICE takes it; or, when v does not start with "{", the path
// of a file holding that object. A bad entry is invalid_params naming
// it.
func ParsePrices(v string) (map[string]PriceEntry, error) {
	v = strings.TrimSpace(v)
	data := []byte(v)
	from := "CAIRN_LLM_PRICES"
	if !strings.HasPrefix(v, "{") {
		b, err := readPriceFile(v)
		if err != nil {
			return nil, err
		}
		data, from = b, fmt.Sprintf("CAIRN_LLM_PRICES file %q", v)
	}
	bad := func(format string, a ...any) error {
		return memory.Errorf(memory.CodeInvalidParams, "%s: %s", from, fmt.Sprintf(format, a...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, bad(`not a JSON object of model prefix → {"input": dollars, "output": dollars} per million tokens`)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("text after the JSON object")
	}
	if len(raw) > maxPriceEntries {
		return nil, bad("%d entries; at most %d", len(raw), maxPriceEntries)
	}
	out := make(map[string]PriceEntry, len(raw))
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e, err := parsePriceEntry(raw[k])
		if err == nil {
			err = checkPriceEntry(k, e)
		}
		if err != nil {
			return nil, bad("entry %q: %s", k, err.Error())
		}
		out[k] = e
	}
	return out, nil
}

// readPriceFile reads a price table's file, saying in words why it could
// not.
func readPriceFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		var b []byte
		b, err = io.ReadAll(io.LimitReader(f, maxPriceFileBytes+1))
		if err == nil && len(b) > maxPriceFileBytes {
			return nil, memory.Errorf(memory.CodeInvalidParams, "CAIRN_LLM_PRICES file %q is larger than %d bytes", path, maxPriceFileBytes)
		}
		if err == nil {
			return b, nil
		}
	}
	why := "it cannot be read"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "no such file"
	case errors.Is(err, fs.ErrPermission):
		why = "permission denied"
	}
	return nil, memory.Errorf(memory.CodeInvalidParams, `CAIRN_LLM_PRICES=%q: %s (give a JSON object starting with "{", or the path of a file holding one)`, path, why)
}

// parsePriceEntry reads one entry: an object with input and output (both
// required) and an optional context_window, or an "input/output" string.
func parsePriceEntry(raw json.RawMessage) (PriceEntry, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		p, err := ParsePrice(text)
		if err != nil {
			return PriceEntry{}, errors.New(`want "input/output" US dollars per million tokens, like "2.5/10"`)
		}
		return PriceEntry{Input: p.Input, Output: p.Output}, nil
	}
	var e struct {
		Input         *float64 `json:"input"`
		Output        *float64 `json:"output"`
		ContextWindow *float64 `json:"context_window"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		var field string
		if _, f, ok := strings.Cut(err.Error(), "unknown field "); ok {
			field = " (unknown field " + f + ")"
		}
		return PriceEntry{}, fmt.Errorf(`want {"input": dollars, "output": dollars, "context_window": tokens (optional)}%s`, field)
	}
	if e.Input == nil || e.Output == nil {
		return PriceEntry{}, errors.New(`want both "input" and "output", US dollars per million tokens`)
	}
	out := PriceEntry{Input: *e.Input, Output: *e.Output}
	if e.ContextWindow != nil {
		w := *e.ContextWindow
		if w != math.Trunc(w) || w < 512 || w > 10_000_000 {
			return PriceEntry{}, fmt.Errorf("context_window %v: want a whole number of tokens from 512 to 10000000", w)
		}
		out.ContextWindow = int(w)
	}
	return out, nil
}

// checkPriceEntry validates an entry of a price table and its prefix.
func checkPriceEntry(prefix string, e PriceEntry) error {
	switch {
	case strings.TrimSpace(prefix) == "":
		return errors.New("the model prefix is empty")
	case strings.TrimSpace(prefix) != prefix:
		return errors.New("the model prefix has spaces around it")
	case len(prefix) > maxPrefixBytes:
		return fmt.Errorf("the model prefix is longer than %d bytes", maxPrefixBytes)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"input", e.Input}, {"output", e.Output}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > MaxPrice {
			return fmt.Errorf("%s %v: want US dollars per million tokens from 0 to %d", f.name, f.v, MaxPrice)
		}
	}
	if e.ContextWindow != 0 && (e.ContextWindow < 512 || e.ContextWindow > 10_000_000) {
		return fmt.Errorf("context_window %d: want a whole number of tokens from 512 to 10000000", e.ContextWindow)
	}
	return nil
}

// ModelPrice is what the configured model's tokens cost and where that
// price comes from: CAIRN_LLM_PRICE (Price), an entry of CAIRN_LLM_PRICES
// (Prices), the built-in table, or nothing for a server on the user's
// machine. Known is false when nothing prices the model (its cost reads 0).
type ModelPrice struct {
	Price  Price  `json:"price"`
	Known  bool   `json:"known"`
	Source string `json:"source"`
}

// Price sources.
const (
	PriceFromSetting   = "CAIRN_LLM_PRICE"
	PriceFromOverrides = "CAIRN_LLM_PRICES"
	PriceFromTable     = "built-in table"
	PriceLocal         = "local server"
	PriceUnknown       = "unknown"
)

// ModelPrice says what the configured model's tokens cost: Price when
// set, else the entry of the model's longest prefix in the built-in
// table with Prices laid over it, else free for a local server, else
// unknown. Source names the prefix for a table entry ("CAIRN_LLM_PRICES
// gpt-4o", "built-in table gpt-4o").
func (s Settings) ModelPrice() ModelPrice {
	if s.Price != nil {
		return ModelPrice{Price: *s.Price, Known: true, Source: PriceFromSetting}
	}
	info, prefix, overridden, ok := lookup(s.Model, s.Prices)
	switch {
	case overridden:
		return ModelPrice{Price: info.Price, Known: true, Source: PriceFromOverrides + " " + prefix}
	case local[strings.ToLower(strings.TrimSpace(s.Provider))]:
		return ModelPrice{Known: true, Source: PriceLocal}
	case ok:
		return ModelPrice{Price: info.Price, Known: true, Source: PriceFromTable + " " + prefix}
	}
	return ModelPrice{Source: PriceUnknown}
}
