package retrieve

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// cands makes candidates of one source with the given scores; a
// candidate's content hash is "h" + its id unless hashes names another.
func cands(src source, prefix string, scores []float64, hashes map[string]string) []ivCand {
	kind := memory.VectorThought
	if src == srcKG {
		kind = memory.VectorKGObservation
	}
	var out []ivCand
	for i, s := range scores {
		id := fmt.Sprintf("%s%d", prefix, i+1)
		h := "h" + id
		if hh, ok := hashes[id]; ok {
			h = hh
		}
		out = append(out, ivCand{kind: kind, src: src, score: s, rec: memory.IndexRecord{ID: id}, hash: h, keys: []string{h}})
	}
	return out
}

func snippetIDs(res InnerVoiceResult) []string {
	var out []string
	for _, s := range res.Snippets {
		out = append(out, s.ID)
	}
	slices.Sort(out)
	return out
}

// The specification's mix: 0 is thoughts only and 1 the knowledge graph
// only, whatever the other source holds; a source short of hits hands
// its slots to the other only in between.
func TestAssembleMixExtremesAreExclusive(t *testing.T) {
	iv := &InnerVoice{}
	cases := []struct {
		name             string
		thoughts, kg     []float64
		mix              float64
		want             []string
		kgSlots, thSlots int
		kgCands, thCands int
	}{
		{"mix 0, few thoughts", []float64{0.9, 0.8}, []float64{0.95, 0.9, 0.85, 0.8}, 0, []string{"t1", "t2"}, 0, 2, 0, 2},
		{"mix 1, few graph records", []float64{0.95, 0.9, 0.85, 0.8}, []float64{0.7}, 1, []string{"k1"}, 1, 0, 1, 0},
		{"mix 0, no thought", nil, []float64{0.9}, 0, nil, 0, 0, 0, 0},
		{"mix 0.5 backfills", []float64{0.9}, []float64{0.9, 0.8, 0.7, 0.6}, 0.5, []string{"k1", "k2", "k3", "t1"}, 3, 1, 4, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d InnerVoiceDiagnostics
			th, kg := inPlay(c.mix, cands(srcThoughts, "t", c.thoughts, nil), cands(srcKG, "k", c.kg, nil))
			d.ThoughtCandidates, d.KGCandidates = len(th), len(kg)
			res := iv.assemble(th, kg, 4, c.mix, 0.5, 0.15, &d)
			if got := snippetIDs(res); !slices.Equal(got, c.want) {
				t.Errorf("snippets %v, want %v", got, c.want)
			}
			if d.KGSlots != c.kgSlots || d.ThoughtSlots != c.thSlots || d.KGCandidates != c.kgCands || d.ThoughtCandidates != c.thCands {
				t.Errorf("diagnostics %+v", d)
			}
		})
	}
}

// A thought and a graph fact saying the same thing: with thoughts only
// (mix 0, what inner_voice's context "thoughts" asks for) the thought is
// kept; with both sources the graph's copy is kept and the diagnostics
// name the thought deduplication removed and the copy it kept.
func TestAssembleDeduplicationKeepsTheRequestedPoolAndSaysWhatItRemoved(t *testing.T) {
	iv := &InnerVoice{}
	same := map[string]string{"t1": "hsame", "k1": "hsame"}
	th, kg := inPlay(0, cands(srcThoughts, "t", []float64{0.86, 0.6}, same), cands(srcKG, "k", []float64{0.88}, same))
	var d InnerVoiceDiagnostics
	res := iv.assemble(th, kg, 5, 0, 0.5, 0.15, &d)
	if got := snippetIDs(res); !slices.Equal(got, []string{"t1", "t2"}) {
		t.Fatalf("mix 0: snippets %v, want the thought and the other thought", got)
	}
	if d.Deduped != 0 || len(d.DedupedItems) != 0 {
		t.Errorf("mix 0: nothing of the graph competes, yet deduplication removed %d (%v)", d.Deduped, d.DedupedItems)
	}

	d = InnerVoiceDiagnostics{}
	th, kg = inPlay(0.5, cands(srcThoughts, "t", []float64{0.86, 0.6}, same), cands(srcKG, "k", []float64{0.88}, same))
	res = iv.assemble(th, kg, 5, 0.5, 0.5, 0.15, &d)
	if got := snippetIDs(res); !slices.Equal(got, []string{"k1", "t2"}) {
		t.Fatalf("mix 0.5: snippets %v, want the graph's copy and the other thought", got)
	}
	want := []DedupedItem{{Table: "thoughts", ID: "t1", KeptTable: "kg_observations", KeptID: "k1"}}
	if d.Deduped != 1 || !slices.Equal(d.DedupedItems, want) {
		t.Errorf("mix 0.5: deduped %d %v, want %v", d.Deduped, d.DedupedItems, want)
	}
}

// below_floor counts the best top_k candidates of the sources in play
// that scored under the floor asked for, whether or not the adaptive
// floor then let them through; the other source's candidates do not
// count at the extremes of mix.
func TestAssembleCountsTheTopResultsBelowTheFloor(t *testing.T) {
	iv := &InnerVoice{}
	cases := []struct {
		name         string
		thoughts, kg []float64
		mix          float64
		want         int
	}{
		{"two of the top three under", []float64{0.9, 0.4, 0.3, 0.2}, nil, 0, 2},
		{"none under", []float64{0.9, 0.8, 0.7}, nil, 0, 0},
		{"the graph out of play", []float64{0.9, 0.8, 0.7}, []float64{0.1, 0.1, 0.1}, 0, 0},
		{"both in play", []float64{0.9}, []float64{0.45, 0.1}, 0.5, 2},
		{"all under, none returned", []float64{0.12, 0.11}, nil, 0, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d InnerVoiceDiagnostics
			th, kg := inPlay(c.mix, cands(srcThoughts, "t", c.thoughts, nil), cands(srcKG, "k", c.kg, nil))
			iv.assemble(th, kg, 3, c.mix, 0.5, 0.15, &d)
			if d.BelowFloor != c.want {
				t.Errorf("below_floor %d, want %d (%+v)", d.BelowFloor, c.want, d)
			}
		})
	}
}
