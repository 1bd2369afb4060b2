package cairn

import (
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/synth"
)

// GroundingSettings are the grounding verifier's thresholds
// (SURR_INNER_VOICE_MIN_COVERAGE, CAIRN_GROUNDING_MIN_SOURCES,
// CAIRN_GROUNDING_THRESHOLD).
type GroundingSettings struct {
	MinCoverage float64 `json:"minCoverage"`
	MinSources  int     `json:"minSources"`
	Threshold   float64 `json:"threshold"`
}

func (g GroundingSettings) verifier() synth.Verifier {
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

func llmSettingsOf(s llm.Settings) LLMSettings {
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

func sessionSettingsOf(c synth.SessionConfig) SessionSettings {
	return SessionSettings{MaxPromptTokens: c.MaxPromptTokens, Timeout: c.Timeout.String(), Context: c.Context,
		Metrics: !c.NoMetrics, CostTracking: !c.NoCostTracking}
}

// readGrounded reads the language model's settings (llm.SettingsFromEnv),
// the verifier's and the sessions'.
func (s *Settings) readGrounded(getenv func(string) string) error {
	ls, notes, err := llm.SettingsFromEnv(getenv)
	if err != nil {
		return err
	}
	s.llm, s.LLM = ls, llmSettingsOf(ls)
	s.Notes = append(s.Notes, notes...)
	v, warns := synth.VerifierFromEnv(getenv)
	s.Grounding = GroundingSettings{MinCoverage: v.MinCoverage, MinSources: v.MinSources, Threshold: v.Threshold}
	s.Warnings = append(s.Warnings, warns...)
	sc, warns, err := synth.SessionConfigFromEnv(getenv)
	if err != nil {
		return err
	}
	s.sessions, s.Sessions = sc, sessionSettingsOf(sc)
	s.Warnings = append(s.Warnings, warns...)
	if ls.Provider != "" && !s.InnerVoice.Enabled {
		s.Notes = append(s.Notes, "a language model is configured, but inner_voice is disabled: set SURR_ENABLE_INNER_VOICE=1 to use it")
	}
	return nil
}

// groundedOptions makes the language model's client and passes the
// verifier's and the sessions' settings on.
func (s Settings) groundedOptions(o *Options) error {
	if s.llm.Provider != "" {
		c, err := llm.New(s.llm)
		if err != nil {
			return err
		}
		o.LLM, o.LLMMaxOutputTokens = c, s.llm.MaxOutputTokens
	}
	v := s.Grounding.verifier()
	sc := s.sessions
	if sc.MaxPromptTokens == 0 {
		d := synth.DefaultSessionConfig()
		d.NoMetrics, d.NoCostTracking = sc.NoMetrics, sc.NoCostTracking
		sc = d
	}
	o.Verifier, o.Sessions = &v, &sc
	return nil
}

// groundedSettingsOf describes the grounded answers of an engine opened
// from Options.
func groundedSettingsOf(o Options, s *Settings) {
	v := synth.Verifier{MinCoverage: synth.DefaultMinCoverage, MinSources: synth.DefaultMinSources, Threshold: synth.DefaultThreshold}
	if o.Verifier != nil {
		v = *o.Verifier
	}
	s.Grounding = GroundingSettings{MinCoverage: v.MinCoverage, MinSources: v.MinSources, Threshold: v.Threshold}
	sc := synth.DefaultSessionConfig()
	if o.Sessions != nil {
		sc = *o.Sessions
	}
	s.Sessions = sessionSettingsOf(sc)
	if o.LLM != nil {
		s.LLM = LLMSettings{Provider: o.LLM.Provider(), Model: o.LLM.Model(), ContextWindow: o.LLM.ContextWindow(), MaxOutputTokens: o.LLMMaxOutputTokens}
	}
}
