package synth_test

import (
	"testing"

	"github.com/cairnhq/cairn/synth"
)

// The grounded LLM synthesis plugs into the Synthesizer seam: each claim
// becomes a sentence whose spans point into the sources that support it,
// a refusal an Answer without text.
func TestGroundedThroughTheSeam(t *testing.T) {
	var seen []synth.Synthesis
	s := &script{replies: []synth.ModelReply{reply(goodAnswer)}}
	var syn synth.Synthesizer = synth.Grounded{LLM: synth.LLMSynthesizer{Model: s.model}, Last: func(x synth.Synthesis) { seen = append(seen, x) }}
	ans, err := syn.Synthesize(ctx, "How do herons live?", birds)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Name != "grounded" || ans.Refused || ans.Text == "" || len(ans.Sentences) != 2 || len(seen) != 1 || seen[0].Cost != 0.001 {
		t.Fatalf("answer %+v (syntheses %+v)", ans, seen)
	}
	for _, sent := range ans.Sentences {
		if len(sent.Spans) == 0 {
			t.Fatalf("sentence %q has no span", sent.Text)
		}
		for _, sp := range sent.Spans {
			got := spanText(t, birds, sp)
			if got != "nests in colonies called heronries" && got != "hunt fish by standing still in shallow water" {
				t.Fatalf("span %+v reads %q", sp, got)
			}
		}
	}
	// A refusal: no text, the verifier's notes.
	s = &script{replies: []synth.ModelReply{reply(fabricated)}}
	ans, err = synth.Grounded{LLM: synth.LLMSynthesizer{Model: s.model}}.Synthesize(ctx, "How do herons live?", birds)
	if err != nil || !ans.Refused || ans.Text != "" || ans.Notes == "" || len(ans.Sentences) != 0 {
		t.Fatalf("refusal %+v %v", ans, err)
	}
	// No model: the error passes through, typed.
	if _, err := (synth.Grounded{}).Synthesize(ctx, "q", birds); err == nil {
		t.Fatal("a synthesiser without a model answered")
	}
}
