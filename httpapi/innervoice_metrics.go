package httpapi

import (
	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/metrics"
)

// coverageBuckets are the bounds of the coverage-ratio histogram.
var coverageBuckets = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}

// innerVoiceMetrics counts inner_voice's calls on /metrics: figures only,
// never a question, a prompt or an answer.
func (a *API) innerVoiceMetrics(reg *metrics.Registry) {
	calls := reg.Counter("cairn_inner_voice_calls_total", "inner_voice calls by synthesiser and outcome (answered, refused, no_sources).", "synthesizer", "outcome")
	refusals := reg.Counter("cairn_inner_voice_refusals_total", "inner_voice answers refused as not grounded enough, by synthesiser.", "synthesizer")
	degraded := reg.Counter("cairn_inner_voice_degraded_total", "inner_voice calls the extractive synthesiser answered because the language model failed.")
	seconds := reg.Histogram("cairn_inner_voice_seconds", "inner_voice call latency in seconds, by synthesiser.", metrics.DefaultBuckets, "synthesizer")
	coverage := reg.Histogram("cairn_inner_voice_coverage_ratio", "Coverage ratio of inner_voice answers (supported claims / claims), by synthesiser.", coverageBuckets, "synthesizer")
	tokens := reg.Counter("cairn_inner_voice_tokens_total", "Language-model tokens inner_voice used, by kind (prompt or completion).", "kind")
	cost := reg.Counter("cairn_inner_voice_cost_usd_total", "Estimated cost of inner_voice's language-model calls in US dollars.")
	a.eng.OnInnerVoice(func(c cairn.InnerVoiceCall) {
		calls.Inc(c.Synthesizer, c.Outcome)
		seconds.Observe(c.Latency.Seconds(), c.Synthesizer)
		if c.Outcome == cairn.OutcomeRefused {
			refusals.Inc(c.Synthesizer)
		}
		if c.Outcome != cairn.OutcomeNoSources {
			coverage.Observe(c.Coverage, c.Synthesizer)
		}
		if c.Degraded {
			degraded.Inc()
		}
		tokens.Add(float64(c.PromptTokens), "prompt")
		tokens.Add(float64(c.CompletionTokens), "completion")
		cost.Add(c.Cost)
	})
}
