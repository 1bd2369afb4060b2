package lexical_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/lexical"
)

// TestContextScores checks the BM25F context: a term found both in a
// record and next to it counts about once, while another term found next
// to it adds.
func TestContextScores(t *testing.T) {
	x := lexical.New()
	texts := []string{
		"the deploy failed on friday",  // 0
		"the deploy failed again",      // 1
		"a note about lunch",           // 2
		"rollback of the release",      // 3
		"nothing here at all",          // 4
		"unrelated words only, twice",  // 5
		"more unrelated words, thrice", // 6
	}
	for i, s := range texts {
		x.Add(uint32(i), s)
	}
	// Each document takes half of the text of the one before it.
	nb := func(doc uint32, visit func(uint32, float32)) {
		if int(doc)+1 < len(texts) {
			visit(doc+1, 0.5)
		}
	}
	n := x.Cap()
	own, ctx, tf := make([]float32, n), make([]float32, n), make([]float32, n)
	ownDocs, ctxDocs := x.ContextScores(lexical.QueryTerms("deploy rollback"), nil, nb, own, ctx, tf, nil, nil)
	if len(ownDocs) != 3 || len(ctxDocs) != 5 {
		t.Fatalf("own %v, context %v; want 3 and 5 documents", ownDocs, ctxDocs)
	}
	for i, v := range tf {
		if v != 0 {
			t.Fatalf("tf[%d] = %v after the call; want the scratch space zeroed", i, v)
		}
	}
	if own[2] != 0 || ctx[2] == 0 || ctx[2] >= own[1] {
		t.Fatalf("document 2 (only next to a match): own %v, context %v; want 0 and a share below a match's %v", own[2], ctx[2], own[1])
	}
	// Document 1 holds "deploy" and takes half of document 0's "deploy":
	// more than alone, far less than twice.
	if ctx[1] <= own[1] || ctx[1] >= 1.5*own[1] {
		t.Fatalf("document 1: own %v, context %v; want the repeated term to saturate", own[1], ctx[1])
	}
	// Document 4 takes "rollback" from document 3: a new term adds in full
	// share, so its context is its neighbour's half.
	if ctx[4] == 0 || own[4] != 0 {
		t.Fatalf("document 4: own %v, context %v", own[4], ctx[4])
	}
	// Only allowed documents score or take shares.
	own, ctx = make([]float32, n), make([]float32, n)
	_, ctxDocs = x.ContextScores(lexical.QueryTerms("deploy"), func(d uint32) bool { return d != 2 }, nb, own, ctx, tf, nil, nil)
	for _, d := range ctxDocs {
		if d == 2 {
			t.Fatalf("a filtered-out document took a share")
		}
	}
}

func TestIDF(t *testing.T) {
	x := lexical.New()
	x.Add(0, "alpha beta")
	x.Add(1, "alpha gamma")
	if a, g := x.IDF("alpha"), x.IDF("gamma"); a <= 0 || g <= a {
		t.Fatalf("idf alpha %v, gamma %v; want 0 < alpha < gamma", a, g)
	}
	if v := x.IDF("delta"); v != 0 {
		t.Fatalf("idf of an absent term %v; want 0", v)
	}
}

// TestRemoveMatchesAFreshIndex: after removals, one at a time (a search
// per term) or many at once (a sweep), scores and idf are those of an
// index that never held the removed documents.
func TestRemoveMatchesAFreshIndex(t *testing.T) {
	words := strings.Fields("deploy rollback cache token session webhook retry queue index budget alpha beta gamma")
	rng := rand.New(rand.NewPCG(5, 6))
	texts := make([]string, 200)
	for i := range texts {
		var b strings.Builder
		for range 3 + rng.IntN(8) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		texts[i] = b.String()
	}
	x := lexical.New()
	for i, s := range texts {
		x.Add(uint32(i), s)
	}
	removed := map[uint32]bool{}
	for _, d := range []uint32{3, 4, 150} { // below the sweep threshold: one by one
		x.Remove(d)
		removed[d] = true
	}
	var many []uint32
	for d := uint32(10); d < 200; d += 7 {
		many = append(many, d)
		removed[d] = true
	}
	x.Remove(many...)
	x.Remove(3) // again: no effect
	fresh := lexical.New()
	for i, s := range texts {
		if !removed[uint32(i)] {
			fresh.Add(uint32(i), s)
		}
	}
	if x.Len() != fresh.Len() {
		t.Fatalf("Len %d; want %d", x.Len(), fresh.Len())
	}
	for _, w := range words {
		q := lexical.QueryTerms(w + " cache")
		got, want := make([]float32, len(texts)), make([]float32, len(texts))
		x.Scores(q, nil, got, nil)
		fresh.Scores(q, nil, want, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("%q: scores differ from a fresh index:\n%v\n%v", w, got, want)
		}
		if a, b := x.IDF(lexical.QueryTerms(w)[0]), fresh.IDF(lexical.QueryTerms(w)[0]); a != b {
			t.Fatalf("idf %q %v; want %v", w, a, b)
		}
	}
}
