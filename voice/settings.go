package voice

import (
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/synth"
)

// GroundingSettings are the grounding verifier's thresholds
// (SURR_INNER_VOICE_MIN_COVERAGE, CAIRN_GROUNDING_MIN_SOURCES,
// CAIRN_GROUNDING_THRESHOLD) and whether the language model is asked for
// a second opinion on the claims the verifier supports
// (CAIRN_GROUNDING_JUDGE; only with a model configured).
type GroundingSettings struct {
	MinCoverage float64 `json:"minCoverage"`
	MinSources  int     `json:"minSources"`
	Threshold   float64 `json:"threshold"`
	Judge       bool    `json:"judge"`
}

// Verifier is the grounding verifier with these thresholds.
func (g GroundingSettings) Verifier() synth.Verifier {
	return synth.Verifier{MinCoverage: g.MinCoverage, MinSources: g.MinSources, Threshold: g.Threshold}
}

// LLMSettings describe the language model inner_voice answers with: the
// settings of llm.SettingsFromEnv, with the key shown only as whether one
// is set. Provider is empty when none is configured.
type LLMSettings struct {
	Provider        string     `json:"provider,omitempty"`
	Model           string     `json:"model,omitempty"`
	BaseURL         string     `json:"baseUrl,omitempty"`
	Timeout         string     `json:"timeout,omitempty"`
	Retries         int        `json:"retries,omitempty"`
	ContextWindow   int        `json:"contextWindow,omitempty"`
	MaxOutputTokens int        `json:"maxOutputTokens,omitempty"`
	Temperature     *float64   `json:"temperature,omitempty"`
	Price           *llm.Price `json:"price,omitempty"`
	// Prices are the price table's entries given by CAIRN_LLM_PRICES, by
	// model-name prefix, laid over the built-in table.
	Prices map[string]llm.PriceEntry `json:"prices,omitempty"`
	// ModelPrice is what the model's tokens cost and where that comes
	// from (CAIRN_LLM_PRICE, CAIRN_LLM_PRICES and the prefix, the
	// built-in table and the prefix, a local server, or unknown).
	ModelPrice *llm.ModelPrice `json:"modelPrice,omitempty"`
	JSON       string          `json:"json,omitempty"`
	APIKeySet  bool            `json:"apiKeySet"`
}

// LLMSettingsOf describes the language model's settings s.
func LLMSettingsOf(s llm.Settings) LLMSettings {
	if s.Provider == "" {
		return LLMSettings{}
	}
	out := LLMSettings{Provider: s.Provider, Model: s.Model, BaseURL: s.BaseURL, Retries: max(s.Retries, 0), ContextWindow: s.ContextWindow,
		MaxOutputTokens: s.MaxOutputTokens, Temperature: s.Temperature, Price: s.Price, Prices: s.Prices, JSON: s.JSON, APIKeySet: s.APIKey.Set()}
	mp := s.ModelPrice()
	out.ModelPrice = &mp
	if s.Timeout > 0 {
		out.Timeout = s.Timeout.String()
	}
	return out
}

// SessionSettings describe inner_voice's sessions: the prompt budget
// (SURR_INNER_VOICE_MAX_TOKENS), the session timeout
// (SURR_INNER_VOICE_TIMEOUT), the default context policy
// (CAIRN_INNER_VOICE_CONTEXT; empty: kg with a language model, thoughts
// without), and whether metrics (SURR_INNER_VOICE_METRICS) and cost
// tracking (SURR_INNER_VOICE_COST_TRACKING) are on.
type SessionSettings struct {
	MaxPromptTokens int    `json:"maxPromptTokens"`
	Timeout         string `json:"timeout"`
	Context         string `json:"context,omitempty"`
	Metrics         bool   `json:"metrics"`
	CostTracking    bool   `json:"costTracking"`
}

// SessionSettingsOf describes the sessions' configuration c.
func SessionSettingsOf(c synth.SessionConfig) SessionSettings {
	return SessionSettings{MaxPromptTokens: c.MaxPromptTokens, Timeout: c.Timeout.String(), Context: c.Context,
		Metrics: !c.NoMetrics, CostTracking: !c.NoCostTracking}
}

// Settings are the grounded answers' settings read from the
// environment: the language model's (llm.SettingsFromEnv, CAIRN_LLM_*),
// the verifier's thresholds and the sessions'.
type Settings struct {
	LLM       llm.Settings
	Grounding GroundingSettings
	Sessions  synth.SessionConfig
	// Notes are the defaults filled in; Warnings the clamps applied.
	Notes, Warnings []string
}

// SettingsFromEnv reads the grounded answers' settings (getenv is
// os.Getenv in production).
func SettingsFromEnv(getenv func(string) string) (Settings, error) {
	var s Settings
	ls, notes, err := llm.SettingsFromEnv(getenv)
	if err != nil {
		return s, err
	}
	s.LLM, s.Notes = ls, notes
	v, warns := synth.VerifierFromEnv(getenv)
	s.Grounding = GroundingSettings{MinCoverage: v.MinCoverage, MinSources: v.MinSources, Threshold: v.Threshold}
	s.Warnings = append(s.Warnings, warns...)
	judge, warns := synth.JudgeFromEnv(getenv)
	s.Warnings = append(s.Warnings, warns...)
	if judge && ls.Provider == "" {
		s.Warnings = append(s.Warnings, "CAIRN_GROUNDING_JUDGE=1 asks the language model for a second opinion, and none is configured "+
			"(CAIRN_LLM_PROVIDER): the judge stays off and answers are verified offline")
		judge = false
	}
	s.Grounding.Judge = judge
	sc, warns, err := synth.SessionConfigFromEnv(getenv)
	if err != nil {
		return s, err
	}
	s.Sessions = sc
	s.Warnings = append(s.Warnings, warns...)
	return s, nil
}

// Describe gives the settings views of a voice opened from options
// rather than from the environment (a library caller's): its language
// model, verifier (with the judge when asked for and a model is set) and
// sessions, defaults in place of what is nil.
func Describe(model llm.Client, maxOut int, v *synth.Verifier, judge bool, sc *synth.SessionConfig) (LLMSettings, GroundingSettings, SessionSettings) {
	ver := synth.Verifier{MinCoverage: synth.DefaultMinCoverage, MinSources: synth.DefaultMinSources, Threshold: synth.DefaultThreshold}
	if v != nil {
		ver = *v
	}
	sessions := synth.DefaultSessionConfig()
	if sc != nil {
		sessions = *sc
	}
	var ls LLMSettings
	if model != nil {
		ls = LLMSettings{Provider: model.Provider(), Model: model.Model(), ContextWindow: model.ContextWindow(), MaxOutputTokens: maxOut}
	}
	gs := GroundingSettings{MinCoverage: ver.MinCoverage, MinSources: ver.MinSources, Threshold: ver.Threshold, Judge: judge && model != nil}
	return ls, gs, SessionSettingsOf(sessions)
}
