package cairn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/internal/sample"
	"github.com/cairnhq/cairn/memory"
)

// switchable is an embedder that is down while down is set.
type switchable struct {
	embed.Hash
	down atomic.Bool
}

func (s *switchable) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if s.down.Load() {
		return nil, errors.New("dial tcp embedder-host:11434: connection refused")
	}
	return s.Hash.Embed(ctx, texts)
}

// healClock is the healer's timer, driven by the test: every wait the
// healer asks for is recorded, and ends when the test ticks.
type healClock struct {
	waits  chan time.Duration
	ticks  chan time.Time
	passes chan cairn.HealPass
}

func newHealClock() *healClock {
	return &healClock{waits: make(chan time.Duration, 100), ticks: make(chan time.Time), passes: make(chan cairn.HealPass, 100)}
}

func (c *healClock) after(d time.Duration) <-chan time.Time {
	c.waits <- d
	return c.ticks
}

// options are healing options for an engine driven by c.
func (c *healClock) options(e embed.Embedder) *cairn.Options {
	o := &cairn.Options{Embedder: e, HealEmbeddings: true}
	cairn.SetHealHooks(o, c.after, func(p cairn.HealPass) { c.passes <- p })
	return o
}

// stuck bounds a wait that only a bug makes long.
const stuck = 2 * time.Minute

// next waits for the healer's next pass.
func (c *healClock) next(t *testing.T) cairn.HealPass {
	t.Helper()
	select {
	case p := <-c.passes:
		return p
	case <-time.After(stuck):
		t.Fatal("the healer reported no pass")
	}
	return cairn.HealPass{}
}

// tick ends the healer's current wait and returns the pass it starts.
func (c *healClock) tick(t *testing.T) cairn.HealPass {
	t.Helper()
	select {
	case c.ticks <- time.Time{}:
	case <-time.After(stuck):
		t.Fatal("the healer is not waiting")
	}
	return c.next(t)
}

func pendingIn(t *testing.T, eng *cairn.Engine) int {
	t.Helper()
	st, err := eng.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.Embedder.Pending
}

// writeUnembedded stores records the way a process killed between storing
// them and storing their vectors leaves them: present, without vectors.
func writeUnembedded(t *testing.T, path string, e embed.Embedder, thoughts int) int {
	t.Helper()
	eng, err := cairn.Open(path, &cairn.Options{Embedder: e, SkipEmbedOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.Import(ctx, bytes.NewReader(sample.AgentSessions), cairn.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range thoughts {
		if _, err := eng.Think(ctx, cairn.ThinkRequest{Content: fmt.Sprintf("lesson %d: retry the flaky gateway call", i)}); err != nil {
			t.Fatal(err)
		}
	}
	ent, err := eng.CreateEntity(ctx, cairn.EntityRequest{Name: "gateway", Type: "service"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Observe(ctx, cairn.ObserveRequest{EntityID: ent.ID, Content: "drops idle links after 60 s"}); err != nil {
		t.Fatal(err)
	}
	n := pendingIn(t, eng)
	if want := sampleRecords + thoughts + 2; n != want {
		t.Fatalf("%d records pending; want %d", n, want)
	}
	return n
}

// A long-running engine embeds what an interrupted process left pending:
// at open, and later what other processes leave, without anyone running
// cairn reembed.
func TestHealEmbedsPendingRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	e := embed.Hash{Dim: 64}
	n := writeUnembedded(t, path, e, 5)
	clk := newHealClock()
	eng := openAt(t, path, clk.options(e))
	p := clk.next(t)
	if p.Err != nil || p.Healed != n || p.Pending != 0 || p.Next != cairn.DefaultHealInterval {
		t.Fatalf("first pass %+v; want %d healed, none pending, next in %s", p, n, cairn.DefaultHealInterval)
	}
	if got := <-clk.waits; got != cairn.DefaultHealInterval {
		t.Fatalf("the healer waits %s; want %s", got, cairn.DefaultHealInterval)
	}
	if got := pendingIn(t, eng); got != 0 {
		t.Fatalf("%d records still pending", got)
	}
	rep, err := eng.Doctor(ctx, cairn.DoctorRequest{})
	if err != nil || !rep.OK {
		t.Fatalf("doctor after healing: %+v %v", rep, err)
	}
	if st, err := eng.Status(ctx); err != nil || st.Embedder.InSpace != n {
		t.Fatalf("%d vectors for %d records: %v", st.Embedder.InSpace, n, err)
	}

	// Another process writes without embedding; the next pass heals it.
	other, err := cairn.Open(path, &cairn.Options{Embedder: e, SkipEmbedOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := other.Think(ctx, cairn.ThinkRequest{Content: fmt.Sprintf("later thought %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	other.Close()
	if p := clk.tick(t); p.Err != nil || p.Healed != 3 || p.Pending != 0 {
		t.Fatalf("second pass %+v; want 3 healed", p)
	}
	// Nothing pending: a pass heals nothing and costs no write.
	if p := clk.tick(t); p.Err != nil || p.Healed != 0 || p.Pending != 0 {
		t.Fatalf("idle pass %+v", p)
	}
	if h := eng.Healing(); !h.Enabled || h.Healed != int64(n+3) || h.Passes != 3 || h.Failures != 0 || h.Pending != 0 {
		t.Fatalf("healing status %+v", h)
	}
}

// While the embedder fails, each pass waits twice as long as the one
// before, up to a cap, and no record is lost; when it answers again the
// next pass heals them all and the pace returns to the interval.
func TestHealBacksOffWhileTheEmbedderFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	emb := &switchable{Hash: embed.Hash{Dim: 64}}
	emb.down.Store(true)
	clk := newHealClock()
	o := clk.options(emb)
	o.HealInterval = 30 * time.Second
	eng := openAt(t, path, o)
	if p := clk.next(t); p.Err != nil || p.Pending != 0 || p.Next != 30*time.Second {
		t.Fatalf("pass on an empty database: %+v", p)
	}
	<-clk.waits
	var ids []string
	for i := range 5 {
		th, err := eng.Think(ctx, cairn.ThinkRequest{Content: fmt.Sprintf("thought %d written while the embedder is down", i)})
		if err != nil {
			t.Fatalf("a write failed with the embedder down: %v", err)
		}
		ids = append(ids, th.ID)
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 320 * time.Second, 10 * time.Minute, 10 * time.Minute, 10 * time.Minute}
	for i, w := range want {
		p := clk.tick(t)
		if memory.CodeOf(p.Err) != memory.CodeEmbedderUnavailable || p.Healed != 0 || p.Pending != 5 || p.Next != w {
			t.Fatalf("failed pass %d: %+v; want embedder_unavailable, 5 pending, next in %s", i+1, p, w)
		}
		if got := <-clk.waits; got != w {
			t.Fatalf("failed pass %d: the healer waits %s; want %s", i+1, got, w)
		}
	}
	h := eng.Healing()
	if h.Failures != int64(len(want)) || h.Pending != 5 || h.LastError == "" || strings.Contains(h.LastError, "embedder-host") {
		t.Fatalf("healing status while down: %+v", h)
	}
	for _, id := range ids {
		if _, err := eng.Thought(ctx, id); err != nil {
			t.Fatalf("thought %s lost while the embedder was down: %v", id, err)
		}
	}
	emb.down.Store(false)
	if p := clk.tick(t); p.Err != nil || p.Healed != 5 || p.Pending != 0 || p.Next != 30*time.Second {
		t.Fatalf("pass after recovery: %+v", p)
	}
	if got := <-clk.waits; got != 30*time.Second {
		t.Fatalf("after recovery the healer waits %s", got)
	}
	if got := pendingIn(t, eng); got != 0 {
		t.Fatalf("%d records pending after recovery", got)
	}
	if h := eng.Healing(); h.LastError != "" || h.Healed != 5 {
		t.Fatalf("healing status after recovery: %+v", h)
	}
}

// barrier holds the first Embed call of each of two embedders until both
// have made it, so two healers start on the same records at once.
type barrier struct {
	embed.Hash
	wg   *sync.WaitGroup
	once sync.Once
}

func (b *barrier) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	b.once.Do(func() {
		b.wg.Done()
		b.wg.Wait()
	})
	return b.Hash.Embed(ctx, texts)
}

// Two processes healing one database at once store each vector once: the
// one that finds its work done by the other leaves the rest to it.
func TestHealersShareADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	n := writeUnembedded(t, path, embed.Hash{Dim: 64}, 200)
	var wg sync.WaitGroup
	wg.Add(2)
	clkA, clkB := newHealClock(), newHealClock()
	a := openAt(t, path, clkA.options(&barrier{Hash: embed.Hash{Dim: 64}, wg: &wg}))
	b := openAt(t, path, clkB.options(&barrier{Hash: embed.Hash{Dim: 64}, wg: &wg}))
	pa, pb := clkA.next(t), clkB.next(t)
	if pa.Err != nil || pb.Err != nil {
		t.Fatalf("passes failed: %v, %v", pa.Err, pb.Err)
	}
	if pa.Healed+pb.Healed != n {
		t.Fatalf("the two healers stored %d + %d vectors for %d records", pa.Healed, pb.Healed, n)
	}
	if !pa.Yielded && !pb.Yielded {
		t.Fatalf("both healers embedded the same records to the end: %+v %+v", pa, pb)
	}
	for _, eng := range []*cairn.Engine{a, b} {
		if got := pendingIn(t, eng); got != 0 {
			t.Fatalf("%d records pending", got)
		}
	}
	st, err := a.Status(ctx)
	if err != nil || st.Embedder.InSpace != n {
		t.Fatalf("%d vectors for %d records: %v", st.Embedder.InSpace, n, err)
	}
}

// blocking is an embedder that hangs on texts holding "hang", until its
// caller gives up.
type blocking struct {
	embed.Hash
	entered chan struct{}
}

func (b *blocking) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, s := range texts {
		if strings.Contains(s, "hang") {
			select {
			case b.entered <- struct{}{}:
			default:
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	return b.Hash.Embed(ctx, texts)
}

// A pass never holds up requests, and Close stops the healer mid-pass:
// what it had not stored stays pending, nothing is lost.
func TestHealNeverBlocksAndStopsOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	e := embed.Hash{Dim: 64}
	w, err := cairn.Open(path, &cairn.Options{Embedder: e, SkipEmbedOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Think(ctx, cairn.ThinkRequest{Content: "hang on to this thought"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	emb := &blocking{Hash: e, entered: make(chan struct{}, 1)}
	clk := newHealClock()
	eng, err := cairn.Open(path, clk.options(emb))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-emb.entered:
	case <-time.After(stuck):
		t.Fatal("the healer did not start embedding")
	}
	// The healer is stuck in the embedder; requests go on.
	if _, err := eng.Think(ctx, cairn.ThinkRequest{Content: "a new thought"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "new thought"}); err != nil {
		t.Fatalf("retrieve while the healer is busy: %v", err)
	}
	if got := pendingIn(t, eng); got != 1 {
		t.Fatalf("%d pending while the healer is busy; want 1", got)
	}
	closed := make(chan error, 1)
	go func() { closed <- eng.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(stuck):
		t.Fatal("Close waits for a pass that cannot end")
	}
	select {
	case p := <-clk.passes:
		t.Fatalf("a pass cut short by Close was reported: %+v", p)
	default:
	}
	after := openAt(t, path, &cairn.Options{Embedder: e})
	if got := pendingIn(t, after); got != 1 {
		t.Fatalf("%d pending after Close; want the interrupted one", got)
	}
}

// An engine without HealEmbeddings does not heal, and says so.
func TestNoHealingByDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	e := embed.Hash{Dim: 64}
	n := writeUnembedded(t, path, e, 0)
	eng := openAt(t, path, &cairn.Options{Embedder: e})
	if h := eng.Healing(); h.Enabled || h.Passes != 0 {
		t.Fatalf("healing status %+v", h)
	}
	if got := pendingIn(t, eng); got != n {
		t.Fatalf("%d pending; want %d", got, n)
	}
}

// Pending records are a doctor's warning with the fix, not a failure;
// an embedder that does not answer still fails.
func TestDoctorWarnsOfPendingRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	e := embed.Hash{Dim: 64}
	n := writeUnembedded(t, path, e, 0)
	eng := openAt(t, path, &cairn.Options{Embedder: e})
	rep, err := eng.Doctor(ctx, cairn.DoctorRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var vf memory.Finding
	for _, f := range rep.Findings {
		if f.Check == "vectors" {
			vf = f
		} else if !f.OK || f.Warning {
			t.Errorf("finding %+v", f)
		}
	}
	if !rep.OK || vf.OK || !vf.Warning || !strings.Contains(vf.Detail, fmt.Sprintf("%d pending", n)) ||
		!strings.Contains(vf.Fix, "cairn reembed") || !strings.Contains(vf.Fix, "cairn serve or cairn mcp") {
		t.Fatalf("doctor with pending records: ok %v, %+v", rep.OK, vf)
	}
	eng.Close()
	down := openAt(t, path, &cairn.Options{Embedder: downEmbedder{e}})
	rep, err = down.Doctor(ctx, cairn.DoctorRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK {
		t.Fatalf("doctor is ok with an embedder that does not answer: %+v", rep.Findings)
	}
}
