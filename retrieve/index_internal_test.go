package retrieve

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
)

// TestDocInfoStaysSmall: the index holds one docInfo per record, so at a
// million records every byte is a megabyte (docs/BENCHMARKS.md, Scale).
func TestDocInfoStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(docInfo{}); n > 72 {
		t.Fatalf("docInfo is %d bytes; keep it at 72 or less", n)
	}
	if n := unsafe.Sizeof(docMeta{}); n > 20 {
		t.Fatalf("docMeta is %d bytes; keep it at 20 or less", n)
	}
}

// TestIndexInternsAndFinds: records of two types with one id stay apart,
// a replaced record's neighbours and tags follow it, and a forgotten one
// leaves its capsule slot, its key and its tags.
func TestIndexInternsAndFinds(t *testing.T) {
	x := NewIndex(nil)
	put := func(rec memory.IndexRecord) { x.mu.Lock(); x.putLocked(rec); x.flushLocked(); x.mu.Unlock() }
	obs := func(id string, pos int) memory.IndexRecord {
		return memory.IndexRecord{Type: memory.TargetObservation, ID: id, Content: "text of " + id, CapsuleID: "cap", Position: pos}
	}
	put(obs("a", 0))
	put(obs("b", 1))
	put(obs("c", 2))
	put(memory.IndexRecord{Type: memory.TargetSummary, ID: "a", Content: "a summary", Position: -1})
	put(memory.IndexRecord{Kind: memory.VectorThought, ID: "t", Tags: []string{"x"}, Status: memory.StatusRemoval, Position: -1})

	da, ok1 := x.docOf(memory.EntityRef{Type: memory.TargetObservation, ID: "a"})
	ds, ok2 := x.docOf(memory.EntityRef{Type: memory.TargetSummary, ID: "a"})
	if !ok1 || !ok2 || da == ds {
		t.Fatalf("observation a %d %v, summary a %d %v: want two documents", da, ok1, ds, ok2)
	}
	if r := x.ref(ds); r != (memory.EntityRef{Type: memory.TargetSummary, ID: "a"}) {
		t.Fatalf("ref of the summary: %+v", r)
	}
	if x.kindOf(ds) != memory.VectorSummary {
		t.Fatalf("kind of the summary: %q", x.kindOf(ds))
	}
	db, _ := x.docOf(memory.EntityRef{Type: memory.TargetObservation, ID: "b"})
	if n, ok := x.neighbour(db, -1); !ok || n != da {
		t.Fatalf("b's previous: %d %v; want a (%d)", n, ok, da)
	}
	put(obs("a", 0)) // replaced: a new document takes the slot
	na, _ := x.docOf(memory.EntityRef{Type: memory.TargetObservation, ID: "a"})
	if n, ok := x.neighbour(db, -1); na == da || !ok || n != na {
		t.Fatalf("after replacing a (%d → %d), b's previous is %d %v", da, na, n, ok)
	}
	put(memory.IndexRecord{Type: memory.TargetObservation, ID: "c", Gone: true})
	if _, ok := x.docOf(memory.EntityRef{Type: memory.TargetObservation, ID: "c"}); ok {
		t.Fatal("a forgotten record is still found")
	}
	if _, ok := x.neighbour(db, 1); ok {
		t.Fatal("a forgotten record is still a neighbour")
	}
	dt, _ := x.docOf(memory.EntityRef{Type: "", ID: "t"})
	if len(x.tags[dt]) != 1 || x.docs[dt].status == 0 {
		t.Fatalf("the thought's tags %v and status %d", x.tags[dt], x.docs[dt].status)
	}
	put(memory.IndexRecord{ID: "t", Gone: true})
	if len(x.tags) != 0 {
		t.Fatalf("tags of a gone record remain: %v", x.tags)
	}
	if x.Len() != 3 { // a, b and the summary
		t.Fatalf("Len %d; want 3", x.Len())
	}
}

// TestBatchedLoadMatchesOneByOne: records put in a batch (texts analysed
// in parallel) get the same documents, terms and scores as one by one.
func TestBatchedLoadMatchesOneByOne(t *testing.T) {
	words := []string{"deploy", "rollback", "cache", "token", "webhook", "retry", "Alice:", "why?", "budget"}
	var recs []memory.IndexRecord
	for i := range 300 {
		text := words[i%len(words)] + " " + words[(i*7)%len(words)] + " " + words[(i*3+1)%len(words)]
		recs = append(recs, memory.IndexRecord{Type: memory.TargetObservation, ID: fmt.Sprintf("o%03d", i), Content: text,
			CapsuleID: fmt.Sprintf("c%d", i/10), Position: i % 10})
	}
	recs = append(recs, memory.IndexRecord{Type: memory.TargetObservation, ID: "o005", Gone: true})
	one, batch := NewIndex(nil), NewIndex(nil)
	for _, r := range recs {
		one.putLocked(r)
	}
	one.flushLocked()
	batch.putAllLocked(recs)
	batch.flushLocked()
	if !slices.EqualFunc(one.docs, batch.docs, func(a, b docInfo) bool {
		return a.key == b.key && a.capsule == b.capsule && a.pos == b.pos && a.alive == b.alive && a.asks == b.asks
	}) {
		t.Fatal("documents differ between a batched load and one by one")
	}
	for _, q := range []string{"deploy cache", "alice", "why"} {
		a, b := make([]float32, one.lex.Cap()), make([]float32, batch.lex.Cap())
		one.lex.Scores(lexical.QueryTerms(q), nil, a, nil)
		batch.lex.Scores(lexical.QueryTerms(q), nil, b, nil)
		if !slices.Equal(a, b) {
			t.Fatalf("%q: scores differ between a batched load and one by one", q)
		}
	}
}
