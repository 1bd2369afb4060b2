package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
)

var testEmbedder = func() embed.Embedder {
	g, err := embed.NewGloVe()
	if err != nil {
		panic(err)
	}
	return g
}()

// probe is one search the equivalence tests run on two indexes.
type probe struct {
	words []string
	scope memory.Scope
	q     []float32
}

func probes(seed uint64, n int) []probe {
	rng := rand.New(rand.NewPCG(seed, 99))
	var out []probe
	for range n {
		var ws []string
		for range 1 + rng.IntN(4) {
			ws = append(ws, vocabulary[rng.IntN(len(vocabulary))])
		}
		var s memory.Scope
		switch rng.IntN(5) {
		case 1:
			s.RepoID = repos[1+rng.IntN(len(repos)-1)]
		case 2:
			s.SessionID = fmt.Sprintf("s%d", rng.IntN(8))
		case 3:
			s.RepoID, s.SessionID = repos[1+rng.IntN(len(repos)-1)], fmt.Sprintf("s%d", rng.IntN(8))
		case 4:
			s.AgentID = "agent-1"
		}
		vs, _ := testEmbedder.Embed(context.Background(), []string{strings.Join(ws, " ")})
		out = append(out, probe{words: ws, scope: s, q: vs[0]})
	}
	return out
}

func f32(x float32) string { return fmt.Sprintf("%08x", math.Float32bits(x)) }

// describe renders what an index answers, in record ids (document
// numbers differ between layouts): every live record with its attributes,
// the counts per kind, and per probe the context scores, the nearest
// records of both groups, the similarities and idfs. Two indexes of the
// same records must describe alike, byte for byte.
func describe(t *testing.T, x *Index, ps []probe) string {
	t.Helper()
	var b strings.Builder
	err := x.Read(func(v *View) error {
		kinds := []memory.VectorKind{memory.VectorObservation, memory.VectorSummary, memory.VectorThought, memory.VectorKGEntity, memory.VectorKGObservation}
		var lines []string
		for _, k := range kinds {
			a, p, vec, pv := v.Counts(k)
			fmt.Fprintf(&b, "count %s %d %d %d %d\n", k, a, p, vec, pv)
			v.Each(k, func(doc uint32) {
				d := v.Doc(doc)
				ref := v.Ref(doc)
				back, ok := v.DocOf(ref)
				if !ok || back != doc {
					t.Errorf("DocOf(%v) = %d %v, want %d", ref, back, ok, doc)
				}
				lines = append(lines, fmt.Sprintf("doc %s %s %s %v %v %d asks=%v words=%v tags=%v", ref.Type, ref.ID, d.Status, d.Private, d.Vector, d.TS,
					v.Asks(doc), v.Words(doc), v.Tags(doc)))
			})
		}
		sort.Strings(lines)
		b.WriteString(strings.Join(lines, "\n"))
		fmt.Fprintf(&b, "\nlive %d\n", v.Live())
		n := v.Docs()
		own, ctx, tf := make([]float32, n), make([]float32, n), make([]float64, n)
		for _, p := range ps {
			terms := lexical.Analyze(p.words)
			f := v.Filter(p.scope)
			fmt.Fprintf(&b, "probe %v %+v empty=%v\n", p.words, p.scope, f.Empty)
			for _, term := range terms {
				fmt.Fprintf(&b, " idf %s %v\n", term, v.IDF(term))
			}
			ownDocs, ctxDocs := v.ContextScores(terms, f, Shares{Before: 0.5, BeforeOther: 0.1, After: 0.5, Far: 0.2}, own, ctx, tf, nil, nil)
			var sc []string
			for _, d := range ctxDocs {
				sc = append(sc, fmt.Sprintf(" ctx %s %s %s sim=%s capsuled=%v", v.ID(d), f32(own[d]), f32(ctx[d]), simOf(v, p.q, d), v.Capsule(d) != 0))
			}
			for _, d := range ownDocs {
				own[d] = 0
			}
			for _, d := range ctxDocs {
				ctx[d] = 0
				own[d] = 0
			}
			sort.Strings(sc)
			b.WriteString(strings.Join(sc, "\n"))
			b.WriteByte('\n')
			for _, h := range v.Nearest(GroupSearchable, p.q, 12, f, nil) {
				fmt.Fprintf(&b, " near %s %s\n", v.ID(h.ID), f32(h.Score))
			}
			thoughts := func(doc uint32) bool { d := v.Doc(doc); return d.Kind == memory.VectorThought && !d.Private }
			for _, h := range v.Nearest(GroupInner, p.q, 8, nil, thoughts) {
				fmt.Fprintf(&b, " inner %s %s\n", v.ID(h.ID), f32(h.Score))
			}
			scores := make([]float32, n)
			touched := v.Scores(terms, f, func(doc uint32) bool { return f.Allow(doc) }, scores, nil)
			var ss []string
			for _, d := range touched {
				ss = append(ss, fmt.Sprintf(" bm25 %s %s", v.ID(d), f32(scores[d])))
			}
			sort.Strings(ss)
			b.WriteString(strings.Join(ss, "\n"))
			b.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func simOf(v *View, q []float32, d uint32) string {
	s, ok := v.Similarity(q, d)
	if !ok {
		return "none"
	}
	return fmt.Sprintf("%.7f", s)
}

// same fails the test where a and b differ, showing the first lines that
// do.
func same(t *testing.T, what, a, b string) {
	t.Helper()
	if a == b {
		return
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			t.Fatalf("%s: line %d differs:\n  want %s\n  got  %s", what, i+1, al[i], bl[i])
		}
	}
	t.Fatalf("%s: %d lines, want %d", what, len(bl), len(al))
}

func openDir(t *testing.T, dir string, flushDocs int) *Index {
	t.Helper()
	x, err := Open(Options{Dir: dir, Embedder: testEmbedder, FlushDocs: flushDocs, ShortMergeDocs: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func openMem(t *testing.T) *Index {
	t.Helper()
	x, err := Open(Options{Embedder: testEmbedder, FlushDocs: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func syncX(t *testing.T, x *Index, r memory.Reader) {
	t.Helper()
	if err := x.Sync(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// TestSegmentsAnswerAsOneIndex writes a random history and, at random
// points, flushes and merges one index into segments of every size while
// another keeps every record in its delta: both must answer every probe
// alike, byte for byte. A third index, opened afresh from the files at
// each check, must too.
func TestSegmentsAnswerAsOneIndex(t *testing.T) {
	ctx := context.Background()
	store := newFakeStore()
	h := newHistory(1, store, testEmbedder)
	dir := t.TempDir()
	ref := openMem(t)
	seg := openDir(t, dir, 7)
	ps := probes(2, 25)
	rng := rand.New(rand.NewPCG(3, 4))
	checks := 0
	for i := range 1500 {
		h.step()
		if rng.IntN(9) == 0 {
			syncX(t, seg, store)
			switch rng.IntN(3) {
			case 0:
				seg.maintain(ctx, 0)
			case 1:
				if err := seg.flush(ctx, seg.store(), true); err != nil {
					t.Fatal(err)
				}
			}
		}
		if i%300 == 299 {
			syncX(t, ref, store)
			syncX(t, seg, store)
			want := describe(t, ref, ps)
			same(t, fmt.Sprintf("step %d, segments", i), want, describe(t, seg, ps))
			fresh := openDir(t, dir, 7)
			syncX(t, fresh, store)
			same(t, fmt.Sprintf("step %d, a fresh process", i), want, describe(t, fresh, ps))
			checks++
		}
	}
	st := seg.Status()
	t.Logf("%d checks; the files: %d segments, %d documents, %d deleted, generation %d", checks, st.Segments, st.Docs, st.Deleted, st.Generation)
	if st.Generation < 10 || st.Segments < 2 {
		t.Fatalf("the history made %d commits and %d segments: too few to test merges", st.Generation, st.Segments)
	}
}

// TestApproximateSearchProbingEveryListIsExact: above the threshold a
// group's vectors are filed under centroids; searching every list must
// give the exact answer, and the default probes a recall close to it.
func TestApproximateSearchProbingEveryListIsExact(t *testing.T) {
	store := newFakeStore()
	h := newHistory(5, store, testEmbedder)
	for range 2500 {
		h.step()
	}
	ref := openMem(t)
	syncX(t, ref, store)
	x, err := Open(Options{Dir: t.TempDir(), Embedder: testEmbedder, FlushDocs: 50, IVFThreshold: 400, ShortMergeDocs: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	syncX(t, x, store)
	x.maintain(context.Background(), 0)
	syncX(t, x, store)
	if st := x.Status(); len(st.Approximate) == 0 {
		t.Fatalf("no group is searched approximately: %+v", st)
	}
	ps := probes(6, 30)
	all := probeCount
	probeCount = func(lists int) int { return lists }
	defer func() { probeCount = all }()
	same(t, "probing every list", describe(t, ref, ps), describe(t, x, ps))

	probeCount = all
	var found, total int
	x.Read(func(v *View) error {
		return ref.Read(func(rv *View) error {
			for _, p := range ps {
				exact := rv.Nearest(GroupSearchable, p.q, 10, rv.Filter(p.scope), nil)
				approx := v.Nearest(GroupSearchable, p.q, 10, v.Filter(p.scope), nil)
				ids := map[string]bool{}
				for _, h := range approx {
					ids[v.ID(h.ID)] = true
				}
				for _, h := range exact {
					total++
					if ids[rv.ID(h.ID)] {
						found++
					}
				}
			}
			return nil
		})
	})
	if recall := float64(found) / float64(total); recall < 0.85 {
		t.Fatalf("recall@10 with the default probes %.3f", recall)
	} else {
		t.Logf("recall@10 with the default probes: %.3f", recall)
	}
}

// TestApproximateAnswersDoNotDependOnLayout: under one centroid set, an
// approximate search answers alike whether the newest records are still
// in a process's delta, flushed into segments, or merged — in this
// process and in a fresh one — and a group that falls below the
// threshold is searched exactly again.
func TestApproximateAnswersDoNotDependOnLayout(t *testing.T) {
	ctx := context.Background()
	store := newFakeStore()
	h := newHistory(11, store, testEmbedder)
	for range 5000 {
		h.step()
	}
	dir := t.TempDir()
	open := func(flushDocs int) *Index {
		x, err := Open(Options{Dir: dir, Embedder: testEmbedder, FlushDocs: flushDocs, IVFThreshold: 400, ShortMergeDocs: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		return x
	}
	writer := open(50)
	syncX(t, writer, store)
	writer.maintain(ctx, 0)
	st := writer.Status()
	if len(st.Approximate) != 2 {
		t.Fatalf("both groups must be searched approximately: %+v", st)
	}
	cents := writer.st.man.Centroids
	for range 400 {
		h.step()
	}
	// A process that keeps the new records in its delta...
	held := open(1 << 30)
	syncX(t, held, store)
	if held.Status().Delta < 300 {
		t.Fatalf("the delta holds %d documents; the test needs the new records there", held.Status().Delta)
	}
	ps := probes(12, 40)
	want := describe(t, held, ps)
	// ... answers as one that wrote them into segments and merged them.
	syncX(t, writer, store)
	if err := writer.flush(ctx, writer.store(), true); err != nil {
		t.Fatal(err)
	}
	writer.maintain(ctx, 0)
	syncX(t, writer, store)
	if got := writer.st.man.Centroids; !slices.Equal(got, cents) {
		t.Fatalf("the centroids were trained again (%v, then %v): the test needs one set", cents, got)
	}
	if d := writer.Status().Delta; d != 0 {
		t.Fatalf("the writer still holds %d documents in its delta", d)
	}
	same(t, "the records flushed and merged", want, describe(t, writer, ps))
	fresh := open(1 << 30)
	syncX(t, fresh, store)
	same(t, "a fresh process", want, describe(t, fresh, ps))

	// The answers are approximate: some differ from the exact ones.
	ref := openMem(t)
	syncX(t, ref, store)
	if describe(t, ref, ps) == want {
		t.Fatal("the approximate answers equal the exact ones on every probe: the test checks nothing")
	}
	// An index that does not approximate (the default) answers exactly on
	// the same files.
	exact, err := Open(Options{Dir: dir, Embedder: testEmbedder, FlushDocs: 1 << 30, ShortMergeDocs: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer exact.Close()
	syncX(t, exact, store)
	if st := exact.Status(); len(st.Approximate) != 0 {
		t.Fatalf("status says approximate below the threshold: %+v", st)
	}
	same(t, "below the threshold", describe(t, ref, ps), describe(t, exact, ps))
}

// grepDir reports the files under dir that hold needle.
func grepDir(t *testing.T, dir, needle string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), needle) {
			out = append(out, filepath.Base(p))
		}
		return nil
	})
	return out
}

// TestForgetLeavesNoText: a forgotten record's words leave the files.
func TestForgetLeavesNoText(t *testing.T) {
	ctx := context.Background()
	store := newFakeStore()
	h := newHistory(7, store, testEmbedder)
	for range 300 {
		h.step()
	}
	const secret = "zq7secretword81"
	store.put(memory.IndexRecord{Type: memory.TargetObservation, ID: "obs_secret", Content: "the token is " + secret, TS: 1,
		Scope: memory.Scope{RepoID: "/src/shop"}, Position: -1})
	for range 300 {
		h.step()
	}
	dir := t.TempDir()
	x := openDir(t, dir, 50)
	syncX(t, x, store)
	x.maintain(ctx, 0)
	if got := grepDir(t, dir, secret); len(got) == 0 {
		t.Fatal("the word is in no file before it is forgotten: the test would prove nothing")
	}
	store.put(memory.IndexRecord{Type: memory.TargetObservation, ID: "obs_secret", Position: -1, Gone: true})
	if err := x.Forget(ctx, store); err != nil {
		t.Fatal(err)
	}
	if got := grepDir(t, dir, secret); len(got) > 0 {
		t.Fatalf("the forgotten word is still in %v", got)
	}
	x.Read(func(v *View) error {
		if _, ok := v.DocOf(memory.EntityRef{Type: memory.TargetObservation, ID: "obs_secret"}); ok {
			t.Fatal("the forgotten record is still searchable")
		}
		return nil
	})
	// A process that replays the forgetting finds it too.
	y := openDir(t, dir, 50)
	syncX(t, y, store)
	same(t, "after forgetting", describe(t, x, probes(8, 5)), describe(t, y, probes(8, 5)))
}

// TestForgetLeavesNoEarlierVersion: forgetting a record erases the words
// of its earlier versions too, which an edit left behind in an older
// segment (deleted there, but still in the file until a merge).
func TestForgetLeavesNoEarlierVersion(t *testing.T) {
	ctx := context.Background()
	store := newFakeStore()
	h := newHistory(11, store, testEmbedder)
	for range 200 {
		h.step()
	}
	const first, second = "zq7firstdraft42", "zq7seconddraft43"
	sum := func(text string) memory.IndexRecord {
		return memory.IndexRecord{Type: memory.TargetSummary, ID: "sum_edited", Content: text, TS: 1,
			Scope: memory.Scope{RepoID: "/src/shop"}, Position: -1}
	}
	dir := t.TempDir()
	x := openDir(t, dir, 50)
	store.put(sum("the running summary names " + first))
	if err := x.Flush(ctx, store, 0, true); err != nil {
		t.Fatal(err)
	}
	// New records only (the history also forgets, which would rewrite
	// the first segment).
	for i := range 100 {
		store.put(memory.IndexRecord{Type: memory.TargetObservation, ID: fmt.Sprintf("obs_filler%03d", i), Content: h.text(), TS: int64(i),
			Scope: memory.Scope{RepoID: "/src/shop"}, Position: -1})
	}
	store.put(sum("the running summary now names " + second))
	if err := x.Flush(ctx, store, 0, true); err != nil {
		t.Fatal(err)
	}
	if len(grepDir(t, dir, first)) == 0 || len(grepDir(t, dir, second)) == 0 {
		t.Fatal("both versions should be in the files before the record is forgotten: the test would prove nothing")
	}
	store.put(memory.IndexRecord{Type: memory.TargetSummary, ID: "sum_edited", Position: -1, Gone: true})
	if err := x.Forget(ctx, store); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{first, second} {
		if got := grepDir(t, dir, w); len(got) > 0 {
			t.Errorf("%q is still in %v after the record was forgotten", w, got)
		}
	}
	// A process that replays the forgetting from older files erases
	// both versions as well.
	y := openDir(t, dir, 50)
	syncX(t, y, store)
	same(t, "after forgetting", describe(t, x, probes(8, 5)), describe(t, y, probes(8, 5)))
}

func TestLevels(t *testing.T) {
	for _, c := range []struct{ docs, want int }{{1, 0}, {2000, 0}, {19_999, 0}, {20_000, 1}, {199_999, 1}, {200_000, 2}, {2_000_000, 3}} {
		if got := levelOf(c.docs, 2000); got != c.want {
			t.Errorf("levelOf(%d) = %d, want %d", c.docs, got, c.want)
		}
	}
	_ = slices.Max([]int{1})
}

// TestCatchUpReadsAPageAtATime: an index far behind the store (a large
// import committed since its last sync) replays the changes a page at a
// time, holding at most catchUpPage records read from the store at once,
// and ends as an index that followed every change as it came.
func TestCatchUpReadsAPageAtATime(t *testing.T) {
	store := newFakeStore()
	h := newHistory(21, store, testEmbedder)
	ref := openMem(t)
	behind := openMem(t)
	h.step()
	syncX(t, behind, store) // then it falls behind
	for i := range 4000 {
		h.step()
		if i%40 == 39 {
			syncX(t, ref, store)
		}
	}
	syncX(t, ref, store)
	store.mu.Lock()
	changes := len(store.changes)
	store.largestRead = 0
	store.mu.Unlock()
	if changes < 3*catchUpPage {
		t.Fatalf("the history made %d changes: too few to need several pages of %d", changes, catchUpPage)
	}
	syncX(t, behind, store)
	if store.largestRead > catchUpPage {
		t.Fatalf("catching up on %d changes read %d records at once; want at most %d", changes, store.largestRead, catchUpPage)
	}
	ps := probes(22, 20)
	same(t, "caught up a page at a time", describe(t, ref, ps), describe(t, behind, ps))
}

// TestCatchUpWritesOutAsItGoes: a long replay writes the delta out
// whenever it holds catchUpFlushes flushes' worth of documents, so it
// never holds many more, and the files it leaves answer as an index that
// followed every change.
func TestCatchUpWritesOutAsItGoes(t *testing.T) {
	store := newFakeStore()
	h := newHistory(23, store, testEmbedder)
	ref := openMem(t)
	const flushDocs = 20
	dir := t.TempDir()
	behind := openDir(t, dir, flushDocs)
	h.step()
	syncX(t, behind, store)
	for range 6000 {
		h.step()
	}
	most := 0
	store.onRead = func() { most = max(most, behind.st.memDocs()) } // Sync holds mu
	syncX(t, behind, store)
	store.onRead = nil
	if limit := catchUpFlushes*flushDocs + catchUpPage; most > limit {
		t.Fatalf("the delta held %d documents during the replay; want at most %d", most, limit)
	}
	if st := behind.Status(); st.Segments < 2 {
		t.Fatalf("the replay left %d segments; want it to have written out several", st.Segments)
	}
	syncX(t, ref, store)
	ps := probes(24, 20)
	same(t, "written out while catching up", describe(t, ref, ps), describe(t, behind, ps))
	fresh := openDir(t, dir, flushDocs)
	syncX(t, fresh, store)
	same(t, "a fresh process on those files", describe(t, ref, ps), describe(t, fresh, ps))
}

// TestIndexKeepsNoRecordText: the delta's dictionary keeps each term,
// never the text it came from. Records whose one rare word is kept as it
// is (a number, an id) are synced and dropped from the store; once they
// are, the index holds a small part of their text's size.
func TestIndexKeepsNoRecordText(t *testing.T) {
	store := newFakeStore()
	x := openMem(t)
	syncX(t, x, store)
	const n, size = 256, 64 << 10
	pad := strings.Repeat("deploy staging checkout ", size/24)
	base := heapLive()
	for i := range n {
		// A fresh string per record, as a store's row gives.
		text := fmt.Sprintf("build 4%07d %s", i, pad)
		store.put(memory.IndexRecord{Type: memory.TargetObservation, ID: fmt.Sprintf("obs_%d", i), Content: text, TS: int64(i), Position: -1})
	}
	syncX(t, x, store)
	store.mu.Lock()
	clear(store.recs)
	store.mu.Unlock()
	grown := int64(heapLive()) - int64(base)
	if limit := int64(n * size / 8); grown > limit {
		t.Fatalf("after syncing %d records of %d KiB and dropping them, the index holds %d KiB; want at most %d KiB", n, size>>10, grown>>10, limit>>10)
	}
	t.Logf("the index holds %d KiB of the records' %d KiB", grown>>10, n*size>>10)
	var hits []string
	err := x.Read(func(v *View) error {
		f := v.Filter(memory.Scope{})
		for _, d := range v.Scores(lexical.Analyze([]string{"40000007"}), f, f.Allow, make([]float32, v.Docs()), nil) {
			hits = append(hits, v.ID(d))
		}
		return nil
	})
	if err != nil || !slices.Equal(hits, []string{"obs_7"}) {
		t.Fatalf("the rare word finds %v (%v); want obs_7", hits, err)
	}
}

// heapLive is the live heap after a collection.
func heapLive() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
