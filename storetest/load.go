package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// exportParts is a store's export cut into dumps of n records, in order.
func exportParts(t *testing.T, s memory.Store, n int) []memory.Dump {
	t.Helper()
	var parts []memory.Dump
	var cur memory.Dump
	if err := s.Export(ctx, func(r memory.Record) error {
		cur.Add(r)
		if cur.Len() == n {
			parts = append(parts, cur)
			cur = memory.Dump{}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if cur.Len() > 0 {
		parts = append(parts, cur)
	}
	return parts
}

// feed returns the parts one by one, then an empty dump.
func feed(parts []memory.Dump) func() (memory.Dump, error) {
	return func() (memory.Dump, error) {
		if len(parts) == 0 {
			return memory.Dump{}, nil
		}
		d := parts[0]
		parts = parts[1:]
		return d, nil
	}
}

// testLoadInParts moves a store's export to another in small parts
// (records naming records of earlier parts) and gets the same export back;
// a load that fails in its last part, or whose source fails, leaves the
// target empty.
func testLoadInParts(t *testing.T, from, to memory.Store) {
	loader, ok := to.(memory.Loader)
	if !ok {
		t.Fatalf("%T does not implement memory.Loader", to)
	}
	if err := from.Import(ctx, knowledgeDump(), nil); err != nil {
		t.Fatal(err)
	}
	first, _ := exportAll(t, from)
	empty := snapshot(t, to)

	broken := exportParts(t, from, 3)
	last := &broken[len(broken)-1]
	last.Edges = append(last.Edges, memory.KGEdge{ID: "g-bad", Source: "ghost", Target: "e1", Relation: "r", CreatedAt: 1})
	if err := loader.Load(ctx, feed(broken), nil, nil); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("loading a part with a dangling edge: %v; want not_found", err)
	}
	if snapshot(t, to) != empty {
		t.Fatal("a load that failed in its last part left records behind")
	}
	failing := errors.New("the source went away")
	parts := exportParts(t, from, 3)
	n := 0
	err := loader.Load(ctx, func() (memory.Dump, error) {
		if n++; n == 3 {
			return memory.Dump{}, failing
		}
		return feed(parts[n-1:])()
	}, nil, nil)
	if !errors.Is(err, failing) && memory.CodeOf(err) == "" {
		t.Fatalf("a load whose source failed: %v", err)
	}
	if snapshot(t, to) != empty {
		t.Fatal("a load whose source failed left records behind")
	}

	// A check that fails after the last part, inside the transaction,
	// having seen every record and filled vectors: nothing stays, vectors
	// included.
	space := memory.Space{Provider: "hash", Model: "load", Dim: 2}
	vectors := func(l memory.Loaded) error {
		var es []memory.Embedding
		if err := l.Export(ctx, func(r memory.Record) error {
			if r.Thought != nil {
				es = append(es, memory.Embedding{Kind: memory.VectorThought, ID: r.Thought.ID, Space: space, Vector: []float32{1, 0}})
			}
			return nil
		}); err != nil {
			return err
		}
		n, err := l.FillEmbeddings(ctx, es)
		if err == nil && (n != len(es) || n == 0) {
			err = fmt.Errorf("filled %d of %d vectors", n, len(es))
		}
		return err
	}
	refused := memory.Errorf(memory.CodeDBError, "the check refused it")
	var seen memory.Stats
	err = loader.Load(ctx, feed(exportParts(t, from, 3)), nil, func(l memory.Loaded) error {
		var err error
		if seen, err = l.Stats(ctx); err != nil {
			return err
		}
		if err := vectors(l); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("a load whose check failed: %v; want the check's error", err)
	}
	if want, _ := from.Stats(ctx); seen.Thoughts != want.Thoughts || seen.Edges != want.Edges || seen.Observations != want.Observations {
		t.Fatalf("the check saw %+v; want the loaded records' counts %+v", seen, want)
	}
	if snapshot(t, to) != empty {
		t.Fatal("a load whose check failed left records behind")
	}
	if vs, err := to.VectorStats(ctx, space); err != nil || vs.InSpace != 0 {
		t.Fatalf("a load whose check failed left vectors behind: %+v %v", vs, err)
	}

	var calls []int
	if err := loader.Load(ctx, feed(exportParts(t, from, 3)), func(done int) { calls = append(calls, done) }, vectors); err != nil {
		t.Fatal(err)
	}
	if vs, err := to.VectorStats(ctx, space); err != nil || vs.InSpace != len(knowledgeDump().Thoughts) {
		t.Fatalf("vectors filled by the check: %+v %v; want %d", vs, err, len(knowledgeDump().Thoughts))
	}
	if second, _ := exportAll(t, to); second != first {
		t.Fatalf("export → load in parts → export differs:\n%s\n%s", first, second)
	}
	if len(calls) == 0 || calls[len(calls)-1] != knowledgeDump().Len() {
		t.Fatalf("progress calls %v; want the last to be %d", calls, knowledgeDump().Len())
	}
}
