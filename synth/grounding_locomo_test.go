package synth_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/cairnhq/cairn/synth"
)

// The extractive synthesiser answers with the sources' own sentences, so
// its answer must pass the verifier every time: every claim supported,
// and accepted whenever it rests on two sources or more. Checked on 284
// LoCoMo questions with the turns around their evidence
// (testdata/grounding/locomo_questions.json, scripts/grounding-locomo-questions.py;
// LoCoMo is CC BY-NC 4.0).
func TestExtractivePassesItsVerifier(t *testing.T) {
	b, err := os.ReadFile("testdata/grounding/locomo_questions.json")
	if err != nil {
		t.Fatal(err)
	}
	var qs []struct {
		ID       string `json:"id"`
		Question string `json:"question"`
		Sources  []struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	if len(qs) < 250 {
		t.Fatalf("%d questions", len(qs))
	}
	answered, accepted := 0, 0
	for _, q := range qs {
		var src []synth.Source
		for i, s := range q.Sources {
			src = append(src, synth.Source{ID: s.ID, Type: "thought", Text: s.Text, Relevance: 1 - float64(i)/10})
		}
		ans, err := synth.Extractive{MinSources: 2}.Synthesize(ctx, q.Question, src)
		if err != nil {
			t.Fatal(err)
		}
		if len(ans.Sentences) == 0 {
			continue
		}
		answered++
		v := synth.Verifier{}.Check(ctx, ans.Draft(src), src)
		for _, c := range v.Claims {
			if !c.Supported {
				t.Errorf("%s: the extract %q is not supported by its own source: %s", q.ID, c.Text, c.Reason)
			}
		}
		if cited(ans) >= 2 {
			if v.Response.Refused {
				t.Errorf("%s: refused: %s", q.ID, v.Response.Notes)
			} else {
				accepted++
			}
		}
	}
	t.Logf("%d questions, %d answered, %d resting on two sources or more, all accepted", len(qs), answered, accepted)
}
