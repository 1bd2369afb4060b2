package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// fakeStore is a store's change log and records as the index reads them:
// enough of memory.Reader for Sync (the rest panics if called).
type fakeStore struct {
	memory.Reader
	mu      sync.Mutex
	recs    map[string]memory.IndexRecord // by kind/id
	order   []string                      // keys in the order first written
	changes []string                      // keys, change seq = index + 1
	// largestRead is the most records one ChangesSince returned; onRead,
	// when set, is called at each ChangesSince.
	largestRead int
	onRead      func()
}

func newFakeStore() *fakeStore { return &fakeStore{recs: map[string]memory.IndexRecord{}} }

func recKey(kind memory.VectorKind, id string) string { return string(kind) + "/" + id }

// put writes rec (a new record or a new state of one).
func (f *fakeStore) put(rec memory.IndexRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := recKey(recordKind(&rec), rec.ID)
	if _, ok := f.recs[k]; !ok {
		f.order = append(f.order, k)
	}
	f.recs[k] = rec
	f.changes = append(f.changes, k)
}

func (f *fakeStore) LoadIndex(ctx context.Context, space memory.Space, fn func(memory.IndexRecord) error) (int64, error) {
	f.mu.Lock()
	order, recs, last := slices.Clone(f.order), f.recs, int64(len(f.changes))
	f.mu.Unlock()
	for _, k := range order {
		if r := recs[k]; !r.Gone {
			if err := fn(r); err != nil {
				return 0, err
			}
		}
	}
	return last, nil
}

func (f *fakeStore) ChangesSince(ctx context.Context, space memory.Space, seq int64, limit int) ([]memory.IndexRecord, int64, error) {
	if f.onRead != nil {
		f.onRead()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	last := int64(len(f.changes))
	if seq >= last {
		return nil, seq, nil
	}
	if limit > 0 {
		last = min(last, seq+int64(limit))
	}
	seen := map[string]bool{}
	var out []memory.IndexRecord
	for _, k := range f.changes[seq:last] {
		if !seen[k] {
			seen[k] = true
			out = append(out, f.recs[k])
		}
	}
	f.largestRead = max(f.largestRead, len(out))
	return out, last, nil
}

func (f *fakeStore) LastChange(ctx context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int64(len(f.changes)), nil
}

func (f *fakeStore) ChangeRef(ctx context.Context, seq int64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq <= 0 || seq > int64(len(f.changes)) {
		return "", nil
	}
	return fmt.Sprintf("%d:%s", seq, f.changes[seq-1]), nil
}

// history writes random records into a fakeStore: observations in
// capsules over repositories and sessions (some asking, some labelled),
// summaries that are replaced, thoughts with tags, privacy and statuses,
// knowledge-graph records, forgotten and deleted records, records whose
// vector comes later.
type history struct {
	rng   *rand.Rand
	store *fakeStore
	e     embed.Embedder
	ts    int64
	n     int
	pos   map[string]int
	obs   []string
	thts  []string
	sums  map[string]string // capsule → summary id
}

var vocabulary = strings.Fields(`deploy staging checkout payment token session expired retry cache
invoice customer refund webhook queue worker timeout latency database index migration schema
rollback release branch merge review test flaky build compile lint format docker image registry
secret rotate key certificate tls proxy gateway route handler request response header cookie
login password reset email notify alert page incident outage postmortem metric dashboard trace
span log error panic crash memory leak goroutine thread lock deadlock race mutex channel buffer
file disk volume backup restore snapshot replica primary failover cluster node pod service
yesterday tomorrow monday friday january july week month year morning evening alice bob carol`)

var repos = []string{"", "/src/shop", "/src/api", "/src/web", "github.com/acme/tools"}

func newHistory(seed uint64, store *fakeStore, e embed.Embedder) *history {
	return &history{rng: rand.New(rand.NewPCG(seed, seed+1)), store: store, e: e, ts: 1_700_000_000_000,
		pos: map[string]int{}, sums: map[string]string{}}
}

func (h *history) text() string {
	var b strings.Builder
	if h.rng.IntN(5) == 0 {
		b.WriteString([]string{"Alice: ", "Bob: ", "build step: ", "Carol: "}[h.rng.IntN(4)])
	}
	for i := range 3 + h.rng.IntN(10) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[h.rng.IntN(len(vocabulary))])
	}
	if h.rng.IntN(6) == 0 {
		b.WriteString("?")
	}
	return b.String()
}

func (h *history) vector(text string) []float32 {
	if h.rng.IntN(15) == 0 {
		return nil // pending: embedded later
	}
	vs, err := h.e.Embed(context.Background(), []string{text})
	if err != nil {
		panic(err)
	}
	return vs[0]
}

func (h *history) id(prefix string) string {
	h.n++
	return fmt.Sprintf("%s_%06d", prefix, h.n)
}

// step writes one change.
func (h *history) step() {
	h.ts += int64(h.rng.IntN(90_000))
	repo := repos[h.rng.IntN(len(repos))]
	session := fmt.Sprintf("s%d", h.rng.IntN(8))
	scope := memory.Scope{SessionID: session, RepoID: repo}
	if h.rng.IntN(4) == 0 {
		scope.AgentID = "agent-1"
	}
	r := h.rng.IntN(100)
	switch {
	case r >= 96:
		// A code entity of the repository: symbol, path, code.
		t := "Type" + vocabulary[h.rng.IntN(len(vocabulary))] + ".readFile pkg/" + repo + "/file.go func readFile() { " + h.text() + " }"
		h.store.put(memory.IndexRecord{Kind: memory.VectorCodeEntity, Type: memory.TargetType(memory.VectorCodeEntity), ID: h.id(repo + "|code"),
			Content: t, TS: h.ts, Scope: memory.Scope{RepoID: repo}, Position: -1, Vector: h.vector(t)})
	case r < 55:
		t := h.text()
		capsule := "cap_" + session + repo
		rec := memory.IndexRecord{Type: memory.TargetObservation, ID: h.id("obs"), Content: t, TS: h.ts, Scope: scope,
			CapsuleID: capsule, Position: h.pos[capsule], Vector: h.vector(t)}
		if h.rng.IntN(10) == 0 {
			rec.CapsuleID, rec.Position = "", -1
		} else {
			h.pos[capsule]++
		}
		h.store.put(rec)
		h.obs = append(h.obs, rec.ID)
	case r < 63:
		capsule := "cap_" + session + repo
		id, ok := h.sums[capsule]
		if !ok {
			id = h.id("sum")
			h.sums[capsule] = id
		}
		t := h.text()
		h.store.put(memory.IndexRecord{Type: memory.TargetSummary, ID: id, Content: t, TS: h.ts, Scope: scope, Position: -1, Vector: h.vector(t)})
	case r < 75:
		t := h.text()
		var tags []string
		for _, tag := range []string{"decision", "lesson", "todo"} {
			if h.rng.IntN(3) == 0 {
				tags = append(tags, tag)
			}
		}
		status := memory.StatusActive
		if h.rng.IntN(8) == 0 {
			status = memory.StatusRemoval
		}
		id := h.id("th")
		h.store.put(memory.IndexRecord{Kind: memory.VectorThought, Type: memory.TargetType(memory.VectorThought), ID: id, Content: t, TS: h.ts,
			Scope: scope, Tags: tags, Private: h.rng.IntN(5) == 0, Status: status, Position: -1, Vector: h.vector(t), Origin: memory.OriginModel})
		h.thts = append(h.thts, id)
	case r < 82:
		kind := memory.VectorKGEntity
		if h.rng.IntN(2) == 0 {
			kind = memory.VectorKGObservation
		}
		t := h.text()
		h.store.put(memory.IndexRecord{Kind: kind, Type: memory.TargetType(kind), ID: h.id("kg"), Content: t, TS: h.ts, Scope: scope, Position: -1, Vector: h.vector(t)})
	case r < 88 && len(h.obs) > 0:
		// Forget an observation.
		id := h.obs[h.rng.IntN(len(h.obs))]
		h.store.put(memory.IndexRecord{Type: memory.TargetObservation, ID: id, Position: -1, Gone: true})
	case r < 92 && len(h.thts) > 0:
		id := h.thts[h.rng.IntN(len(h.thts))]
		h.store.put(memory.IndexRecord{Kind: memory.VectorThought, Type: memory.TargetType(memory.VectorThought), ID: id, Position: -1, Gone: true})
	case len(h.obs) > 0:
		// A record's vector arrives (or changes): the same record again.
		h.store.mu.Lock()
		k := recKey(memory.VectorObservation, h.obs[h.rng.IntN(len(h.obs))])
		rec := h.store.recs[k]
		h.store.mu.Unlock()
		if !rec.Gone {
			rec.Vector = h.vector(rec.Content + " " + vocabulary[h.rng.IntN(len(vocabulary))])
			h.store.put(rec)
		}
	}
}
