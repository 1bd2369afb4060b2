package graph_test

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// The real-text fixture: 1,568 sentences nobody here wrote (Debian
// changelogs, LoCoMo's conversations, the READMEs and CHANGELOGs of Go
// modules, the Go and Python standard libraries' doc comments), labelled
// by hand with what a careful person would stage
// (testdata/kg_extraction/README.md).
const realFixture = "../testdata/kg_extraction/real.jsonl"

// realSplit is a sentence's half: test when the first byte of the SHA-256
// of its text is odd, else tune. The split was made before the extractor
// was changed for this text; the rules are tuned on the tune half only.
func realSplit(text string) string {
	if sha256.Sum256([]byte(text))[0]&1 == 1 {
		return "test"
	}
	return "tune"
}

// The fixture is what its README says: enough sentences, the split by
// hash, every edge between two labelled entities of its sentence, every
// label a name the sentence holds, enough edges in the test half for its
// edge figures to mean something.
func TestRealFixtureIsWellFormed(t *testing.T) {
	fx := loadFixtureFile(t, realFixture)
	if len(fx) < 300 {
		t.Fatalf("the fixture has %d sentences; want at least 300", len(fx))
	}
	ids := map[string]bool{}
	edges := map[string]int{}
	for _, ft := range fx {
		if ids[ft.ID] {
			t.Errorf("%s: id used twice", ft.ID)
		}
		ids[ft.ID] = true
		if got := realSplit(ft.Text); ft.Split != got {
			t.Errorf("%s: split %q, but its hash puts it in %q", ft.ID, ft.Split, got)
		}
		names := map[string]bool{}
		for _, e := range ft.Entities {
			if len(e) != 2 || e[0] == "" || e[1] == "" {
				t.Errorf("%s: entity %q: want [name, type]", ft.ID, e)
				continue
			}
			if !strings.Contains(strings.ToLower(ft.Text), strings.ToLower(e[0])) {
				t.Errorf("%s: entity %q is not in the sentence", ft.ID, e[0])
			}
			names[memory.NameKey(e[0])] = true
		}
		for _, g := range ft.Edges {
			if len(g) != 3 || !names[memory.NameKey(g[0])] || !names[memory.NameKey(g[2])] {
				t.Errorf("%s: edge %q does not join two labelled entities", ft.ID, g)
			}
		}
		edges[ft.Split] += len(ft.Edges)
	}
	if edges["test"] < 25 || edges["tune"] < 20 {
		t.Errorf("edges per half %v: too few for the edge figures to mean something", edges)
	}
}

// TestExtractorRealText measures staging (Extract, Plan at confidence_min
// 0.6 with the default caps, the store's deduplication) on the real-text
// fixture, sentence by sentence into an empty graph, for each half.
// docs/BENCHMARKS.md reports the test half.
//
// Of the targets (test half: entities P 0.90 and R 0.80, edges P 0.85 and
// R 0.60) only entity recall is met on the whole test half (811
// sentences): entities P 0.849 R 0.839, edges P 0.794 R 0.478; the fifth
// batch's test half (69 sentences, read once) measures entities P 0.964
// R 0.831, edges P 0.818 R 0.500. The floors below hold what was
// measured, a little under it, so that a change that makes the extractor
// worse on text it was not tuned for fails here.
func TestExtractorRealText(t *testing.T) {
	fx := loadFixtureFile(t, realFixture)
	floors := map[string][4]float64{ // entity P, entity R, edge P, edge R
		"tune":    {0.92, 0.89, 0.92, 0.80},
		"test":    {0.84, 0.83, 0.79, 0.47},
		"test1-4": {0.83, 0.83, 0.78, 0.47},
		"test5":   {0.95, 0.82, 0.81, 0.50},
	}
	check := func(name string, q Quality) {
		f, ok := floors[name]
		if !ok {
			return
		}
		got := [4]float64{q.Entities.precision(), q.Entities.recall(), q.Edges.precision(), q.Edges.recall()}
		for i, what := range []string{"entity precision", "entity recall", "edge precision", "edge recall"} {
			if got[i] < f[i] {
				t.Errorf("%s: %s %.3f is below its floor %.2f", name, what, got[i], f[i])
			}
		}
	}
	// The third, fourth and fifth batches (strata plain3, edge3; plain4,
	// edge4; plain5, edge5) were labelled after the extractor had been
	// tuned on the batches before them: their halves are reported on their
	// own too, and so are the first four batches without the fifth (the
	// fifth was labelled and committed before the extractor was run on it).
	groups := []struct {
		name string
		in   func(stratum string) bool
	}{
		{"3", func(s string) bool { return strings.HasSuffix(s, "3") }},
		{"4", func(s string) bool { return strings.HasSuffix(s, "4") }},
		{"1-4", func(s string) bool { return !strings.HasSuffix(s, "5") }},
		{"5", func(s string) bool { return strings.HasSuffix(s, "5") }},
	}
	for _, g := range groups {
		var part []fixtureThought
		for _, ft := range fx {
			if g.in(ft.Stratum) {
				part = append(part, ft)
			}
		}
		for _, split := range []string{"tune", "test"} {
			q := measure(part, split, 0.6)
			t.Log(realLine(split+g.name, q))
			check(split+g.name, q)
			if testing.Verbose() {
				t.Logf("%s%s errors by kind: %v", split, g.name, errorCounts(q.Errors))
			}
		}
	}
	for _, split := range []string{"tune", "test"} {
		q := measure(fx, split, 0.6)
		t.Log(realLine(split, q))
		// The rules are tuned on the tune half: only its errors are shown.
		if testing.Verbose() && split == "tune" {
			t.Logf("tune errors:\n%s", strings.Join(q.Errors, "\n"))
		}
		check(split, q)
	}
}

func realLine(split string, q Quality) string {
	return fmt.Sprintf("%-7s entities P %.3f R %.3f (%d/%d staged, %d gold)  edges P %.3f R %.3f (%d/%d staged, %d gold)", split,
		q.Entities.precision(), q.Entities.recall(), q.Entities.tp, q.Entities.staged, q.Entities.gold,
		q.Edges.precision(), q.Edges.recall(), q.Edges.tp, q.Edges.staged, q.Edges.gold)
}

// errorCounts counts a half's errors by kind, never showing one: junk
// entities by the rule that found them, missed entities, missed edges
// whose ends were both staged or not, wrong edges by their rule. It is
// how the test half's errors may be looked at.
func errorCounts(errs []string) map[string]int {
	missedEnt := map[string]bool{}
	for _, e := range errs {
		id, rest, _ := strings.Cut(e, ": ")
		if name, ok := strings.CutPrefix(rest, "missed entity "); ok {
			missedEnt[id+" "+strings.Trim(name, `"`)] = true
		}
	}
	n := map[string]int{}
	for _, e := range errs {
		id, rest, _ := strings.Cut(e, ": ")
		kind, detail, _ := strings.Cut(rest, ` "`)
		switch kind {
		case "junk entity", "wrong edge":
			_, rule, _ := strings.Cut(detail, `" (`)
			rule = strings.TrimRight(strings.TrimRightFunc(rule, func(r rune) bool { return r == ')' || r == '.' || (r >= '0' && r <= '9') }), " ")
			n[kind+" ("+rule+")"]++
		case "missed edge":
			parts := strings.Split(strings.Trim(detail, `"`), " -> ")
			if len(parts) != 3 {
				n[kind]++
			} else if missedEnt[id+" "+parts[0]] || missedEnt[id+" "+parts[2]] {
				n["missed edge "+parts[1]+", an end missed"]++
			} else {
				n["missed edge "+parts[1]+", both ends staged"]++
			}
		default:
			n[kind]++
		}
	}
	return n
}
