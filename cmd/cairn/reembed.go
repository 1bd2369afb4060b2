package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

func newReembedCmd(a *app) *cobra.Command {
	var req cairn.ReembedRequest
	cmd := &cobra.Command{
		Use:   "reembed",
		Short: "Embed records that have no vector with the current embedder",
		Long: `Embed every record that has no vector in the active embedder's space: those
written while the embedder was down, and all of them after a move to another
embedder, model or dimension (set CAIRN_EMBED_PROVIDER, CAIRN_EMBED_MODEL,
CAIRN_EMBED_DIM or their SURR_EMBED_* names, then run this). A progress bar
shows on a terminal. --drop-other-spaces then deletes the vectors of other
spaces. If the embedder fails part-way, what was embedded stays and the rest
remains pending (exit code 5); run it again later.`,
		Example: `  cairn reembed
  CAIRN_EMBED_PROVIDER=ollama CAIRN_EMBED_MODEL=nomic-embed-text cairn reembed --drop-other-spaces`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			rep, err := eng.Reembed(cmd.Context(), req, a.progress("embedding"))
			a.finishProgress()
			if err != nil {
				a.say("embedded %d records in %s; %d still pending\n", rep.Embedded, rep.Space, rep.Pending)
				return err
			}
			return a.show(rep, func() error {
				fmt.Fprintf(a.out, "embedded %d records in %s", rep.Embedded, rep.Space)
				if req.DropOtherSpaces {
					fmt.Fprintf(a.out, "; dropped %d vectors of other spaces", rep.Dropped)
				}
				fmt.Fprintln(a.out)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&req.DropOtherSpaces, "drop-other-spaces", false, "also delete vectors of other embedders, models or dimensions")
	return cmd
}

// progress returns a progress callback that draws a bar on a terminal
// (nothing otherwise, or with --json); finishProgress ends it.
func (a *app) progress(what string) func(done, total int) {
	if !isTerminal(a.err) || a.json {
		return nil
	}
	return func(done, total int) {
		if a.bar == nil {
			a.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(a.err),
				progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		if total >= 0 {
			a.bar.ChangeMax(total)
		}
		a.bar.Set(done)
	}
}

func (a *app) finishProgress() {
	if a.bar != nil {
		a.bar.Finish()
		a.bar = nil
	}
}

func newConfigCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration and every clamp or fallback applied",
		Long: `Show the configuration cairn runs with, read from the environment: the
database, the retrieval provider and hybrid weights (CAIRN_PROVIDER,
CAIRN_HYBRID_WEIGHTS), the embedder (CAIRN_EMBED_* or SURR_EMBED_*), the inner
voice (SURR_ENABLE_INNER_VOICE, SURR_INNER_VOICE_*, CAIRN_INNER_VOICE_FLOOR),
the content cap (CAIRN_MAX_CONTENT_BYTES), the secret redactor (CAIRN_REDACT),
the capture hooks (CAIRN_CAPTURE_PROMPTS, CAIRN_HOOK_WRITE), code memory (CAIRN_ETV_TTL,
CAIRN_CODE_MAX_FILE_BYTES) and logging (CAIRN_LOG,
MCP_NO_LOG). Out-of-bounds values are clamped or replaced as documented; each
correction is listed under warnings. API keys are never shown. It does not
open the database.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := cairn.SettingsFromEnv(os.Getenv)
			if err != nil {
				return err
			}
			out := struct {
				Database string `json:"database"`
				cairn.Settings
			}{cairn.DisplayPath(cairn.ResolvePath(a.dbFlag)), set.Public()}
			return a.show(out, func() error {
				a.printSettings(out.Database, out.Settings)
				return nil
			})
		},
	}
}

func (a *app) printSettings(db string, s cairn.Settings) {
	w := s.HybridWeights
	row := func(k, format string, v ...any) { fmt.Fprintf(a.out, "%-18s "+format+"\n", append([]any{k}, v...)...) }
	row("database", "%s", db)
	row("provider", "%s", s.Provider)
	row("hybrid weights", "lexical=%g semantic=%g recency=%g before=%g beforeOther=%g after=%g far=%g capsule=%g soft=%g time=%g",
		w.Lexical, w.Semantic, w.Recency, w.Before, w.BeforeOther, w.After, w.Far, w.Capsule, w.Soft, w.Time)
	e := s.Embedder
	emb := fmt.Sprintf("%s, model %s, %d dimensions", e.Provider, e.Model, e.Dim)
	if e.BaseURL != "" {
		emb += ", at " + e.BaseURL
	}
	if e.Provider == "ollama" || e.Provider == "openai" {
		emb += fmt.Sprintf(", timeout %s", e.Timeout)
	}
	row("embedder", "%s", emb)
	iv := s.InnerVoice
	if iv.Enabled {
		row("inner voice", "enabled: mix %g, top_k %d, floor %g, min_floor %g, %d candidates per source at most",
			iv.Mix, iv.TopKDefault, iv.Floor, iv.MinFloor, iv.MaxCandidatesPerSource)
	} else {
		row("inner voice", "disabled (SURR_ENABLE_INNER_VOICE=1 enables it)")
	}
	ask := s.Ask
	row("inner_voice", "top_k %d (SURR_TOP_K), sim_thresh %g (SURR_SIM_THRESH), at most %d candidates (SURR_DB_LIMIT), auto_mark_removal %v (SURR_AUTO_MARK_REMOVAL)",
		ask.TopK, ask.SimThresh, ask.DBLimit, ask.AutoMarkRemoval)
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	if l := s.LLM; l.Provider == "" {
		row("language model", "none: inner_voice answers offline (CAIRN_LLM_PROVIDER sets one)")
	} else {
		lm := fmt.Sprintf("%s, model %s, window %d tokens", l.Provider, l.Model, l.ContextWindow)
		if mp := l.ModelPrice; mp != nil && mp.Known {
			lm += fmt.Sprintf(", $%g/$%g per million tokens in/out (%s)", mp.Price.Input, mp.Price.Output, mp.Source)
		} else if mp != nil {
			lm += ", price unknown: costs read 0 (CAIRN_LLM_PRICE or CAIRN_LLM_PRICES sets one)"
		}
		switch n := len(l.Prices); n {
		case 0:
		case 1:
			lm += "; 1 price table entry from CAIRN_LLM_PRICES"
		default:
			lm += fmt.Sprintf("; %d price table entries from CAIRN_LLM_PRICES", n)
		}
		row("language model", "%s", lm)
	}
	ss := s.Sessions
	row("voice sessions", "prompt budget %d tokens (SURR_INNER_VOICE_MAX_TOKENS), timeout %s (SURR_INNER_VOICE_TIMEOUT), metrics %s (SURR_INNER_VOICE_METRICS), cost tracking %s (SURR_INNER_VOICE_COST_TRACKING)",
		ss.MaxPromptTokens, ss.Timeout, onOff(ss.Metrics), onOff(ss.CostTracking))
	mc := s.Maintenance
	row("removal lifecycle", "retention %d days (SURR_RETENTION_DAYS), archives in %s (SURR_ARCHIVE_DIR) as %s (SURR_ARCHIVE_FORMAT)",
		mc.RetentionDays, mc.ArchiveDir, mc.Format)
	row("content cap", "%d bytes per record", s.MaxContentBytes)
	if s.Redact {
		row("redaction", "on: secrets in every write become [REDACTED:kind] (CAIRN_REDACT=off stores text as given)")
	} else {
		row("redaction", "off (CAIRN_REDACT): text is stored as given, secrets included")
	}
	prompts := "recorded"
	if strings.EqualFold(strings.TrimSpace(os.Getenv(EnvCapturePrompts)), "off") {
		prompts = "not recorded"
	}
	write := strings.ToLower(strings.TrimSpace(os.Getenv(EnvHookWrite)))
	if write == "" {
		write = "background"
	}
	row("capture hooks", "user prompts %s (%s), write mode %s (%s)", prompts, EnvCapturePrompts, write, EnvHookWrite)
	roots := "none"
	if len(s.CodeRoots) > 0 {
		roots = strings.Join(s.CodeRoots, string(os.PathListSeparator))
	}
	row("code memory", "verification cache TTL %s (CAIRN_ETV_TTL), files over %d bytes skipped (CAIRN_CODE_MAX_FILE_BYTES), network faces index under %s (CAIRN_CODE_ROOTS)",
		time.Duration(s.ETVTTLMs)*time.Millisecond, s.CodeMaxFileBytes, roots)
	logs := "CAIRN_LOG=" + os.Getenv(envLog)
	if s.NoLog {
		logs = "MCP_NO_LOG: counters only"
	} else if os.Getenv(envLog) == "" {
		logs = "warn (serve: info); CAIRN_LOG sets it"
	}
	row("logging", "%s", logs)
	for _, x := range s.Warnings {
		row("warning", "%s", x)
	}
	for _, x := range s.Notes {
		row("note", "%s", x)
	}
}
