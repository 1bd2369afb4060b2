package cairn

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
	"github.com/cairnhq/cairn/synth"
	"github.com/cairnhq/cairn/voice"
)

// Environment variables cairn reads at start-up (besides the embedder's,
// in embed.ConfigFromEnv, the inner voice's, in
// retrieve.InnerVoiceConfigFromEnv and synth.AskConfigFromEnv, and the
// removal lifecycle's, in maintain.ConfigFromEnv).
const (
	EnvProvider        = "CAIRN_PROVIDER"
	EnvHybridWeights   = "CAIRN_HYBRID_WEIGHTS"
	EnvMaxContentBytes = "CAIRN_MAX_CONTENT_BYTES"
	EnvNoLog           = "MCP_NO_LOG"
	EnvETVTTL          = "CAIRN_ETV_TTL"
	EnvCodeMaxFile     = "CAIRN_CODE_MAX_FILE_BYTES"
	EnvCodeRoots       = "CAIRN_CODE_ROOTS"
	EnvIndexDir        = "CAIRN_INDEX_DIR"
	EnvIndexApproxFrom = "CAIRN_INDEX_APPROXIMATE_FROM"
)

type (
	// HybridWeights tune the hybrid retrieval provider.
	HybridWeights = retrieve.HybridWeights
	// EmbedderConfig is the embedder's configuration.
	EmbedderConfig = embed.Config
)

// ParseHybridWeights reads hybrid weights as CAIRN_HYBRID_WEIGHTS gives
// them.
func ParseHybridWeights(s string) (HybridWeights, error) { return retrieve.ParseHybridWeights(s) }

// SuggestedApproximateFrom is the vector count from which approximate
// semantic search pays (Options.IndexApproximateFrom).
const SuggestedApproximateFrom = index.SuggestedIVFThreshold

// Settings are cairn's start-up configuration: what the environment asks
// for, with every default filled in and every bound enforced. They are
// read once; the engine they open never changes provider or embedder.
type Settings struct {
	// Provider is the default retrieval provider: hybrid or local-fts.
	Provider      string                    `json:"provider"`
	HybridWeights retrieve.HybridWeights    `json:"hybridWeights"`
	Embedder      embed.Config              `json:"embedder"`
	InnerVoice    retrieve.InnerVoiceConfig `json:"innerVoice"`
	// Ask is the inner_voice tool's configuration; Maintenance the removal
	// lifecycle's.
	Ask         synth.AskConfig `json:"innerVoiceAsk"`
	Maintenance maintain.Config `json:"maintenance"`
	// LLM is the language model inner_voice answers with (CAIRN_LLM_*;
	// no provider: none, and the extractive synthesiser answers);
	// Grounding the verifier's thresholds; Sessions inner_voice's
	// sessions and prompt budget.
	LLM       LLMSettings       `json:"llm"`
	Grounding GroundingSettings `json:"grounding"`
	Sessions  SessionSettings   `json:"innerVoiceSessions"`
	// llm and sessions are what LLM and Sessions show.
	llm      llm.Settings
	sessions synth.SessionConfig
	// MaxContentBytes caps one record's content.
	MaxContentBytes int `json:"maxContentBytes"`
	// NoLog (MCP_NO_LOG=1) keeps logs to counters.
	NoLog bool `json:"noLog"`
	// ETVTTLMs is code memory's verification cache TTL in milliseconds
	// (CAIRN_ETV_TTL, a duration from 0s to 1h; default 5s; 0s disables
	// the cache).
	ETVTTLMs int64 `json:"etvTTLMs"`
	// CodeMaxFileBytes is the size above which code indexing skips a file
	// (CAIRN_CODE_MAX_FILE_BYTES; default 1 MiB, at most 64 MiB).
	CodeMaxFileBytes int64 `json:"codeMaxFileBytes"`
	// CodeRoots are the directories the network faces may index code
	// under (CAIRN_CODE_ROOTS, absolute paths separated by the system's
	// list separator, ':' on Unix; default none).
	CodeRoots []string `json:"codeRoots,omitempty"`
	// IndexDir is where the retrieval index's files live (CAIRN_INDEX_DIR;
	// default: beside the database, DATABASE-index); "memory" keeps the
	// index in each process's memory instead.
	IndexDir string `json:"indexDir,omitempty"`
	// IndexApproximateFrom is how many vectors a group holds from which
	// the semantic side searches approximately (CAIRN_INDEX_APPROXIMATE_FROM:
	// a count from 1000, or "never"); 0, the default, is never.
	IndexApproximateFrom int `json:"indexApproximateFrom,omitempty"`
	// Redact says writes pass through the secret redactor (CAIRN_REDACT;
	// default on).
	Redact bool `json:"redact"`
	// Warnings are the clamps and fallbacks applied to out-of-bounds
	// settings; they are logged at start-up.
	Warnings []string `json:"warnings"`
	// Notes are the defaults filled in and overrides resolved.
	Notes []string `json:"notes"`
}

// SettingsFromEnv reads the settings from the environment (getenv is
// os.Getenv in production). A setting that cannot be read at all (an
// unknown provider, malformed weights) is an invalid_params error; one
// that is out of bounds where the seed says to clamp is clamped, with a
// warning.
func SettingsFromEnv(getenv func(string) string) (Settings, error) {
	s := Settings{Provider: retrieve.HybridName, HybridWeights: retrieve.DefaultHybridWeights, Redact: true,
		MaxContentBytes: memory.DefaultMaxContentBytes, Warnings: []string{}, Notes: []string{},
		ETVTTLMs: code.DefaultETVTTL.Milliseconds(), CodeMaxFileBytes: code.DefaultMaxFileBytes}
	if v := strings.TrimSpace(getenv(EnvETVTTL)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Hour {
			return s, memory.Errorf(memory.CodeInvalidParams, "%s=%q: want a duration from 0s to 1h (e.g. 5s, 30s)", EnvETVTTL, v)
		}
		s.ETVTTLMs = d.Milliseconds()
	}
	if v := strings.TrimSpace(getenv(EnvCodeMaxFile)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 64<<20 {
			return s, memory.Errorf(memory.CodeInvalidParams, "%s=%q: want a byte count from 1 to %d", EnvCodeMaxFile, v, 64<<20)
		}
		s.CodeMaxFileBytes = n
	}
	if v := strings.ToLower(strings.TrimSpace(getenv(EnvProvider))); v != "" {
		if v != retrieve.HybridName && v != retrieve.LocalFTSName {
			return s, memory.Errorf(memory.CodeInvalidParams, "%s=%q: want hybrid or local-fts", EnvProvider, v)
		}
		s.Provider = v
	}
	if v := getenv(EnvHybridWeights); strings.TrimSpace(v) != "" {
		w, err := retrieve.ParseHybridWeights(v)
		if err != nil {
			return s, memory.Errorf(memory.CodeInvalidParams, "%s: %s", EnvHybridWeights, memory.Public(err).Message)
		}
		s.HybridWeights = w
	}
	if v := strings.TrimSpace(getenv(EnvMaxContentBytes)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64<<20 {
			return s, memory.Errorf(memory.CodeInvalidParams, "%s=%q: want a byte count from 1 to %d", EnvMaxContentBytes, v, 64<<20)
		}
		s.MaxContentBytes = n
	}
	s.IndexDir = strings.TrimSpace(getenv(EnvIndexDir))
	for _, r := range filepath.SplitList(getenv(EnvCodeRoots)) {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		if !filepath.IsAbs(r) {
			return s, memory.Errorf(memory.CodeInvalidParams, "%s: %q is not an absolute path", EnvCodeRoots, r)
		}
		s.CodeRoots = append(s.CodeRoots, filepath.Clean(r))
	}
	if v := strings.ToLower(strings.TrimSpace(getenv(EnvIndexApproxFrom))); v != "" && v != "never" {
		n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
		if err != nil || n < 1000 {
			return s, memory.Errorf(memory.CodeInvalidParams, "%s=%q: want a vector count from 1000, or never", EnvIndexApproxFrom, v)
		}
		s.IndexApproximateFrom = n
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv(EnvRedact))); v {
	case "", "on", "1", "true", "yes":
	case "off", "0", "false", "no":
		s.Redact = false
	default:
		return s, memory.Errorf(memory.CodeInvalidParams, "%s=%q: want on or off", EnvRedact, v)
	}
	if v := strings.TrimSpace(getenv(EnvNoLog)); v != "" && v != "0" {
		s.NoLog = true
	}
	ec, notes, err := embed.ConfigFromEnv(getenv)
	if err != nil {
		return s, err
	}
	s.Embedder = ec
	s.Notes = append(s.Notes, notes...)
	iv, warns := retrieve.InnerVoiceConfigFromEnv(getenv)
	s.InnerVoice = iv
	s.Warnings = append(s.Warnings, warns...)
	ask, warns := synth.AskConfigFromEnv(getenv)
	s.Ask = ask
	s.Warnings = append(s.Warnings, warns...)
	mc, warns, err := maintain.ConfigFromEnv(getenv)
	if err != nil {
		return s, err
	}
	s.Maintenance = mc
	s.Warnings = append(s.Warnings, warns...)
	if err := s.readGrounded(getenv); err != nil {
		return s, err
	}
	return s, nil
}

// readGrounded reads the language model's settings, the verifier's and
// the sessions' (voice.SettingsFromEnv).
func (s *Settings) readGrounded(getenv func(string) string) error {
	g, err := voice.SettingsFromEnv(getenv)
	if err != nil {
		return err
	}
	s.llm, s.LLM, s.Grounding = g.LLM, voice.LLMSettingsOf(g.LLM), g.Grounding
	s.sessions, s.Sessions = g.Sessions, voice.SessionSettingsOf(g.Sessions)
	s.Notes, s.Warnings = append(s.Notes, g.Notes...), append(s.Warnings, g.Warnings...)
	if g.LLM.Provider != "" && !s.InnerVoice.Enabled {
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
	v := s.Grounding.Verifier()
	sc := s.sessions
	if sc.MaxPromptTokens == 0 {
		d := synth.DefaultSessionConfig()
		d.NoMetrics, d.NoCostTracking = sc.NoMetrics, sc.NoCostTracking
		sc = d
	}
	o.Verifier, o.Sessions, o.GroundingJudge = &v, &sc, s.Grounding.Judge
	return nil
}

// Options turns the settings into engine options, making the embedder.
func (s Settings) Options() (*Options, error) {
	e, err := s.Embedder.New()
	if err != nil {
		return nil, err
	}
	w := s.HybridWeights
	iv, ask, mc := s.InnerVoice, s.Ask, s.Maintenance
	o := &Options{Provider: s.Provider, HybridWeights: &w, Embedder: e, MaxContentBytes: s.MaxContentBytes,
		InnerVoice: &iv, Ask: &ask, Maintenance: &mc, NoLog: s.NoLog, ETVTTL: s.etvTTL(), MaxCodeFileBytes: s.CodeMaxFileBytes, CodeRoots: s.CodeRoots, IndexDir: s.IndexDir,
		IndexApproximateFrom: s.IndexApproximateFrom, NoRedact: !s.Redact, settings: &s}
	if err := s.groundedOptions(o); err != nil {
		return nil, err
	}
	return o, nil
}

// settingsOf describes an engine opened from Options rather than from
// Settings (a library caller's): what it runs with, without notes.
func settingsOf(o Options) Settings {
	s := Settings{Provider: o.Provider, MaxContentBytes: o.MaxContentBytes, NoLog: o.NoLog, Redact: !o.NoRedact,
		HybridWeights: retrieve.DefaultHybridWeights, InnerVoice: retrieve.DefaultInnerVoiceConfig(),
		Warnings: []string{}, Notes: []string{}}
	if s.Provider == "" {
		s.Provider = retrieve.HybridName
	}
	if o.HybridWeights != nil {
		s.HybridWeights = *o.HybridWeights
	}
	if o.InnerVoice != nil {
		s.InnerVoice = *o.InnerVoice
	}
	s.Ask, s.Maintenance = synth.DefaultAskConfig(), maintain.DefaultConfig()
	if o.Ask != nil {
		s.Ask = *o.Ask
	}
	if o.Maintenance != nil {
		s.Maintenance = *o.Maintenance
	}
	s.ETVTTLMs, s.CodeMaxFileBytes, s.IndexDir = o.ETVTTL.Milliseconds(), o.MaxCodeFileBytes, o.IndexDir
	s.CodeRoots = o.CodeRoots
	s.IndexApproximateFrom = max(0, o.IndexApproximateFrom)
	switch {
	case o.ETVTTL == 0:
		s.ETVTTLMs = code.DefaultETVTTL.Milliseconds()
	case o.ETVTTL < 0:
		s.ETVTTLMs = 0
	}
	if s.CodeMaxFileBytes == 0 {
		s.CodeMaxFileBytes = code.DefaultMaxFileBytes
	}
	sp := o.Embedder.Space()
	s.Embedder = embed.Config{Provider: sp.Provider, Model: sp.Model, Dim: sp.Dim}
	s.LLM, s.Grounding, s.Sessions = voice.Describe(o.LLM, o.LLMMaxOutputTokens, o.Verifier, o.GroundingJudge, o.Sessions)
	return s
}

// Public is the settings with any credentials in the embedder's URL
// removed (the API key is never serialised).
func (s Settings) Public() Settings {
	if u, err := url.Parse(s.Embedder.BaseURL); err == nil && (u.User != nil || u.RawQuery != "") {
		u.User, u.RawQuery = nil, ""
		s.Embedder.BaseURL = u.String()
	} else if err != nil {
		s.Embedder.BaseURL = "(unparsable)"
	}
	if u, err := url.Parse(s.LLM.BaseURL); err == nil && (u.User != nil || u.RawQuery != "") {
		u.User, u.RawQuery = nil, ""
		s.LLM.BaseURL = u.String()
	} else if err != nil {
		s.LLM.BaseURL = "(unparsable)"
	}
	s.llm = llm.Settings{}
	s.Warnings, s.Notes = slices.Clone(s.Warnings), slices.Clone(s.Notes)
	return s
}

// String is a one-line summary, for logs.
func (s Settings) String() string {
	llm := "none"
	if s.LLM.Provider != "" {
		llm = s.LLM.Provider + "/" + s.LLM.Model
	}
	return fmt.Sprintf("provider=%s embedder=%s/%s/%d inner_voice=%v llm=%s", s.Provider, s.Embedder.Provider, s.Embedder.Model, s.Embedder.Dim,
		s.InnerVoice.Enabled, llm)
}

// etvTTL maps the setting to Options.ETVTTL, where 0 means the default
// and a negative value disables the cache.
func (s Settings) etvTTL() time.Duration {
	if s.ETVTTLMs == 0 {
		return -1
	}
	return time.Duration(s.ETVTTLMs) * time.Millisecond
}
