package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/corpus"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// MemoryGen generates a seeded stream of agent memory of every record
// kind, session by session (sessions an hour long): the session's
// observations (the nine kinds, from internal/corpus), its closed capsule
// and summary, a pin on every second session (expiring after a week, but
// one in fifty), thoughts, and knowledge-graph entities with facts and
// edges (some reaching back to earlier sessions' entities). Every record
// counts towards the total, and the stream stops at exactly the total; a
// record only refers to records before it, so any prefix of the stream
// imports cleanly. The same seed and total give the same stream.
type MemoryGen struct {
	c     *corpus.Generator
	rng   *rand.Rand
	total int
	sent  int
	sess  int
	queue []memory.Record

	// entities are the ids and names of the latest entities, for edges.
	entities []entityRef
	// obsSample and ivSample keep records to ask questions about.
	obsSample []memory.Observation
	ivSample  []string
	counts    map[memory.Section]int
}

type entityRef struct{ id, name string }

// Per session: observations, then thoughts, entities, entity facts and
// edges (plus a capsule, a summary and every other session a pin).
const (
	genSessionLen = 60
	genThoughts   = 6
	genEntities   = 2
	genFacts      = 4
	genEdges      = 2
	genSampleKeep = 400
	// pinTTL is the life of a short-lived pin: a week, in milliseconds.
	pinTTL = 7 * 24 * 3600 * 1000
)

// NewMemoryGen returns a generator of total records for seed.
func NewMemoryGen(seed uint64, total int) *MemoryGen {
	c := corpus.New(seed)
	c.SessionLen = genSessionLen
	return &MemoryGen{c: c, rng: rand.New(rand.NewPCG(seed^0x5ca1e, seed)), total: total, counts: map[memory.Section]int{}}
}

// Done reports whether the whole stream has been returned.
func (g *MemoryGen) Done() bool { return g.sent >= g.total }

// Counts is how many records of each section were returned so far.
func (g *MemoryGen) Counts() map[memory.Section]int { return g.counts }

// Next returns the next up to n records as a dump (empty when done).
func (g *MemoryGen) Next(n int) memory.Dump {
	var d memory.Dump
	for k := 0; k < n && g.sent < g.total; k++ {
		if len(g.queue) == 0 {
			g.session()
		}
		r := g.queue[0]
		g.queue = g.queue[1:]
		g.sent++
		g.counts[r.Section()]++
		switch {
		case r.Observation != nil:
			d.Observations = append(d.Observations, *r.Observation)
		case r.Capsule != nil:
			d.Capsules = append(d.Capsules, *r.Capsule)
		case r.Summary != nil:
			d.Summaries = append(d.Summaries, *r.Summary)
		case r.Pin != nil:
			d.Pins = append(d.Pins, *r.Pin)
		case r.Thought != nil:
			d.Thoughts = append(d.Thoughts, *r.Thought)
		case r.KGEntity != nil:
			d.Entities = append(d.Entities, *r.KGEntity)
		case r.KGObservation != nil:
			d.KGObservations = append(d.KGObservations, *r.KGObservation)
		case r.KGEdge != nil:
			d.Edges = append(d.Edges, *r.KGEdge)
		}
	}
	return d
}

// keep decides whether to keep a record for questions: about
// genSampleKeep of each family over the whole stream.
func (g *MemoryGen) keep(share float64) bool {
	return g.rng.Float64() < genSampleKeep/(share*float64(g.total)+1)
}

// session queues the records of the next session.
func (g *MemoryGen) session() {
	s := g.sess
	g.sess++
	obs := g.c.Observations(genSessionLen)
	scope := obs[0].Scope
	for i := range obs {
		g.queue = append(g.queue, memory.Record{Observation: &obs[i]})
		if g.keep(0.78) {
			g.obsSample = append(g.obsSample, obs[i])
		}
	}
	first, last := obs[0].TS, obs[len(obs)-1].TS
	ids := make([]string, len(obs))
	for i, o := range obs {
		ids[i] = o.ID
	}
	capID := fmt.Sprintf("cap-%07d", s)
	closed := last
	intent := []string{"fix", "investigate", "implement", "refactor", "review"}[g.rng.IntN(5)] + " " + g.c.Words(3, 10)
	g.queue = append(g.queue, memory.Record{Capsule: &memory.Capsule{ID: capID, Type: memory.CapsuleTypeSession,
		Intent: intent, Status: memory.CapsuleClosed, OpenedAt: first, ClosedAt: &closed, Scope: scope, ObservationIDs: ids}})
	// The summary quotes words of a few of the session's observations.
	var quoted []string
	for range 3 {
		f := strings.Fields(obs[g.rng.IntN(len(obs))].Content)
		from := g.rng.IntN(len(f))
		quoted = append(quoted, strings.Join(f[from:min(len(f), from+8)], " "))
	}
	sumID := fmt.Sprintf("sum-%07d", s)
	g.queue = append(g.queue, memory.Record{Summary: &memory.Summary{ID: sumID, CapsuleID: capID,
		Content:    fmt.Sprintf("Session goal: %s. Found: %s. Then %s; finally %s. %s.", intent, quoted[0], quoted[1], quoted[2], g.c.Words(8, 30)),
		Confidence: 0.5 + 0.5*g.rng.Float64(), CreatedAt: last, EvidenceRefs: []string{ids[0], ids[len(ids)/2], ids[len(ids)-1]}, Scope: scope}})
	if s%2 == 0 {
		// Most pins are short-lived (a week); one in fifty stays.
		p := memory.Pin{ID: fmt.Sprintf("pin-%07d", s), TargetType: memory.TargetSummary, TargetID: sumID,
			Reason: "keep: " + g.c.Words(2, 8), CreatedAt: last, Scope: scope}
		if g.rng.IntN(50) != 0 {
			exp := last + pinTTL
			p.ExpiresAt = &exp
		}
		if s%4 == 0 {
			o := obs[g.rng.IntN(len(obs))]
			p.TargetType, p.TargetID, p.Scope = memory.TargetObservation, o.ID, o.Scope
		}
		g.queue = append(g.queue, memory.Record{Pin: &p})
	}
	origins := []memory.Origin{memory.OriginModel, memory.OriginModel, memory.OriginTool, memory.OriginHuman, memory.OriginLogged}
	leads := []string{"decided to", "noticed that", "concluded the", "suspect the", "remember that", "the user prefers"}
	for i := range genThoughts {
		t := memory.Thought{ID: fmt.Sprintf("th-%07d-%d", s, i), Origin: origins[g.rng.IntN(len(origins))],
			Content: fmt.Sprintf("%s %s because %s", leads[g.rng.IntN(len(leads))], g.c.Words(6, 24), g.c.Words(4, 16)),
			Tags:    []string{[]string{"decision", "bug", "preference", "todo", "insight"}[g.rng.IntN(5)]},
			Status:  memory.StatusActive, Significance: float64(g.rng.IntN(11)) / 10, IsPrivate: g.rng.IntN(10) == 0,
			CreatedAt: first + int64(i+1)*int64(last-first)/genThoughts, Scope: scope, SummaryOf: []string{}}
		g.queue = append(g.queue, memory.Record{Thought: &t})
		if g.keep(0.08) {
			g.ivSample = append(g.ivSample, t.Content)
		}
	}
	types := []string{"service", "library", "person", "module", "decision", "incident"}
	var fresh []entityRef
	for i := range genEntities {
		name := g.c.Ident()
		data, _ := json.Marshal(map[string]any{"path": g.c.Path(), "owner": fmt.Sprintf("team-%d", g.rng.IntN(12))})
		e := memory.KGEntity{ID: fmt.Sprintf("ent-%07d-%d", s, i), Name: name, Type: types[g.rng.IntN(len(types))],
			Data: memory.RawObject(data), CreatedAt: first, UpdatedAt: last, Scope: scope}
		g.queue = append(g.queue, memory.Record{KGEntity: &e})
		fresh = append(fresh, entityRef{e.ID, name})
	}
	for i := range genFacts {
		e := fresh[i%len(fresh)]
		content := fmt.Sprintf("%s %s", []string{"handles", "fails when", "was changed to", "depends on", "is slow because"}[g.rng.IntN(5)], g.c.Words(5, 20))
		g.queue = append(g.queue, memory.Record{KGObservation: &memory.KGObservation{ID: fmt.Sprintf("kgo-%07d-%d", s, i),
			EntityID: e.id, Content: content, CreatedAt: last}})
		if g.keep(0.05) {
			g.ivSample = append(g.ivSample, e.name+" "+content)
		}
	}
	relations := []string{"depends_on", "calls", "owns", "replaced", "caused", "works_on"}
	for i := range genEdges {
		src := fresh[i%len(fresh)]
		dst := fresh[(i+1)%len(fresh)]
		if len(g.entities) > 0 && i%2 == 1 {
			dst = g.entities[g.rng.IntN(len(g.entities))]
		}
		g.queue = append(g.queue, memory.Record{KGEdge: &memory.KGEdge{ID: fmt.Sprintf("edge-%07d-%d", s, i),
			Source: src.id, Target: dst.id, Relation: relations[g.rng.IntN(len(relations))], CreatedAt: last}})
	}
	g.entities = append(g.entities, fresh...)
	if len(g.entities) > 256 {
		g.entities = g.entities[len(g.entities)-256:]
	}
}

// Questions returns n tiered-retrieval questions about observations of the
// stream so far (natural language, scoped to the observation's repository,
// maxCandidates 10) and n inner_voice queries about its thoughts and
// entity facts.
func (g *MemoryGen) Questions(n int) ([]cairn.RetrieveRequest, []retrieve.InnerVoiceRequest) {
	ten := 10
	var rs []cairn.RetrieveRequest
	for i := 0; i < n && len(g.obsSample) > 0; i++ {
		q, scope := g.c.Question(g.obsSample[(i*7919)%len(g.obsSample)])
		rs = append(rs, cairn.RetrieveRequest{Query: q, ScopeIDs: scope, MaxCandidates: &ten})
	}
	var ivs []retrieve.InnerVoiceRequest
	leads := []string{"what do we know about", "why did we decide", "what happened with", "remind me about"}
	for i := 0; i < n && len(g.ivSample) > 0; i++ {
		words := rareWords(g.ivSample[(i*7919)%len(g.ivSample)], 3, g.rng)
		ivs = append(ivs, retrieve.InnerVoiceRequest{Query: leads[g.rng.IntN(len(leads))] + " " + strings.Join(words, " "), TopK: &ten})
	}
	return rs, ivs
}

// rareWords picks up to n of the longer words of text, in random order.
func rareWords(text string, n int, rng *rand.Rand) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }) {
		if len(w) > 5 {
			out = append(out, strings.ToLower(w))
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:min(n, len(out))]
}
