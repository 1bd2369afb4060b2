package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// ReplicasOptions configure the replicas benchmark.
type ReplicasOptions struct {
	// Binary is the cairn executable the replicas run (cairn serve).
	Binary string
	// Postgres is the database (a postgres:// URL); the benchmark works
	// in a schema of its own, dropped afterwards.
	Postgres string
	// Replicas are the numbers of servers to measure, e.g. 1, 2, 4.
	Replicas []int
	// Records are generated (and embedded) into the database first.
	Records int
	// Clients are the concurrent callers, spread over the replicas;
	// Seconds how long each measurement runs; WriteShare the share of
	// calls that write an observation (the rest retrieve).
	Clients    int
	Seconds    float64
	WriteShare float64
	// LagSamples is how many writes the lag measurement times.
	LagSamples int
	Seed       uint64
	// Dir holds the replicas' index directories (a new directory in it,
	// removed afterwards); default the system's temporary directory.
	Dir string
	Log io.Writer
	// Progress, when set, is told how far the loading is.
	Progress func(stage string, done, total int)
}

// ReplicasReport is what the replicas benchmark measured.
type ReplicasReport struct {
	Machine    Machine      `json:"machine"`
	Records    int          `json:"records"`
	Clients    int          `json:"clients"`
	Seconds    float64      `json:"seconds"`
	WriteShare float64      `json:"writeShare"`
	Runs       []ReplicaRun `json:"runs"`
	// Lag is the time from a write's acknowledgement by one replica to
	// the first retrieve of another that returns it, polled without
	// pause: once with each of LagProviders.
	Lag []LagResult `json:"lag"`
}

// LagProviders are the providers the replication lag is measured with:
// hybrid, the default, answers from each replica's own index, which
// catches up from the database's change log before every search (the
// path replication takes); local-fts queries the database directly.
var LagProviders = []string{retrieve.HybridName, retrieve.LocalFTSName}

// ReplicaRun is one number of replicas under load.
type ReplicaRun struct {
	Replicas int     `json:"replicas"`
	Calls    int     `json:"calls"`
	Errors   int     `json:"errors"`
	CallsPS  float64 `json:"callsPerSecond"`
	Retrieve Stats   `json:"retrieve"`
	Write    Stats   `json:"write"`
	Load1    float64 `json:"load1"`
	// CPU time per call over the run, in ms (Linux; 0 elsewhere): the
	// cairn servers' (ServerCPUMs), the callers' (this process), and the
	// rest of the machine's busy time (OtherCPUMs: the database server
	// when it runs on the same machine, and whatever else runs there).
	ServerCPUMs float64 `json:"serverCpuMsPerCall"`
	CallerCPUMs float64 `json:"callerCpuMsPerCall"`
	OtherCPUMs  float64 `json:"otherCpuMsPerCall"`
}

// LagResult summarises the replication lag samples of one provider.
type LagResult struct {
	// Provider is the retrieval provider the other replica was polled
	// with.
	Provider string  `json:"provider"`
	Samples  int     `json:"samples"`
	P50Ms    float64 `json:"p50Ms"`
	P99Ms    float64 `json:"p99Ms"`
	MaxMs    float64 `json:"maxMs"`
	// Polls is the mean number of retrieves until the write was found
	// (1: the first retrieve after the acknowledgement found it).
	Polls float64 `json:"polls"`
}

var replicaListening = regexp.MustCompile(`listening on http://(\S+)`)

// replicaProc is a running cairn serve.
type replicaProc struct {
	base string
	cmd  *exec.Cmd
}

func startReplicaServe(ctx context.Context, bin, db, indexDir string) (*replicaProc, error) {
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), cairn.EnvDB+"="+db, cairn.EnvIndexDir+"="+indexDir)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 20 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "starting cairn serve: %v", err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := replicaListening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- strings.TrimSuffix(m[1], ")"):
				default:
				}
			}
		}
	}()
	select {
	case a := <-addr:
		return &replicaProc{base: "http://" + a, cmd: cmd}, nil
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, memory.Errorf(memory.CodeInternal, "cairn serve did not start")
	}
}

func (r *replicaProc) stop() {
	r.cmd.Process.Signal(os.Interrupt)
	r.cmd.Wait()
}

var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}

func post(url, body string) ([]byte, error) {
	res, err := benchClient.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		return b, fmt.Errorf("%s: %d %.200s", url, res.StatusCode, b)
	}
	return b, nil
}

// Replicas loads generated memory into a PostgreSQL schema, then for each
// number of replicas starts that many cairn serve processes on it (each
// with its own retrieval index, as on separate hosts), spreads Clients
// callers over them for Seconds (retrieves, and WriteShare writes), and
// measures throughput and latency; last it measures the replication lag
// between two replicas, with each of LagProviders.
func Replicas(ctx context.Context, o ReplicasOptions) (ReplicasReport, error) {
	rep := ReplicasReport{Machine: machine(), Records: o.Records, Clients: o.Clients, Seconds: o.Seconds, WriteShare: o.WriteShare}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if len(o.Replicas) == 0 || o.Clients < 1 || o.Seconds <= 0 || o.Records < 100 {
		return rep, memory.Errorf(memory.CodeInvalidParams, "replicas, clients, seconds and at least 100 records are needed")
	}
	dir, err := workDir(o.Dir, "cairn-replicas-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	db := WithSchema(o.Postgres, fmt.Sprintf("cairn_replicas_%d", os.Getpid()))
	defer DropSchema(db)

	bodies, err := loadReplicaDB(ctx, db, o)
	if err != nil {
		return rep, err
	}
	start := func(n int) ([]*replicaProc, error) { return startReplicas(ctx, o, db, dir, n, bodies[0]) }
	var seq atomic.Int64
	for _, n := range o.Replicas {
		fmt.Fprintf(o.Log, "%d replica(s): starting\n", n)
		procs, err := start(n)
		if err != nil {
			return rep, err
		}
		fmt.Fprintf(o.Log, "%d replica(s): %d callers for %.0f s\n", n, o.Clients, o.Seconds)
		run := measureReplicas(ctx, procs, bodies, o, &seq)
		run.Replicas = n
		run.Load1 = load1()
		rep.Runs = append(rep.Runs, run)
		for _, p := range procs {
			p.stop()
		}
		if ctx.Err() != nil {
			return rep, memory.Wrap(memory.CodeInternal, ctx.Err(), "interrupted")
		}
	}
	if o.LagSamples > 0 {
		fmt.Fprintf(o.Log, "replication lag: %d writes\n", o.LagSamples)
		procs, err := start(2)
		if err != nil {
			return rep, err
		}
		for _, provider := range LagProviders {
			var lag LagResult
			if lag, err = measureLag(ctx, procs[0], procs[1], provider, o.LagSamples); err != nil {
				break
			}
			rep.Lag = append(rep.Lag, lag)
		}
		for _, p := range procs {
			p.stop()
		}
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// loadReplicaDB loads o.Records generated records into db, embedded, and
// returns the retrieve requests' bodies of questions about them.
func loadReplicaDB(ctx context.Context, db string, o ReplicasOptions) ([]string, error) {
	fmt.Fprintf(o.Log, "loading %d records\n", o.Records)
	now := genNow(o.Records)
	eng, err := cairn.Open(db, &cairn.Options{Now: func() time.Time { return now }, SkipEmbedOnWrite: true, IndexDir: cairn.IndexInMemory})
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	gen := NewMemoryGen(o.Seed, o.Records)
	for !gen.Done() {
		if err := eng.ImportDump(ctx, gen.Next(5000)); err != nil {
			return nil, err
		}
		if o.Progress != nil {
			o.Progress("loading", gen.sent, o.Records)
		}
	}
	if _, err := eng.Reembed(ctx, cairn.ReembedRequest{}, func(done, total int) {
		if o.Progress != nil {
			o.Progress("embedding", done, total)
		}
	}); err != nil {
		return nil, err
	}
	questions, _ := gen.Questions(scaleQuestions)
	bodies := make([]string, len(questions))
	for i, q := range questions {
		b, _ := json.Marshal(map[string]any{"query": q.Query, "scopeIds": q.ScopeIDs, "maxCandidates": 10})
		bodies[i] = string(b)
	}
	return bodies, nil
}

// startReplicas starts n replicas of `cairn serve` on db, each with its
// own retrieval index under dir, and has each build its index (on its
// first search, with warm) before they are measured.
func startReplicas(ctx context.Context, o ReplicasOptions, db, dir string, n int, warm string) ([]*replicaProc, error) {
	var procs []*replicaProc
	for i := range n {
		p, err := startReplicaServe(ctx, o.Binary, db, filepath.Join(dir, fmt.Sprintf("index-%d", i)))
		if err != nil {
			for _, q := range procs {
				q.stop()
			}
			return nil, err
		}
		procs = append(procs, p)
	}
	for _, p := range procs {
		if _, err := post(p.base+"/v1/retrieve", warm); err != nil {
			return procs, err
		}
	}
	return procs, nil
}

// measureReplicas spreads the callers over the replicas for o.Seconds.
func measureReplicas(ctx context.Context, procs []*replicaProc, bodies []string, o ReplicasOptions, seq *atomic.Int64) ReplicaRun {
	var run ReplicaRun
	var mu sync.Mutex
	var reads, writes []time.Duration
	var errs atomic.Int64
	deadline := time.Now().Add(time.Duration(o.Seconds * float64(time.Second)))
	var wg sync.WaitGroup
	serverTicks := func() (int64, bool) {
		var sum int64
		for _, p := range procs {
			n, ok := procTicks(strconv.Itoa(p.cmd.Process.Pid))
			if !ok {
				return 0, false
			}
			sum += n
		}
		return sum, true
	}
	s0, sok := serverTicks()
	c0, cok := cpuTicks()
	m0, mok := machineTicks()
	t0 := time.Now()
	for c := range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := procs[c%len(procs)]
			var myReads, myWrites []time.Duration
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				write := float64((i*7+c)%100) < o.WriteShare*100
				t := time.Now()
				var err error
				if write {
					n := seq.Add(1)
					_, err = post(p.base+"/v1/observations", fmt.Sprintf(`{"kind":"message","content":"replica load note %d: deploy %d finished on host %d","scopeIds":{"repoId":"/bench/replicas"}}`, n, n%97, c))
				} else {
					_, err = post(p.base+"/v1/retrieve", bodies[(i*13+c)%len(bodies)])
				}
				d := time.Since(t)
				if err != nil {
					errs.Add(1)
					continue
				}
				if write {
					myWrites = append(myWrites, d)
				} else {
					myReads = append(myReads, d)
				}
			}
			mu.Lock()
			reads, writes = append(reads, myReads...), append(writes, myWrites...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	secs := time.Since(t0).Seconds()
	s1, sok1 := serverTicks()
	c1, cok1 := cpuTicks()
	m1, mok1 := machineTicks()
	stats := func(d []time.Duration) Stats {
		s := Stats{Clients: o.Clients, Requests: len(d), Seconds: secs, RPS: float64(len(d)) / secs}
		if len(d) > 0 {
			s.P50, s.P95, s.P99 = Percentile(d, 0.50), Percentile(d, 0.95), Percentile(d, 0.99)
		}
		return s
	}
	run.Retrieve, run.Write = stats(reads), stats(writes)
	run.Calls = len(reads) + len(writes)
	run.Errors = int(errs.Load())
	run.CallsPS = float64(run.Calls) / secs
	if sok && sok1 && cok && cok1 && mok && mok1 && run.Calls > 0 {
		perCall := func(ticks int64) float64 { return float64(ticks) * 1000 / clockTicks / float64(run.Calls) }
		run.ServerCPUMs, run.CallerCPUMs = perCall(s1-s0), perCall(c1-c0)
		run.OtherCPUMs = perCall(max(0, (m1-m0)-(s1-s0)-(c1-c0)))
	}
	return run
}

// measureLag writes a unique word through a and polls b's retrieve with
// provider for it until it is returned, samples times.
func measureLag(ctx context.Context, a, b *replicaProc, provider string, samples int) (LagResult, error) {
	var lags []time.Duration
	polls := 0
	for i := range samples {
		word := fmt.Sprintf("lagmarker%dx%sx%d", os.Getpid(), strings.ReplaceAll(provider, "-", ""), i)
		body, err := post(a.base+"/v1/observations", fmt.Sprintf(`{"kind":"message","content":"the %s was written","scopeIds":{"repoId":"/bench/lag"}}`, word))
		if err != nil {
			return LagResult{}, err
		}
		var o memory.Observation
		json.Unmarshal(body, &o)
		acked := time.Now()
		q := fmt.Sprintf(`{"query":%q,"provider":%q,"scopeIds":{"repoId":"/bench/lag"},"maxCandidates":3}`, word, provider)
		for {
			if ctx.Err() != nil {
				return LagResult{}, memory.Wrap(memory.CodeInternal, ctx.Err(), "interrupted")
			}
			polls++
			res, err := post(b.base+"/v1/retrieve", q)
			if err != nil {
				return LagResult{}, err
			}
			var r struct {
				Provenance struct {
					ProviderUsed string `json:"providerUsed"`
				} `json:"provenance"`
			}
			if json.Unmarshal(res, &r); r.Provenance.ProviderUsed != provider {
				return LagResult{}, memory.Errorf(memory.CodeInternal, "the replica answered with provider %q, not %s", r.Provenance.ProviderUsed, provider)
			}
			if bytes.Contains(res, []byte(o.ID)) {
				break
			}
			if time.Since(acked) > 30*time.Second {
				return LagResult{}, memory.Errorf(memory.CodeInternal, "write %s not visible on the other replica after 30 s", o.ID)
			}
		}
		lags = append(lags, time.Since(acked))
	}
	r := LagResult{Provider: provider, Samples: len(lags), Polls: float64(polls) / float64(len(lags))}
	r.P50Ms, r.P99Ms = Percentile(lags, 0.50), Percentile(lags, 0.99)
	r.MaxMs = Percentile(lags, 1)
	return r, nil
}

// WriteReplicasTable prints the report as aligned tables.
func WriteReplicasTable(w io.Writer, rep ReplicasReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "replicas\tcallers\tcalls/s\tretrieve/s\tretrieve p50 ms\tp99 ms\twrites/s\twrite p50 ms\tp99 ms\terrors\tload\tCPU ms/call: servers\tcallers\trest\t")
	for _, r := range rep.Runs {
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.0f\t%.2f\t%.2f\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.Replicas, rep.Clients, r.CallsPS,
			r.Retrieve.RPS, r.Retrieve.P50, r.Retrieve.P99, r.Write.RPS, r.Write.P50, r.Write.P99, r.Errors, r.Load1,
			r.ServerCPUMs, r.CallerCPUMs, r.OtherCPUMs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Lag) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nreplication lag: a write acknowledged by one replica, then the other's retrieve polled until it returns the write")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "provider\twrites\tlag p50 ms\tp99 ms\tmax ms\tretrieves per write\t")
	for _, l := range rep.Lag {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t\n", l.Provider, l.Samples, l.P50Ms, l.P99Ms, l.MaxMs, l.Polls)
	}
	return tw.Flush()
}
