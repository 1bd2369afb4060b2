package bench

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/cairnhq/cairn"
	cembed "github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// The peers' pinned versions and the mem0 driver, written into the
// temporary folder where npm installs the peers at run time.
//
//go:embed peers/package.json peers/mem0.mjs
var peerFiles embed.FS

// Peer systems `cairn bench peers` can measure, in report order.
const (
	SystemCairnHybrid = "cairn-hybrid"
	SystemCairnFTS    = "cairn-local-fts"
	SystemMem0        = "mem0"
	SystemMCPMemory   = "mcp-memory"
	SystemMCPMemoryKW = "mcp-memory-kw"
)

// PeerSystems lists every system, in report order.
var PeerSystems = []string{SystemCairnHybrid, SystemCairnFTS, SystemMem0, SystemMCPMemory, SystemMCPMemoryKW}

// ParseSystems reads a comma-separated subset of PeerSystems ("" or "all"
// for every one), keeping report order.
func ParseSystems(s string) ([]string, error) {
	if s == "" || s == "all" {
		return slices.Clone(PeerSystems), nil
	}
	want := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if !slices.Contains(PeerSystems, part) {
			return nil, memory.Errorf(memory.CodeInvalidParams, "--systems: unknown system %q (known: %s)", part, strings.Join(PeerSystems, ", "))
		}
		want[part] = true
	}
	var out []string
	for _, name := range PeerSystems {
		if want[name] {
			out = append(out, name)
		}
	}
	return out, nil
}

// ParseKs reads cut-offs such as "1,5,10,20": positive, at most 1000,
// returned sorted without duplicates.
func ParseKs(s string) ([]int, error) {
	var ks []int
	for _, part := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || k < 1 || k > 1000 {
			return nil, memory.Errorf(memory.CodeInvalidParams, "--k wants cut-offs between 1 and 1000 separated by commas, such as 1,5,10,20; got %q", s)
		}
		if !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks, nil
}

// PeersOptions configure a peer comparison.
type PeersOptions struct {
	// Data is the LoCoMo dataset; Cases the questions asked (default all of
	// Data's).
	Data  *LoCoMo
	Cases []Case
	// Systems to measure (default PeerSystems); Ks the recall cut-offs
	// (default 1, 5, 10, 20). Every system returns max(Ks) items a question.
	Systems []string
	Ks      []int
	// Options configure cairn's engine (nil for the defaults); set Now
	// after the dataset's last turn, as `cairn bench locomo` does. Its
	// Embedder (default the built-in GloVe) also computes every vector
	// mem0 ranks with, so both engines rank in one space.
	Options *cairn.Options
	// Node and Npm are the executables (default "node" and "npm").
	Node, Npm string
	// Dir is the working folder: npm installs the peers there and every
	// system keeps its data there. The caller creates and removes it.
	Dir string
	// Reuse is a working folder kept from an earlier run (--keep-tmp)
	// whose node_modules is used instead of installing the peers again.
	Reuse string
	// Warmup questions (the first ones) are asked before measuring each
	// system, untimed and unscored. Default 20; negative for none.
	Warmup int
	// Progress receives one line per step.
	Progress io.Writer
}

// PeersReport is the result of a peer comparison.
type PeersReport struct {
	Machine   PeerMachine    `json:"machine"`
	Dataset   string         `json:"dataset"`
	Turns     int            `json:"turns"`
	Questions int            `json:"questions"`
	Ks        []int          `json:"ks"`
	Embedder  string         `json:"embedder"`
	Latency   string         `json:"latency"`
	Systems   []SystemResult `json:"systems"`
	Seconds   float64        `json:"seconds"`
	// LoadBefore and LoadAfter are the machine's load averages (1, 5 and
	// 15 minutes) when the questions started and ended: other work on the
	// machine slows every system.
	LoadBefore string `json:"loadBefore,omitempty"`
	LoadAfter  string `json:"loadAfter,omitempty"`
}

// PeerMachine describes where the peer comparison ran.
type PeerMachine struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	CPU  string `json:"cpu"`
	CPUs int    `json:"cpus"`
	Go   string `json:"go"`
	Node string `json:"node,omitempty"`
}

// SystemResult is one system's figures.
type SystemResult struct {
	System  string `json:"system"`
	Version string `json:"version"`
	// Questions asked; Recall and Hit by k ("10"); MRR.
	Questions int                `json:"questions"`
	Recall    map[string]float64 `json:"recall"`
	Hit       map[string]float64 `json:"hit"`
	MRR       float64            `json:"mrr"`
	// IngestSeconds loads every turn, embedding included.
	IngestSeconds float64 `json:"ingestSeconds"`
	// P50Ms, P99Ms and MeanMs are the query latency (see PeersReport.Latency).
	P50Ms  float64 `json:"p50Ms"`
	P99Ms  float64 `json:"p99Ms"`
	MeanMs float64 `json:"meanMs"`
	// Returned is the mean number of turns a question got back (before
	// the cut at max k): what a caller has to read.
	Returned float64 `json:"returned"`
	// EngineP50Ms is mem0's own search time inside its driver (no pipe),
	// and EmbedP50Ms the part of it spent fetching vectors from cairn's
	// embedder over the pipe.
	EngineP50Ms float64 `json:"engineP50Ms,omitempty"`
	EmbedP50Ms  float64 `json:"embedP50Ms,omitempty"`
}

// LatencyMethod documents how latency is measured, for every system alike.
const LatencyMethod = "wall time of one question from the Go driver's point of view, one question at a time, each question asked of every system in turn, after a warm-up: " +
	"cairn = Engine.Retrieve in process; mem0 = a JSON line to the Node driver and back (Memory.search, with its query " +
	"embedding fetched from cairn's embedder over the same pipe); mcp-memory = one JSON-RPC tools/call search_nodes over " +
	"the server's stdio (mcp-memory-kw: the sum of one call per keyword)"

// peer is one system under test.
type peer interface {
	// version names what is measured.
	version() string
	// ingest loads every turn of the dataset.
	ingest(ctx context.Context, d *LoCoMo) error
	// search returns the dia_ids of the turns found for c, best first, at
	// most k of them unless the system cannot rank (then all it returned).
	search(ctx context.Context, c Case, k int) ([]string, error)
	close()
}

// RunPeers measures every selected system on the same questions, one
// system after another, each with its own data.
func RunPeers(ctx context.Context, o PeersOptions) (PeersReport, error) {
	start := time.Now()
	if o.Data == nil || o.Dir == "" {
		return PeersReport{}, memory.Errorf(memory.CodeInvalidParams, "peers: a dataset and a working folder are required")
	}
	o, opts, err := o.withDefaults()
	if err != nil {
		return PeersReport{}, err
	}
	emb := opts.Embedder
	rep := PeersReport{Machine: peerMachine(), Questions: len(o.Cases), Ks: o.Ks, Latency: LatencyMethod}
	for _, s := range o.Data.Samples {
		for _, sess := range s.Sessions {
			rep.Turns += len(sess.Turns)
		}
	}
	rep.Embedder = emb.Space().String()
	needNode := slices.ContainsFunc(o.Systems, func(s string) bool { return !strings.HasPrefix(s, "cairn-") })
	if needNode {
		if out, err := exec.CommandContext(ctx, o.Node, "--version").Output(); err == nil {
			rep.Machine.Node = strings.TrimSpace(string(out))
		}
		if err := installPeers(ctx, o); err != nil {
			return rep, err
		}
	}
	k := slices.Max(o.Ks)
	// Load every system first, then ask each question of every system in
	// turn: a neighbour's load on the machine then weighs on all systems
	// alike instead of on whichever ran at the time.
	pl := &peerLoad{o: o, opts: opts}
	defer pl.close()
	for _, name := range o.Systems {
		if err := pl.load(ctx, name); err != nil {
			return rep, err
		}
	}
	if err := pl.warmUp(ctx, k); err != nil {
		return rep, err
	}
	rep.LoadBefore = loadAverage()
	if err := pl.ask(ctx, k); err != nil {
		return rep, err
	}
	rep.LoadAfter = loadAverage()
	for _, r := range pl.runs {
		rep.Systems = append(rep.Systems, r.result(len(o.Cases)))
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// withDefaults fills in the options left unset, and the engine's options
// (the built-in embedder by default).
func (o PeersOptions) withDefaults() (PeersOptions, cairn.Options, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if len(o.Systems) == 0 {
		o.Systems = PeerSystems
	}
	if len(o.Ks) == 0 {
		o.Ks = Ks
	}
	if len(o.Cases) == 0 {
		o.Cases = o.Data.Cases()
	}
	if o.Warmup == 0 {
		o.Warmup = 20
	}
	if o.Node == "" {
		o.Node = "node"
	}
	if o.Npm == "" {
		o.Npm = "npm"
	}
	opts := cairn.Options{}
	if o.Options != nil {
		opts = *o.Options
	}
	if opts.Embedder == nil {
		g, err := cembed.NewGloVe()
		if err != nil {
			return o, opts, err
		}
		opts.Embedder = g
	}
	return o, opts, nil
}

// peerLoad is the systems a peers run loaded, in order.
type peerLoad struct {
	o    PeersOptions
	opts cairn.Options
	runs []*peerRun
	// eng is the cairn database both cairn providers answer from, loaded
	// once; cairnIngest is its load time.
	eng         *cairn.Engine
	cairnIngest float64
}

func (pl *peerLoad) close() {
	for _, r := range pl.runs {
		r.p.close()
	}
	if pl.eng != nil {
		pl.eng.Close()
	}
}

// load starts system name and loads the dataset into it.
func (pl *peerLoad) load(ctx context.Context, name string) error {
	o := pl.o
	var p peer
	var err error
	switch name {
	case SystemCairnHybrid, SystemCairnFTS:
		provider := strings.TrimPrefix(name, "cairn-")
		if pl.eng == nil {
			if pl.eng, err = cairn.Open(filepath.Join(o.Dir, "cairn.db"), &pl.opts); err != nil {
				return err
			}
			p = &cairnPeer{eng: pl.eng, provider: provider}
		} else {
			// Both providers answer from the same database: load it once.
			p = &cairnPeer{eng: pl.eng, provider: provider, loaded: true}
		}
	case SystemMem0:
		p, err = startMem0(ctx, o, pl.opts.Embedder)
	case SystemMCPMemory, SystemMCPMemoryKW:
		p, err = startMCPMemory(ctx, o, name == SystemMCPMemoryKW)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	r := &peerRun{name: name, p: p, sc: &accum{ks: o.Ks}}
	pl.runs = append(pl.runs, r)
	fmt.Fprintf(o.Progress, "%s: loading %d conversations\n", name, len(o.Data.Samples))
	t0 := time.Now()
	if err := p.ingest(ctx, o.Data); err != nil {
		return fmt.Errorf("%s: loading: %w", name, err)
	}
	r.res = SystemResult{System: name, Version: p.version(), IngestSeconds: time.Since(t0).Seconds()}
	if c, ok := p.(*cairnPeer); ok {
		if c.loaded {
			r.res.IngestSeconds = pl.cairnIngest
			r.res.Version += " (same database as the first cairn provider; its load time)"
		} else {
			pl.cairnIngest = r.res.IngestSeconds
		}
	}
	fmt.Fprintf(o.Progress, "%s: loaded in %.1f s\n", name, r.res.IngestSeconds)
	return nil
}

// warmUp asks each system the first Warmup questions, unmeasured.
func (pl *peerLoad) warmUp(ctx context.Context, k int) error {
	o := pl.o
	for _, r := range pl.runs {
		for _, c := range o.Cases[:max(0, min(o.Warmup, len(o.Cases)))] {
			if _, err := r.p.search(ctx, c, k); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
		}
		if m, ok := r.p.(*mem0Peer); ok {
			m.engine, m.embed = nil, nil // the warm-up is not measured
		}
	}
	return nil
}

// ask asks each question of every system in turn, measuring each answer.
func (pl *peerLoad) ask(ctx context.Context, k int) error {
	o := pl.o
	fmt.Fprintf(o.Progress, "asking %d questions of each system in turn\n", len(o.Cases))
	for i, c := range o.Cases {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, r := range pl.runs {
			t := time.Now()
			ranked, err := r.p.search(ctx, c, k)
			d := time.Since(t)
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			r.lat = append(r.lat, d)
			r.total += d
			r.returned += len(ranked)
			r.sc.add(ranked, c.Evidence)
		}
		if (i+1)%250 == 0 {
			fmt.Fprintf(o.Progress, "%d of %d questions\n", i+1, len(o.Cases))
		}
	}
	return nil
}

// peerRun accumulates one system's measurements.
type peerRun struct {
	name     string
	p        peer
	res      SystemResult
	sc       *accum
	lat      []time.Duration
	total    time.Duration
	returned int
}

func (r *peerRun) result(questions int) SystemResult {
	res := r.res
	scores := r.sc.scores()
	res.Questions, res.Recall, res.Hit, res.MRR = scores.Questions, scores.Recall, scores.Hit, scores.MRR
	res.MeanMs = float64(r.total.Microseconds()) / 1000 / float64(max(1, len(r.lat)))
	res.P50Ms, res.P99Ms = Percentile(r.lat, 0.50), Percentile(r.lat, 0.99)
	res.Returned = float64(r.returned) / float64(max(1, questions))
	if m, ok := r.p.(*mem0Peer); ok {
		res.EngineP50Ms, res.EmbedP50Ms = Percentile(m.engine, 0.50), Percentile(m.embed, 0.50)
	}
	return res
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func peerMachine() PeerMachine {
	m := PeerMachine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	return m
}

// installPeers writes the pinned package.json and the drivers into
// o.Dir and runs npm install there.
func installPeers(ctx context.Context, o PeersOptions) error {
	for _, name := range []string{"package.json", "mem0.mjs"} {
		b, err := peerFiles.ReadFile("peers/" + name)
		if err != nil {
			return memory.Wrap(memory.CodeInternal, err, "reading the embedded %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(o.Dir, name), b, 0o644); err != nil {
			return memory.Wrap(memory.CodeInternal, err, "writing %s: %v", name, err)
		}
	}
	if o.Reuse != "" {
		modules, err := filepath.Abs(filepath.Join(o.Reuse, "node_modules"))
		if err == nil {
			_, err = os.Stat(filepath.Join(modules, "mem0ai", "package.json"))
		}
		if err != nil {
			return memory.Errorf(memory.CodeInvalidParams, "--reuse %s: no installed peers there (want a folder kept by --keep-tmp)", o.Reuse)
		}
		if err := os.Symlink(modules, filepath.Join(o.Dir, "node_modules")); err != nil {
			return memory.Wrap(memory.CodeInternal, err, "linking %s: %v", modules, err)
		}
		fmt.Fprintf(o.Progress, "using the peers installed in %s\n", modules)
		return nil
	}
	fmt.Fprintf(o.Progress, "installing the peers with npm into %s (a minute or two)\n", o.Dir)
	cmd := exec.CommandContext(ctx, o.Npm, "install", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = o.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return memory.Wrap(memory.CodeInternal, err, "npm install of the peers failed (%v): %s", err, lastLines(out.String(), 10))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// installedVersion reads the version of an npm package installed in dir.
func installedVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	json.Unmarshal(b, &p)
	return p.Version
}

// cairnPeer asks cairn through the library, as `cairn bench locomo` does.
type cairnPeer struct {
	eng      *cairn.Engine
	provider string
	loaded   bool
}

func (c *cairnPeer) version() string {
	v := "cairn (this build)"
	if st, err := c.eng.Status(context.Background()); err == nil && st.Version != "" {
		v = "cairn " + st.Version
	}
	return v + ", provider " + c.provider
}

func (c *cairnPeer) ingest(ctx context.Context, d *LoCoMo) error {
	if c.loaded {
		return nil
	}
	if err := c.eng.ImportDump(ctx, d.Dump()); err != nil {
		return err
	}
	_, err := c.eng.Reembed(ctx, cairn.ReembedRequest{}, nil)
	return err
}

func (c *cairnPeer) search(ctx context.Context, q Case, k int) ([]string, error) {
	res, err := c.eng.Retrieve(ctx, cairn.RetrieveRequest{Query: q.Query, ScopeIDs: memory.Scope{RepoID: q.SampleID}, MaxCandidates: &k, Provider: c.provider})
	if memory.CodeOf(err) == memory.CodeInvalidParams {
		return nil, nil // a question with no searchable word ranks nothing
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, cand := range res.Candidates {
		if ob := cand.Entity.Observation; ob != nil {
			var p struct {
				DiaID string `json:"dia_id"`
			}
			json.Unmarshal(ob.Provenance, &p)
			out = append(out, p.DiaID)
		}
	}
	return out, nil
}

func (c *cairnPeer) close() {}

// lineProc is a child process spoken to in JSON lines on its stdin and
// stdout; its stderr goes to a log file in the working folder.
type lineProc struct {
	ctx context.Context
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	log *os.File
}

func startLineProc(ctx context.Context, dir, logName string, env []string, name string, args ...string) (*lineProc, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 2 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, logName))
	if err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "creating %s: %v", logName, err)
	}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, memory.Wrap(memory.CodeInternal, err, "starting %s: %v", name, err)
	}
	return &lineProc{ctx: ctx, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), log: log}, nil
}

func (p *lineProc) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = p.in.Write(append(b, '\n'))
	return err
}

func (p *lineProc) read() ([]byte, error) {
	line, err := p.out.ReadBytes('\n')
	if err != nil && p.ctx.Err() != nil {
		return nil, p.ctx.Err()
	}
	if err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "%s stopped (%v); its log: %s", filepath.Base(p.cmd.Path), err, p.logTail())
	}
	return line, nil
}

func (p *lineProc) logTail() string {
	b, _ := os.ReadFile(p.log.Name())
	return lastLines(string(b), 8)
}

func (p *lineProc) close() {
	p.in.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
	p.log.Close()
}

// mem0Peer drives mem0ai through peers/mem0.mjs, answering its requests
// for vectors with cairn's embedder.
type mem0Peer struct {
	p        *lineProc
	emb      cembed.Embedder
	versions map[string]string
	// engine and embed are mem0's own search time and the part of it
	// spent waiting for vectors, per question.
	engine, embed []time.Duration
}

func startMem0(ctx context.Context, o PeersOptions, emb cembed.Embedder) (*mem0Peer, error) {
	data := filepath.Join(o.Dir, "mem0-data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "creating %s: %v", data, err)
	}
	// HOME points into the working folder: mem0 writes ~/.mem0 there, and
	// telemetry is off.
	env := []string{"CAIRN_PEERS_DIR=" + data, fmt.Sprintf("CAIRN_PEERS_DIM=%d", emb.Space().Dim),
		"MEM0_TELEMETRY=false", "HOME=" + data}
	p, err := startLineProc(ctx, o.Dir, "mem0.log", env, o.Node, "mem0.mjs")
	if err != nil {
		return nil, err
	}
	m := &mem0Peer{p: p, emb: emb}
	var v struct {
		Versions map[string]string `json:"versions"`
	}
	if err := m.call(ctx, map[string]string{"op": "versions"}, &v); err != nil {
		p.close()
		return nil, err
	}
	m.versions = v.Versions
	m.versions["mem0ai"] = installedVersion(o.Dir, "mem0ai")
	return m, nil
}

// call sends one request and reads lines until its answer, embedding the
// texts the driver asks for on the way.
func (m *mem0Peer) call(ctx context.Context, req, resp any) error {
	if err := m.p.send(req); err != nil {
		return memory.Wrap(memory.CodeInternal, err, "writing to the mem0 driver: %v; its log: %s", err, m.p.logTail())
	}
	for {
		line, err := m.p.read()
		if err != nil {
			return err
		}
		var msg struct {
			Embed []string `json:"embed"`
			Error string   `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			return memory.Errorf(memory.CodeInternal, "the mem0 driver wrote %.200q", line)
		}
		switch {
		case msg.Error != "":
			return memory.Errorf(memory.CodeInternal, "mem0: %s", msg.Error)
		case msg.Embed != nil:
			vecs, err := m.emb.Embed(ctx, msg.Embed)
			if err != nil {
				return err
			}
			if err := m.p.send(map[string]any{"vectors": vecs}); err != nil {
				return err
			}
		default:
			return json.Unmarshal(line, resp)
		}
	}
}

func (m *mem0Peer) version() string {
	return fmt.Sprintf("mem0ai %s (node %s, better-sqlite3 %s), infer:false, vector store \"memory\"",
		m.versions["mem0ai"], m.versions["node"], m.versions["better-sqlite3"])
}

func (m *mem0Peer) ingest(ctx context.Context, d *LoCoMo) error {
	for _, s := range d.Samples {
		for _, sess := range s.Sessions {
			for _, t := range sess.Turns {
				var ok struct{}
				if err := m.call(ctx, map[string]string{"op": "add", "user": s.ID, "text": t.Content(), "dia": t.DiaID}, &ok); err != nil {
					return err
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (m *mem0Peer) search(ctx context.Context, c Case, k int) ([]string, error) {
	var r struct {
		Dias    []string `json:"dias"`
		Ms      float64  `json:"ms"`
		EmbedMs float64  `json:"embedMs"`
	}
	if err := m.call(ctx, map[string]any{"op": "search", "user": c.SampleID, "query": c.Query, "k": k}, &r); err != nil {
		return nil, err
	}
	m.engine = append(m.engine, time.Duration(r.Ms*float64(time.Millisecond)))
	m.embed = append(m.embed, time.Duration(r.EmbedMs*float64(time.Millisecond)))
	return r.Dias, nil
}

func (m *mem0Peer) close() {
	m.p.send(map[string]string{"op": "close"})
	m.p.close()
}

// mcpMemoryPeer drives the official MCP memory server over its stdio
// JSON-RPC. Every conversation's speakers are entities named
// "<sample>:<speaker>" in one memory file (the same data size as cairn's
// one database); each turn is an observation "<dia_id> | <speaker>: <text>"
// (the id keeps equal texts apart, since the server drops an entity's
// duplicate observations, and maps results back to turns). search_nodes
// returns whole entities, unranked: the ranking used is the order
// returned (entities in file order, their observations in insertion order,
// that is chronological), keeping only the question's conversation.
type mcpMemoryPeer struct {
	p        *lineProc
	id       int
	keywords bool
	ver      string
}

func startMCPMemory(ctx context.Context, o PeersOptions, keywords bool) (*mcpMemoryPeer, error) {
	name := "mcp-memory"
	if keywords {
		name += "-kw"
	}
	file := filepath.Join(o.Dir, name+".jsonl")
	os.Remove(file)
	server := filepath.Join(o.Dir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	p, err := startLineProc(ctx, o.Dir, name+".log", []string{"MEMORY_FILE_PATH=" + file}, o.Node, server)
	if err != nil {
		return nil, err
	}
	m := &mcpMemoryPeer{p: p, keywords: keywords, ver: "@modelcontextprotocol/server-memory " + installedVersion(o.Dir, "@modelcontextprotocol/server-memory")}
	if _, err := m.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "cairn-bench-peers", "version": "1"}}); err != nil {
		p.close()
		return nil, err
	}
	if err := p.send(map[string]string{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		p.close()
		return nil, err
	}
	return m, nil
}

func (m *mcpMemoryPeer) call(method string, params any) (json.RawMessage, error) {
	m.id++
	if err := m.p.send(map[string]any{"jsonrpc": "2.0", "id": m.id, "method": method, "params": params}); err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "writing to the MCP memory server: %v; its log: %s", err, m.p.logTail())
	}
	for {
		line, err := m.p.read()
		if err != nil {
			return nil, err
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil || msg.ID == nil || *msg.ID != m.id {
			continue // a notification or a log line
		}
		if msg.Error != nil {
			return nil, memory.Errorf(memory.CodeInternal, "MCP memory server: %s: %s", method, msg.Error.Message)
		}
		var res struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(msg.Result, &res) == nil && res.IsError {
			text := ""
			if len(res.Content) > 0 {
				text = res.Content[0].Text
			}
			return nil, memory.Errorf(memory.CodeInternal, "MCP memory server: %s failed: %.300s", method, text)
		}
		return msg.Result, nil
	}
}

func (m *mcpMemoryPeer) tool(name string, args any) (json.RawMessage, error) {
	return m.call("tools/call", map[string]any{"name": name, "arguments": args})
}

func (m *mcpMemoryPeer) version() string {
	if m.keywords {
		return m.ver + ", search_nodes once per keyword"
	}
	return m.ver + ", search_nodes with the question"
}

type mcpEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

func (m *mcpMemoryPeer) ingest(ctx context.Context, d *LoCoMo) error {
	for _, s := range d.Samples {
		var speakers []string
		for _, sess := range s.Sessions {
			for _, t := range sess.Turns {
				if !slices.Contains(speakers, t.Speaker) {
					speakers = append(speakers, t.Speaker)
				}
			}
		}
		var ents []mcpEntity
		for _, sp := range speakers {
			ents = append(ents, mcpEntity{Name: s.ID + ":" + sp, EntityType: "person", Observations: []string{}})
		}
		if _, err := m.tool("create_entities", map[string]any{"entities": ents}); err != nil {
			return err
		}
		// One add_observations a session, as an agent saving a
		// conversation would batch it.
		for _, sess := range s.Sessions {
			var obs []map[string]any
			for _, sp := range speakers {
				var contents []string
				for _, t := range sess.Turns {
					if t.Speaker == sp {
						contents = append(contents, t.DiaID+" | "+t.Content())
					}
				}
				if len(contents) > 0 {
					obs = append(obs, map[string]any{"entityName": s.ID + ":" + sp, "contents": contents})
				}
			}
			if _, err := m.tool("add_observations", map[string]any{"observations": obs}); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *mcpMemoryPeer) searchNodes(query string) ([]mcpEntity, error) {
	raw, err := m.tool("search_nodes", map[string]string{"query": query})
	if err != nil {
		return nil, err
	}
	var res struct {
		Structured struct {
			Entities []mcpEntity `json:"entities"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, memory.Errorf(memory.CodeInternal, "MCP memory server: search_nodes answered %.200q", raw)
	}
	return res.Structured.Entities, nil
}

func (m *mcpMemoryPeer) search(ctx context.Context, c Case, k int) ([]string, error) {
	prefix := c.SampleID + ":"
	queries := []string{c.Query}
	if m.keywords {
		queries = Keywords(c.Query)
	}
	// Entities in the order first returned; with keywords, the entities
	// returned by more keywords first (stable).
	var order []string
	hits := map[string]int{}
	ents := map[string]mcpEntity{}
	for _, q := range queries {
		found, err := m.searchNodes(q)
		if err != nil {
			return nil, err
		}
		for _, e := range found {
			if !strings.HasPrefix(e.Name, prefix) {
				continue // another conversation
			}
			if _, seen := ents[e.Name]; !seen {
				order = append(order, e.Name)
				ents[e.Name] = e
			}
			hits[e.Name]++
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return hits[b] - hits[a] })
	var out []string
	for _, name := range order {
		for _, o := range ents[name].Observations {
			if id, _, ok := strings.Cut(o, " | "); ok {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

func (m *mcpMemoryPeer) close() { m.p.close() }

// stopwords are left out of the keyword queries of mcp-memory-kw.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
	before being below between both but by can could did do does doing down during each few for from further had has
	have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself
	no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that
	the their theirs them themselves then there these they this those through to too under until up very was we were
	what when where which while who whom why will with would you your yours yourself yourselves`) {
		m[w] = true
	}
	return m
}()

// Keywords splits a question into the lower-case words an agent would
// search for one by one: letters and digits, stopwords and words shorter
// than three characters left out, each once, in order.
func Keywords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' }) {
		w = strings.TrimSuffix(strings.Trim(w, "'"), "'s")
		if len([]rune(w)) < 3 || stopwords[w] || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// PeersChart draws recall@k against k, one line per system.
func PeersChart(r PeersReport) Chart {
	c := Chart{Title: fmt.Sprintf("LoCoMo recall@k, %d questions", r.Questions), XLabel: "k (turns returned)", YLabel: "recall@k", YMin: 0, YMax: 1}
	for _, s := range r.Systems {
		ser := Series{Name: s.System}
		for _, k := range r.Ks {
			ser.X = append(ser.X, float64(k))
			ser.Y = append(ser.Y, s.Recall[strconv.Itoa(k)])
		}
		c.Series = append(c.Series, ser)
	}
	return c
}

// PeersTable renders the report as an aligned text table (Markdown).
func PeersTable(r PeersReport) string {
	var b strings.Builder
	head := []string{"system"}
	for _, k := range r.Ks {
		head = append(head, fmt.Sprintf("R@%d", k))
	}
	head = append(head, "MRR", "p50 ms", "p99 ms", "ingest s", "returned")
	rows := [][]string{head}
	for _, s := range r.Systems {
		row := []string{s.System}
		for _, k := range r.Ks {
			row = append(row, fmt.Sprintf("%.3f", s.Recall[strconv.Itoa(k)]))
		}
		row = append(row, fmt.Sprintf("%.3f", s.MRR), fmtMs(s.P50Ms), fmtMs(s.P99Ms), fmt.Sprintf("%.1f", s.IngestSeconds), fmt.Sprintf("%.0f", s.Returned))
		rows = append(rows, row)
	}
	width := make([]int, len(head))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], len(cell))
		}
	}
	line := func(row []string) {
		b.WriteString("|")
		for i, cell := range row {
			if i == 0 {
				fmt.Fprintf(&b, " %-*s |", width[i], cell)
			} else {
				fmt.Fprintf(&b, " %*s |", width[i], cell)
			}
		}
		b.WriteString("\n")
	}
	line(rows[0])
	b.WriteString("|")
	for i, w := range width {
		if i == 0 {
			b.WriteString(" " + strings.Repeat("-", w) + " |")
		} else {
			b.WriteString(" " + strings.Repeat("-", w-1) + ": |")
		}
	}
	b.WriteString("\n")
	for _, row := range rows[1:] {
		line(row)
	}
	fmt.Fprintln(&b)
	for _, s := range r.Systems {
		fmt.Fprintf(&b, "- %s: %s\n", s.System, s.Version)
	}
	return b.String()
}

func fmtMs(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f", ms)
	default:
		return fmt.Sprintf("%.2f", ms)
	}
}
