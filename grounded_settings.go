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

// readGrounded reads the language model's settings (llm.SettingsFromEnv),
// the verifier's and the sessions'.
func (s *Settings) readGrounded(getenv func(string) string) error {
	ls, notes, err := llm.SettingsFromEnv(getenv)
	if err != nil {
		return err
	}
	s.LLM = ls
	s.Notes = append(s.Notes, notes...)
	v, warns := synth.VerifierFromEnv(getenv)
	s.Grounding = GroundingSettings{MinCoverage: v.MinCoverage, MinSources: v.MinSources, Threshold: v.Threshold}
	s.Warnings = append(s.Warnings, warns...)
	sc, warns, err := synth.SessionConfigFromEnv(getenv)
	if err != nil {
		return err
	}
	s.Sessions = sc
	s.Warnings = append(s.Warnings, warns...)
	if ls.Provider != "" && !s.InnerVoice.Enabled {
		s.Notes = append(s.Notes, "a language model is configured, but inner_voice is disabled: set SURR_ENABLE_INNER_VOICE=1 to use it")
	}
	return nil
}

// groundedOptions makes the language model's client and passes the
// verifier's and the sessions' settings on.
func (s Settings) groundedOptions(o *Options) error {
	if s.LLM.Provider != "" {
		c, err := llm.New(s.LLM)
		if err != nil {
			return err
		}
		o.LLM, o.LLMMaxOutputTokens = c, s.LLM.MaxOutputTokens
	}
	v := s.Grounding.verifier()
	sc := s.Sessions
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
	s.Sessions = synth.DefaultSessionConfig()
	if o.Sessions != nil {
		s.Sessions = *o.Sessions
	}
	if o.LLM != nil {
		s.LLM = llm.Settings{Provider: o.LLM.Provider(), Model: o.LLM.Model(), ContextWindow: o.LLM.ContextWindow(),
			MaxOutputTokens: o.LLMMaxOutputTokens}
	}
}
