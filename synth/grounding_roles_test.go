package synth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/synth"
)

// ops are the memories the fabrications were tried on.
var ops = []synth.Source{
	{ID: "m-1", Type: "thought", Text: "Omar approved the release on Friday. The migration failed twice and was rolled back."},
	{ID: "m-2", Type: "thought", Text: "The API runs on Kubernetes and the batch jobs run on Nomad."},
	{ID: "m-3", Type: "thought", Text: "The cache invalidates the queue when a deploy finishes. The endpoint is private."},
	{ID: "m-4", Type: "thought", Text: "payments-api: orders are stored in postgres. Backups are kept for 30 days in S3."},
	{ID: "m-5", Type: "thought", Text: "billing: retries are capped at five. The outage happened because the certificate expired."},
	{ID: "m-6", Type: "thought", Text: "Omar migrated the database to the new cluster last week."},
}

// cite cites every sentence of every source, as a model citing real
// sources would: the fabrication must be caught by what the claim says,
// not by what it cites.
func citeAll() []synth.Citation {
	var out []synth.Citation
	for _, s := range ops {
		for _, sent := range strings.SplitAfter(s.Text, ". ") {
			out = append(out, synth.Citation{SourceID: s.ID, Span: strings.TrimSpace(sent)})
		}
	}
	return out
}

// Each claim alone, citing real sources: the fabrications the issue
// found accepted are refused, their faithful twins accepted.
func TestVerifierChecksWhoDidWhat(t *testing.T) {
	v := synth.Verifier{MinSources: 1, MinCoverage: 1}
	for _, tc := range []struct {
		claim     string
		supported bool
	}{
		{"Omar approved the release on Friday.", true},
		{"Priya approved the release on Friday.", false}, // a name swapped at the start
		{"The API runs on Kubernetes.", true},
		{"The batch jobs run on Nomad.", true},
		{"The API runs on Nomad and the batch jobs on Kubernetes.", false}, // two of a kind exchanged
		{"The API runs on Nomad.", false},
		{"The cache invalidates the queue when a deploy finishes.", true},
		{"The queue invalidates the cache when a deploy finishes.", false}, // subject and object swapped
		{"The migration succeeded twice.", false},                          // an antonym
		{"The migration failed twice.", true},
		{"The endpoint is public.", false},
		{"The endpoint is private.", true},
		{"Orders are stored in dynamodb.", false}, // a lower-case product substituted
		{"Orders are stored in postgres.", true},
		{"Backups are kept for 30 days in S3, encrypted with a customer-managed key.", false}, // a quote with an invented tail
		{"Backups are kept for 30 days in S3.", true},
		{"The database was migrated by Omar to the new cluster.", true}, // the passive undone
		{"Omar was migrated by the database.", false},
		{"The certificate expired because the outage happened.", false}, // cause and effect reversed
		{"The outage happened because the certificate expired.", true},
		{"billing: retries are capped at five.", true},
		{"payments-api: retries are capped at five.", false}, // moved under another label
	} {
		res := v.Check(context.Background(), synth.Draft{Answer: tc.claim, Sources: citeAll()}, ops)
		if len(res.Claims) != 1 {
			t.Errorf("%q: %d claims", tc.claim, len(res.Claims))
			continue
		}
		if c := res.Claims[0]; c.Supported != tc.supported {
			t.Errorf("%q: supported %v, want %v (score %.2f, %s)", tc.claim, c.Supported, tc.supported, c.Score, c.Reason)
		}
	}
}
