package index

import (
	"testing"

	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
)

// TestContextScores checks the BM25F context: a term found both in a
// record and next to it counts about once, while another term found next
// to it adds; only documents the filter allows score or take shares.
func TestContextScores(t *testing.T) {
	store := newFakeStore()
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
		repo := "/src/shop"
		if i == 2 {
			repo = "/src/other"
		}
		store.put(memory.IndexRecord{Type: memory.TargetObservation, ID: string(rune('a' + i)), Content: s, TS: int64(i),
			Scope: memory.Scope{RepoID: repo}, CapsuleID: "cap", Position: i})
	}
	x := openMem(t)
	syncX(t, x, store)
	// Each document takes half of the text of the one before it.
	sh := Shares{Before: 0.5, BeforeOther: 0.5}
	x.Read(func(v *View) error {
		doc := func(i int) uint32 {
			d, ok := v.DocOf(memory.EntityRef{Type: memory.TargetObservation, ID: string(rune('a' + i))})
			if !ok {
				t.Fatalf("no document %d", i)
			}
			return d
		}
		n := v.Docs()
		own, ctx, tf := make([]float32, n), make([]float32, n), make([]float64, n)
		ownDocs, ctxDocs := v.ContextScores(lexical.QueryTerms("deploy rollback"), v.Filter(memory.Scope{}), sh, own, ctx, tf, nil, nil)
		if len(ownDocs) != 3 || len(ctxDocs) != 5 {
			t.Fatalf("own %v, context %v; want 3 and 5 documents", ownDocs, ctxDocs)
		}
		for i, f := range tf {
			if f != 0 {
				t.Fatalf("tf[%d] = %v after the call; want the scratch space zeroed", i, f)
			}
		}
		d1, d2, d4 := doc(1), doc(2), doc(4)
		if own[d2] != 0 || ctx[d2] == 0 || ctx[d2] >= own[d1] {
			t.Fatalf("document 2 (only next to a match): own %v, context %v; want 0 and a share below a match's %v", own[d2], ctx[d2], own[d1])
		}
		// Document 1 holds "deploy" and takes half of document 0's: more
		// than alone, far less than twice.
		if ctx[d1] <= own[d1] || ctx[d1] >= 1.5*own[d1] {
			t.Fatalf("document 1: own %v, context %v; want the repeated term to saturate", own[d1], ctx[d1])
		}
		// Document 4 takes "rollback" from document 3: a new term adds.
		if ctx[d4] == 0 || own[d4] != 0 {
			t.Fatalf("document 4: own %v, context %v", own[d4], ctx[d4])
		}
		// Only documents in the scope score or take shares.
		own, ctx = make([]float32, n), make([]float32, n)
		_, ctxDocs = v.ContextScores(lexical.QueryTerms("deploy"), v.Filter(memory.Scope{RepoID: "/src/shop"}), sh, own, ctx, tf, nil, nil)
		for _, d := range ctxDocs {
			if d == d2 {
				t.Fatal("a document out of scope took a share")
			}
		}
		return nil
	})
}
