package httpapi

import (
	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/metrics"
)

// codeJobMetrics shows code_index's background jobs on /metrics: how many
// the server keeps in each state, and how far the running ones are (no
// samples when the engine runs no jobs).
func (a *API) codeJobMetrics(reg *metrics.Registry) {
	read := func(f func(c cairn.CodeIndexJobCounts) []metrics.Sample) func() []metrics.Sample {
		return func() []metrics.Sample {
			c, ok := a.eng.CodeIndexJobCounts()
			if !ok {
				return nil
			}
			return f(c)
		}
	}
	reg.GaugeFunc("cairn_code_index_jobs", "Code index jobs this server keeps, by state (queued, running, and the last finished: done, failed, cancelled).",
		read(func(c cairn.CodeIndexJobCounts) []metrics.Sample {
			var out []metrics.Sample
			for _, s := range cairn.CodeIndexJobStates() {
				out = append(out, metrics.Sample{Labels: []string{string(s)}, Value: float64(c.ByState[s])})
			}
			return out
		}), "state")
	reg.GaugeFunc("cairn_code_index_job_files", "Files the running code index jobs have looked at (done) of those they listed (total).",
		read(func(c cairn.CodeIndexJobCounts) []metrics.Sample {
			return []metrics.Sample{{Labels: []string{"done"}, Value: float64(c.FilesDone)}, {Labels: []string{"total"}, Value: float64(c.FilesTotal)}}
		}), "kind")
	reg.GaugeFunc("cairn_code_index_job_entities", "Entities the running code index jobs have resolved so far.",
		read(func(c cairn.CodeIndexJobCounts) []metrics.Sample {
			return []metrics.Sample{{Value: float64(c.EntitiesRead)}}
		}))
}
