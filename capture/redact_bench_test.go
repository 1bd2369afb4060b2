package capture_test

import (
	"testing"

	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/internal/corpus"
)

// BenchmarkRedactIngest redacts the records the root package's
// BenchmarkIngest writes (corpus.New(1), 10,000 observations), one
// record per call as every write does: its ns/record against that
// benchmark's time per record is the redactor's share of batched
// ingest.
func BenchmarkRedactIngest(b *testing.B) {
	obs := corpus.New(1).Observations(10_000)
	texts := make([]string, len(obs))
	for i, o := range obs {
		texts[i] = o.Content
	}
	var r capture.Redactor
	for b.Loop() {
		for _, t := range texts {
			r.Redact(t)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/record")
}
