package metrics_test

import (
	"strings"
	"testing"

	"github.com/cairnhq/cairn/internal/metrics"
)

func TestTextFormat(t *testing.T) {
	r := metrics.New()
	c := r.Counter("cairn_requests_total", "Requests.", "route", "code")
	c.Inc("POST /v1/retrieve", "200")
	c.Inc("POST /v1/retrieve", "200")
	c.Inc("GET /v1/status", "401")
	h := r.Histogram("cairn_request_seconds", "Latency.", []float64{0.01, 0.1}, "route")
	h.Observe(0.005, "a")
	h.Observe(0.05, "a")
	h.Observe(5, "a")
	r.GaugeFunc("cairn_rows", "Rows.", func() []metrics.Sample {
		return []metrics.Sample{{Labels: []string{"observations"}, Value: 42}}
	}, "table")
	r.CounterFunc("cairn_healed_total", "Healed.", func() []metrics.Sample { return []metrics.Sample{{Value: 7}} })
	r.CounterFunc("cairn_degraded_total", "Degraded.", func() []metrics.Sample {
		return []metrics.Sample{{Labels: []string{"embedder_unavailable"}, Value: 3}}
	}, "reason")
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `# HELP cairn_degraded_total Degraded.
# TYPE cairn_degraded_total counter
cairn_degraded_total{reason="embedder_unavailable"} 3
# HELP cairn_healed_total Healed.
# TYPE cairn_healed_total counter
cairn_healed_total 7
# HELP cairn_request_seconds Latency.
# TYPE cairn_request_seconds histogram
cairn_request_seconds_bucket{route="a",le="0.01"} 1
cairn_request_seconds_bucket{route="a",le="0.1"} 2
cairn_request_seconds_bucket{route="a",le="+Inf"} 3
cairn_request_seconds_sum{route="a"} 5.055
cairn_request_seconds_count{route="a"} 3
# HELP cairn_requests_total Requests.
# TYPE cairn_requests_total counter
cairn_requests_total{route="GET /v1/status",code="401"} 1
cairn_requests_total{route="POST /v1/retrieve",code="200"} 2
# HELP cairn_rows Rows.
# TYPE cairn_rows gauge
cairn_rows{table="observations"} 42
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	if c.Value("POST /v1/retrieve", "200") != 2 || h.Count("a") != 3 {
		t.Fatal("Value/Count")
	}
	quoted := metrics.New()
	quoted.Counter("x_total", "X.", "v").Inc("a\"b\\c\nd")
	b.Reset()
	quoted.WriteText(&b)
	if !strings.Contains(b.String(), `x_total{v="a\"b\\c\nd"} 1`) {
		t.Fatalf("label escaping: %s", b.String())
	}
}
