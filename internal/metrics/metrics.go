// Package metrics keeps counters and histograms and writes them in the
// Prometheus text exposition format, for the servers' /metrics endpoint.
// It is small on purpose: labelled counters, labelled histograms, and
// gauges and counters read at scrape time.
package metrics

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DefaultBuckets are latency buckets in seconds, from 100µs to 10s.
var DefaultBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Registry holds metrics. It is safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	metrics map[string]writer
}

type writer interface {
	write(w *bufio.Writer, name string)
}

// New returns an empty registry.
func New() *Registry { return &Registry{metrics: map[string]writer{}} }

func (r *Registry) add(name string, m writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.metrics[name]; dup {
		panic("metrics: " + name + " registered twice")
	}
	r.metrics[name] = m
}

// WriteText writes every metric in the Prometheus text format, sorted by
// name, series sorted by labels.
func (r *Registry) WriteText(w io.Writer) error {
	r.mu.Lock()
	names := make([]string, 0, len(r.metrics))
	for n := range r.metrics {
		names = append(names, n)
	}
	slices.Sort(names)
	ms := make([]writer, len(names))
	for i, n := range names {
		ms[i] = r.metrics[n]
	}
	r.mu.Unlock()
	bw := bufio.NewWriter(w)
	for i, n := range names {
		ms[i].write(bw, n)
	}
	return bw.Flush()
}

// labels renders {a="x",b="y"} (or "" when there are none), escaping values.
func labels(names, values []string, extra ...string) string {
	if len(names) == 0 && len(extra) == 0 {
		return ""
	}
	var parts []string
	for i, n := range names {
		parts = append(parts, n+"="+escape(values[i]))
	}
	for i := 0; i+1 < len(extra); i += 2 {
		parts = append(parts, extra[i]+"="+escape(extra[i+1]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// escape quotes a label value as the text format wants: backslash, double
// quote and line feed escaped.
func escape(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}

func header(w *bufio.Writer, name, help, typ string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// CounterVec is a counter with labels.
type CounterVec struct {
	help   string
	labels []string
	mu     sync.Mutex
	values map[string]*counterSeries
}

type counterSeries struct {
	labels []string
	n      float64
}

// Counter registers a counter.
func (r *Registry) Counter(name, help string, labelNames ...string) *CounterVec {
	c := &CounterVec{help: help, labels: labelNames, values: map[string]*counterSeries{}}
	r.add(name, c)
	return c
}

// Add adds delta to the series with these label values.
func (c *CounterVec) Add(delta float64, labelValues ...string) {
	key := strings.Join(labelValues, "\x00")
	c.mu.Lock()
	s, ok := c.values[key]
	if !ok {
		s = &counterSeries{labels: slices.Clone(labelValues)}
		c.values[key] = s
	}
	s.n += delta
	c.mu.Unlock()
}

// Inc adds one.
func (c *CounterVec) Inc(labelValues ...string) { c.Add(1, labelValues...) }

// Value returns the current value of a series (0 when it has none).
func (c *CounterVec) Value(labelValues ...string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.values[strings.Join(labelValues, "\x00")]; ok {
		return s.n
	}
	return 0
}

func (c *CounterVec) write(w *bufio.Writer, name string) {
	header(w, name, c.help, "counter")
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range sortedKeys(c.values) {
		s := c.values[k]
		fmt.Fprintf(w, "%s%s %s\n", name, labels(c.labels, s.labels), formatFloat(s.n))
	}
}

// HistogramVec is a histogram with labels.
type HistogramVec struct {
	help    string
	labels  []string
	buckets []float64
	mu      sync.Mutex
	values  map[string]*histSeries
}

type histSeries struct {
	labels []string
	counts []uint64 // per bucket, not cumulative
	sum    float64
	n      uint64
}

// Histogram registers a histogram with the given upper bounds (ascending).
func (r *Registry) Histogram(name, help string, buckets []float64, labelNames ...string) *HistogramVec {
	h := &HistogramVec{help: help, labels: labelNames, buckets: slices.Clone(buckets), values: map[string]*histSeries{}}
	r.add(name, h)
	return h
}

// Observe records v in the series with these label values.
func (h *HistogramVec) Observe(v float64, labelValues ...string) {
	key := strings.Join(labelValues, "\x00")
	h.mu.Lock()
	s, ok := h.values[key]
	if !ok {
		s = &histSeries{labels: slices.Clone(labelValues), counts: make([]uint64, len(h.buckets))}
		h.values[key] = s
	}
	if i, _ := slices.BinarySearch(h.buckets, v); i < len(h.buckets) {
		s.counts[i]++
	}
	s.sum += v
	s.n++
	h.mu.Unlock()
}

// Count returns how many observations a series holds.
func (h *HistogramVec) Count(labelValues ...string) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.values[strings.Join(labelValues, "\x00")]; ok {
		return s.n
	}
	return 0
}

func (h *HistogramVec) write(w *bufio.Writer, name string) {
	header(w, name, h.help, "histogram")
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range sortedKeys(h.values) {
		s := h.values[k]
		var cum uint64
		for i, le := range h.buckets {
			cum += s.counts[i]
			fmt.Fprintf(w, "%s_bucket%s %d\n", name, labels(h.labels, s.labels, "le", formatFloat(le)), cum)
		}
		fmt.Fprintf(w, "%s_bucket%s %d\n", name, labels(h.labels, s.labels, "le", "+Inf"), s.n)
		fmt.Fprintf(w, "%s_sum%s %s\n", name, labels(h.labels, s.labels), formatFloat(s.sum))
		fmt.Fprintf(w, "%s_count%s %d\n", name, labels(h.labels, s.labels), s.n)
	}
}

// Sample is one gauge reading.
type Sample struct {
	Labels []string // label values, in the gauge's label order
	Value  float64
}

type gaugeFunc struct {
	help   string
	labels []string
	read   func() []Sample
	typ    string
}

// GaugeFunc registers a gauge whose samples read returns at every scrape.
func (r *Registry) GaugeFunc(name, help string, read func() []Sample, labelNames ...string) {
	r.add(name, &gaugeFunc{help: help, labels: labelNames, read: read, typ: "gauge"})
}

// CounterFunc registers a counter kept elsewhere (it only grows): read
// returns its samples at every scrape.
func (r *Registry) CounterFunc(name, help string, read func() []Sample, labelNames ...string) {
	r.add(name, &gaugeFunc{help: help, labels: labelNames, read: read, typ: "counter"})
}

func (g *gaugeFunc) write(w *bufio.Writer, name string) {
	header(w, name, g.help, g.typ)
	for _, s := range g.read() {
		fmt.Fprintf(w, "%s%s %s\n", name, labels(g.labels, s.Labels), formatFloat(s.Value))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
