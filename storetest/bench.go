package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// BenchOpener opens a fresh, empty store for a benchmark; the benchmark
// closes it.
type BenchOpener func(b *testing.B) memory.Store

// Bench runs the benchmarks every store shares, on the paths that carry
// the load: batched ingest (AppendObservations, 1,000 observations a
// transaction, joining their sessions' open capsules), a bulk Import, and
// the reads of a retrieval (one snapshot: active pins, the current
// summary, a full-text search, records by id) and of an index load.
// Records are generated from a fixed seed, so runs compare.
func Bench(b *testing.B, open BenchOpener) {
	b.Run("append/batch=1000", func(b *testing.B) { benchAppend(b, open(b)) })
	b.Run("import/n=2000", func(b *testing.B) { benchImport(b, open(b)) })
	b.Run("snapshot-reads/n=5000", func(b *testing.B) { benchSnapshot(b, open(b)) })
	b.Run("load-index/n=5000", func(b *testing.B) { benchLoadIndex(b, open(b)) })
}

// benchSessions is how many sessions (each with an open capsule) the
// generated observations spread over.
const benchSessions = 20

// benchText generates record texts from a fixed vocabulary with a
// linear congruential generator: deterministic, and varied enough for
// full-text statistics to mean something.
type benchText struct{ state uint64 }

var benchWords = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike
	november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu build test deploy
	error warning retry timeout cache index query schema migration vector embedding capsule summary thought
	session repository agent user commit branch merge review config server client request response handler`)

func (g *benchText) next() uint64 {
	g.state = g.state*6364136223846793005 + 1442695040888963407
	return g.state >> 33
}

// words returns n words, the common ones more often.
func (g *benchText) words(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		r := g.next() % uint64(len(benchWords))
		sb.WriteString(benchWords[(r*r)/uint64(len(benchWords))])
	}
	return sb.String()
}

func benchScope(i int) memory.Scope {
	return memory.Scope{SessionID: fmt.Sprintf("s%02d", i%benchSessions), RepoID: fmt.Sprintf("r%d", i%5), AgentID: "agent"}
}

func benchObservations(g *benchText, prefix string, n int) []memory.NewObservation {
	out := make([]memory.NewObservation, n)
	for i := range out {
		out[i] = memory.NewObservation{Observation: memory.Observation{
			ID: fmt.Sprintf("%s-%06d", prefix, i), Kind: "tool_call", Content: g.words(12 + i%20),
			Provenance: []byte(`{"tool":"bench"}`), TS: int64(1_700_000_000_000 + i), Scope: benchScope(i),
		}}
	}
	return out
}

// openSessions opens a capsule for every session, with a summary.
func openSessions(b *testing.B, s memory.Store) {
	ctx := context.Background()
	for i := range benchSessions {
		sc := benchScope(i)
		c, err := s.OpenCapsule(ctx, memory.Capsule{ID: "cap-" + sc.SessionID, Type: "session", OpenedAt: 1, Scope: sc})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.PutSummary(ctx, memory.Summary{ID: "sum-" + sc.SessionID, CapsuleID: c.ID, Content: "summary of " + sc.SessionID,
			Confidence: 0.5, CreatedAt: 2}); err != nil {
			b.Fatal(err)
		}
	}
}

// fill appends n observations and n/10 thoughts, and pins some
// observations.
func fill(b *testing.B, s memory.Store, n int) {
	ctx := context.Background()
	openSessions(b, s)
	g := &benchText{state: 7}
	obs := benchObservations(g, "o", n)
	for i := 0; i < n; i += 1000 {
		if _, err := s.AppendObservations(ctx, obs[i:min(n, i+1000)]); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n / 10 {
		if _, err := s.AddThought(ctx, memory.Thought{ID: fmt.Sprintf("t-%05d", i), Content: g.words(15), Origin: memory.OriginModel,
			Status: "active", Significance: 0.5, CreatedAt: int64(i), Scope: benchScope(i)}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range benchSessions {
		if _, err := s.AddPin(ctx, memory.Pin{ID: fmt.Sprintf("p-%02d", i), TargetType: memory.TargetObservation, TargetID: obs[i].ID,
			CreatedAt: 3, Scope: benchScope(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchAppend(b *testing.B, s memory.Store) {
	defer s.Close()
	ctx := context.Background()
	openSessions(b, s)
	g := &benchText{state: 1}
	round := 0
	for b.Loop() {
		batch := benchObservations(g, fmt.Sprintf("a%04d", round), 1000)
		if _, err := s.AppendObservations(ctx, batch); err != nil {
			b.Fatal(err)
		}
		round++
	}
	b.ReportMetric(float64(round*1000)/b.Elapsed().Seconds(), "obs/s")
}

func benchImport(b *testing.B, s memory.Store) {
	defer s.Close()
	ctx := context.Background()
	g := &benchText{state: 3}
	round := 0
	for b.Loop() {
		p := fmt.Sprintf("i%04d", round)
		var d memory.Dump
		for _, n := range benchObservations(g, p, 1600) {
			d.Observations = append(d.Observations, n.Observation)
		}
		for i := range 300 {
			d.Thoughts = append(d.Thoughts, memory.Thought{ID: fmt.Sprintf("%s-t%03d", p, i), Content: g.words(15),
				Origin: memory.OriginModel, Status: "active", Significance: 0.5, CreatedAt: int64(i), Scope: benchScope(i)})
		}
		for i := range 50 {
			e := memory.KGEntity{ID: fmt.Sprintf("%s-e%02d", p, i), Name: g.words(2), Type: "concept", CreatedAt: 1, UpdatedAt: 1}
			d.Entities = append(d.Entities, e)
			d.KGObservations = append(d.KGObservations, memory.KGObservation{ID: e.ID + "-o", EntityID: e.ID, Content: g.words(10), CreatedAt: 1})
		}
		if err := s.Import(ctx, d, nil); err != nil {
			b.Fatal(err)
		}
		round++
	}
	b.ReportMetric(float64(round*2000)/b.Elapsed().Seconds(), "records/s")
}

func benchSnapshot(b *testing.B, s memory.Store) {
	defer s.Close()
	ctx := context.Background()
	const n = 5000
	fill(b, s, n)
	g := &benchText{state: 11}
	i := 0
	for b.Loop() {
		scope := benchScope(i)
		err := s.Snapshot(ctx, func(r memory.Reader) error {
			if _, err := r.ActivePins(ctx, memory.PinQuery{Scope: scope, Now: 10}); err != nil {
				return err
			}
			if _, err := r.CurrentSummary(ctx, scope); err != nil {
				return err
			}
			res, err := r.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Syntax: memory.SyntaxText, Terms: strings.Fields(g.words(4))},
				Scope: memory.Scope{RepoID: scope.RepoID}, Limit: 10})
			if err != nil {
				return err
			}
			refs := make([]memory.EntityRef, 0, len(res.Observations))
			for _, h := range res.Observations {
				refs = append(refs, memory.EntityRef{Type: memory.TargetObservation, ID: h.Entity.ID()})
			}
			if _, err := r.Entities(ctx, refs); err != nil {
				return err
			}
			ids := make([]string, 20)
			for k := range ids {
				ids[k] = fmt.Sprintf("t-%05d", (i*37+k*13)%(n/10))
			}
			_, err = r.Records(ctx, memory.VectorThought, ids)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func benchLoadIndex(b *testing.B, s memory.Store) {
	defer s.Close()
	ctx := context.Background()
	fill(b, s, 5000)
	space := memory.Space{Provider: "bench", Model: "none", Dim: 4}
	for b.Loop() {
		records := 0
		err := s.Snapshot(ctx, func(r memory.Reader) error {
			_, err := r.LoadIndex(ctx, space, func(memory.IndexRecord) error { records++; return nil })
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if records < 5000 {
			b.Fatalf("the index load read %d records, want at least 5000", records)
		}
	}
}
