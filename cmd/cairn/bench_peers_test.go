package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchPeersFlags checks the flags are validated before anything is
// installed or loaded. The comparison itself needs npm and the network;
// run it by hand (see docs/BENCHMARKS.md).
func TestBenchPeersFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	notJSON := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(notJSON, []byte("{"), 0o644)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"bench", "peers"}, "--dataset is required"},
		{[]string{"bench", "peers", "--dataset", "/no/such/locomo10.json"}, "not a readable file"},
		{[]string{"bench", "peers", "--dataset", t.TempDir()}, "not a readable file"},
		{[]string{"bench", "peers", "--dataset", notJSON, "--k", "0,5"}, "--k wants cut-offs"},
		{[]string{"bench", "peers", "--dataset", notJSON, "--k", "ten"}, "--k wants cut-offs"},
		{[]string{"bench", "peers", "--dataset", notJSON, "--systems", "cairn-hybrid,zep"}, `unknown system "zep"`},
		{[]string{"bench", "peers", "--dataset", notJSON, "--limit", "-1"}, "--limit"},
		{[]string{"bench", "peers", "--dataset", notJSON}, "not a LoCoMo dataset"},
	} {
		_, errs, code := cli(t, db, "", tc.args...)
		if code != 2 || !strings.Contains(errs, tc.msg) {
			t.Errorf("cairn %v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, errs, tc.msg)
		}
	}
}

// TestBenchPeersCairnOnly runs the comparison with cairn's providers only,
// which needs neither npm nor the network, on a two-question dataset.
func TestBenchPeersCairnOnly(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "locomo.json")
	os.WriteFile(ds, []byte(`[{"sample_id":"conv-1","conversation":{"speaker_a":"Ann","speaker_b":"Bob",
"session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[
{"speaker":"Ann","dia_id":"D1:1","text":"I adopted a grey cat named Pixel last week."},
{"speaker":"Bob","dia_id":"D1:2","text":"Lovely! I started learning the violin."},
{"speaker":"Ann","dia_id":"D1:3","text":"My sister lives in Lisbon now."}]},
"qa":[{"question":"What is the name of Ann's cat?","answer":"Pixel","evidence":["D1:1"],"category":4},
{"question":"Which instrument is Bob learning?","answer":"violin","evidence":["D1:2"],"category":4}]}]`), 0o644)
	out := filepath.Join(dir, "peers.json")
	svg := filepath.Join(dir, "peers.svg")
	text := mustCLI(t, filepath.Join(dir, "cairn.db"), "bench", "peers", "--dataset", ds, "--systems", "cairn-local-fts,cairn-hybrid",
		"--k", "1,3", "--json", out, "--svg", svg)
	if !strings.Contains(text, "| cairn-hybrid ") || !strings.Contains(text, "R@3") {
		t.Fatalf("table:\n%s", text)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Questions int `json:"questions"`
		Systems   []struct {
			System string             `json:"system"`
			Recall map[string]float64 `json:"recall"`
		} `json:"systems"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Questions != 2 || len(rep.Systems) != 2 || rep.Systems[0].System != "cairn-hybrid" || rep.Systems[1].Recall["3"] != 1 {
		t.Fatalf("report: %s", b)
	}
	if s, err := os.ReadFile(svg); err != nil || !strings.Contains(string(s), "cairn-local-fts") {
		t.Fatalf("svg: %v %.200s", err, s)
	}
}
