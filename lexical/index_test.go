package lexical_test

import (
	"testing"

	"github.com/cairnhq/cairn/lexical"
)

// TestScores: BM25 ranks a document holding more of the query's terms,
// and a rarer term, higher; allow keeps documents out.
func TestScores(t *testing.T) {
	x := lexical.New()
	for i, s := range []string{
		"deploy failed on staging",          // 0: deploy, staging
		"deploy succeeded",                  // 1: deploy
		"staging is down again",             // 2: staging
		"the payment webhook retried",       // 3: nothing
		"deploy to staging failed, staging", // 4: deploy, staging twice
	} {
		x.Add(uint32(i), s)
	}
	if x.Len() != 5 || x.Cap() != 5 {
		t.Fatalf("Len %d, Cap %d", x.Len(), x.Cap())
	}
	q := lexical.QueryTerms("why did the staging deploy fail")
	scores := make([]float32, x.Cap())
	touched := x.Scores(q, nil, scores, nil)
	if len(touched) != 4 || scores[3] != 0 {
		t.Fatalf("touched %v, scores %v", touched, scores)
	}
	if !(scores[0] > scores[1] && scores[0] > scores[2] && scores[4] > scores[2]) {
		t.Fatalf("scores %v: more matching terms should score higher", scores)
	}
	scores = make([]float32, x.Cap())
	touched = x.Scores(q, func(d uint32) bool { return d != 0 }, scores, nil)
	for _, d := range touched {
		if d == 0 {
			t.Fatal("a document allow refused was scored")
		}
	}
}
