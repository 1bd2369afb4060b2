package bench_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/internal/bench"
)

func TestParseKsAndSystems(t *testing.T) {
	ks, err := bench.ParseKs("20, 1,5,5,10")
	if err != nil || !slices.Equal(ks, []int{1, 5, 10, 20}) {
		t.Fatalf("ParseKs: %v %v", ks, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-3", "1001"} {
		if _, err := bench.ParseKs(bad); err == nil {
			t.Errorf("ParseKs(%q) accepted", bad)
		}
	}
	sys, err := bench.ParseSystems("mem0, cairn-hybrid")
	if err != nil || !slices.Equal(sys, []string{"cairn-hybrid", "mem0"}) {
		t.Fatalf("ParseSystems: %v %v", sys, err)
	}
	if all, _ := bench.ParseSystems("all"); !slices.Equal(all, bench.PeerSystems) {
		t.Fatalf("all: %v", all)
	}
	if _, err := bench.ParseSystems("cairn,mem0"); err == nil || !strings.Contains(err.Error(), `"cairn"`) {
		t.Fatalf("unknown system: %v", err)
	}
}

func TestKeywords(t *testing.T) {
	for q, want := range map[string][]string{
		"When did Caroline go to the LGBTQ support group?": {"caroline", "lgbtq", "support", "group"},
		"What is Melanie's favourite book? What book?":     {"melanie", "favourite", "book"},
		"Who is it?": nil,
	} {
		if got := bench.Keywords(q); !slices.Equal(got, want) {
			t.Errorf("Keywords(%q) = %q; want %q", q, got, want)
		}
	}
}

func TestPeersTableAndChart(t *testing.T) {
	rep := bench.PeersReport{Questions: 2, Ks: []int{1, 10}, Systems: []bench.SystemResult{
		{System: "cairn-hybrid", Version: "cairn test", Recall: map[string]float64{"1": 0.5, "10": 1}, MRR: 0.75, P50Ms: 1.234, P99Ms: 12.5, IngestSeconds: 2},
		{System: "mem0", Version: "mem0ai x", Recall: map[string]float64{"1": 0, "10": 0.5}, MRR: 0.1, P50Ms: 151, P99Ms: 388, IngestSeconds: 29},
	}}
	table := bench.PeersTable(rep)
	lines := strings.Split(table, "\n")
	if !strings.HasPrefix(lines[0], "| system ") || len(lines[0]) != len(lines[2]) || len(lines[2]) != len(lines[3]) {
		t.Fatalf("table not aligned:\n%s", table)
	}
	if !strings.Contains(lines[2], "0.500") || !strings.Contains(lines[2], "1.23") || !strings.Contains(lines[3], "151") {
		t.Fatalf("table:\n%s", table)
	}
	var b bytes.Buffer
	if err := bench.PeersChart(rep).WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "mem0") {
		t.Fatalf("svg lacks a series")
	}
}
