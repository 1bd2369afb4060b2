package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// KillReport is the kill -9 loop's tally: writers of each face killed at
// random moments, each kill followed by a check of the database by a new
// process.
type KillReport struct {
	Faces []KillFace `json:"faces"`
	// Trials is the number of SIGKILLs delivered to a running process.
	Trials int `json:"trials"`
	// Acknowledged writes were answered as done before the kill; Lost
	// is how many of them were missing afterwards (must be 0).
	Acknowledged int `json:"acknowledged"`
	Lost         int `json:"lost"`
	// HalfWritten counts records present but not as sent (must be 0).
	HalfWritten int `json:"halfWritten"`
	// InFlight writes were sent but not answered when the process died:
	// each is either whole or absent.
	InFlightPresent int `json:"inFlightPresent"`
	InFlightAbsent  int `json:"inFlightAbsent"`
	// Checks are the doctor, index and retrieval checks run after the
	// kills (one set per trial); CheckFailures must be 0.
	Checks        int `json:"checks"`
	CheckFailures int `json:"checkFailures"`
	// PendingWarnings counts doctors that warned of records waiting for a
	// vector (a kill between the write and its embedding; not a failure).
	PendingWarnings int `json:"pendingWarnings"`
	// WriterErrors counts writes answered with an error (must be 0).
	WriterErrors int     `json:"writerErrors"`
	Seconds      float64 `json:"seconds"`
}

// KillFace is one face's share of the loop.
type KillFace struct {
	Face            string `json:"face"`
	Trials          int    `json:"trials"`
	Acknowledged    int    `json:"acknowledged"`
	Lost            int    `json:"lost"`
	HalfWritten     int    `json:"halfWritten"`
	InFlightPresent int    `json:"inFlightPresent"`
	InFlightAbsent  int    `json:"inFlightAbsent"`
	WriterErrors    int    `json:"writerErrors"`
	// KilledBeforeReady counts kills that landed while the process was
	// still starting (opening the database and the index).
	KilledBeforeReady int `json:"killedBeforeReady"`
	// WindowMs is the kill window at the end: each kill landed at a
	// uniformly random moment up to this long after the writer started
	// (the window follows the measured time to start and write about a
	// dozen records).
	WindowMs float64 `json:"windowMs"`
}

// killFace is a face's state across trials.
type killFace struct {
	KillFace
	session string
	capsule string
	present []write // every write found in the database, in trial order
	// window is how long after the start a kill may land: it follows the
	// measured time to start and to write a dozen records.
	window time.Duration
}

// trial is what one kill trial's writer saw.
type trial struct {
	writes      []write
	landed      bool
	beforeReady bool
	errors      []string
	// elapsed is the writer's active time and acks its acknowledged
	// writes, to adapt the kill window.
	elapsed time.Duration
	ready   time.Duration
}

func (r *rel) killLoop(ctx context.Context) (KillReport, error) {
	start := time.Now()
	db := filepath.Join(r.o.Dir, "kill.db")
	faces := []*killFace{
		{KillFace: KillFace{Face: "cli"}, window: 300 * time.Millisecond},
		{KillFace: KillFace{Face: "mcp"}, window: 600 * time.Millisecond},
		{KillFace: KillFace{Face: "http"}, window: 800 * time.Millisecond},
	}
	eng, err := r.open(db)
	if err != nil {
		return KillReport{}, err
	}
	for _, f := range faces {
		f.session = "reliability-kill-" + f.Face
		c, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{Intent: "kill -9 trials of the " + f.Face + " writer",
			ScopeIDs: memory.Scope{SessionID: f.session, RepoID: "/reliability"}})
		if err != nil {
			eng.Close()
			return KillReport{}, err
		}
		f.capsule = c.ID
	}
	if err := eng.Close(); err != nil {
		return KillReport{}, err
	}

	var rep KillReport
	attempts := 0
	for rep.Trials < r.o.Trials {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		f := faces[rep.Trials%len(faces)]
		attempts++
		if attempts > 3*r.o.Trials+30 {
			return rep, memory.Errorf(memory.CodeInternal, "the kills keep missing: %d delivered in %d attempts", rep.Trials, attempts)
		}
		var tr trial
		var err error
		switch f.Face {
		case "cli":
			tr, err = r.cliTrial(db, f, rep.Trials)
		case "mcp":
			tr, err = r.mcpTrial(db, f, rep.Trials)
		case "http":
			tr, err = r.httpTrial(db, f, rep.Trials)
		}
		if err != nil {
			return rep, err
		}
		for _, e := range tr.errors {
			f.WriterErrors++
			rep.WriterErrors++
			r.fail("kill trial %d (%s): a write failed: %s", rep.Trials, f.Face, e)
		}
		if err := r.verifyTrial(ctx, db, f, &rep, tr); err != nil {
			return rep, err
		}
		if !tr.landed {
			continue // the writer finished before the kill; not a trial
		}
		f.Trials++
		rep.Trials++
		if tr.beforeReady {
			f.KilledBeforeReady++
		}
		f.adapt(tr)
		if rep.Trials%50 == 0 || rep.Trials == r.o.Trials {
			r.logf("   %d kills, %d writes acknowledged, %d lost", rep.Trials, rep.Acknowledged, rep.Lost)
		}
	}
	if err := r.verifyAll(ctx, db, faces, &rep); err != nil {
		return rep, err
	}
	for _, f := range faces {
		f.WindowMs = float64(f.window.Microseconds()) / 1000
		rep.Faces = append(rep.Faces, f.KillFace)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// adapt moves a face's kill window toward the time its writer takes to
// start and write about a dozen records, so kills land before, during and
// between writes.
func (f *killFace) adapt(tr trial) {
	acks := 0
	for _, w := range tr.writes {
		if w.Acked {
			acks++
		}
	}
	if acks < 2 || tr.elapsed <= 0 {
		return
	}
	per := (tr.elapsed - tr.ready) / time.Duration(acks)
	target := tr.ready + 12*per
	if f.Face == "cli" {
		target = 3 * tr.elapsed / time.Duration(acks)
	}
	f.window = (3*f.window + target) / 4
}

// killAfter kills the process p holds at a random moment of the face's
// window, once p holds one; it returns a stop function.
type killSwitch struct {
	mu      sync.Mutex
	cmd     *exec.Cmd
	pending bool // the moment came while no process ran: kill the next
	fired   bool
	timer   *time.Timer
}

func (r *rel) killSwitch(window time.Duration) *killSwitch {
	k := &killSwitch{}
	r.mu.Lock()
	d := time.Duration(r.rng.Int64N(int64(window) + 1))
	r.mu.Unlock()
	k.timer = time.AfterFunc(d, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.fired = true
		if k.cmd == nil || k.cmd.Process.Kill() != nil {
			k.pending = true
		}
	})
	return k
}

// set names the running process (nil between processes).
func (k *killSwitch) set(c *exec.Cmd) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cmd = c
	if c != nil && k.pending {
		if c.Process.Kill() == nil {
			k.pending = false
		}
	}
}

// done notes that c ended. A kill sent to a process that had already
// exited (a zombie not yet reaped takes the signal without effect) is
// sent again to the next process.
func (k *killSwitch) done(c *exec.Cmd) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cmd = nil
	if k.fired && !killed(c.ProcessState) {
		k.pending = true
	}
}

func (k *killSwitch) stop() { k.timer.Stop() }

// cliTrial runs `cairn log` processes one after another, each writing one
// record, until the kill lands on one.
func (r *rel) cliTrial(db string, f *killFace, n int) (trial, error) {
	var tr trial
	ks := r.killSwitch(f.window)
	defer ks.stop()
	t0 := time.Now()
	for i := 0; ; i++ {
		if i > 200 {
			return tr, memory.Errorf(memory.CodeInternal, "cairn log: 200 runs without the kill landing")
		}
		w := r.newWrite(fmt.Sprintf("cli%d", n), i)
		c := r.cmd(db, nil, "--json", "log", "--id", w.ID, "--kind", "message",
			"--scope", "session="+f.session+",repo=/reliability", "-")
		c.Stdin = strings.NewReader(w.Content)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		if err := r.start(c); err != nil {
			return tr, err
		}
		ks.set(c)
		err := r.wait(c)
		ks.done(c)
		if killed(c.ProcessState) {
			tr.writes = append(tr.writes, w)
			tr.landed = true
			tr.elapsed = time.Since(t0)
			return tr, nil
		}
		if err != nil {
			tr.errors = append(tr.errors, fmt.Sprintf("cairn log: %v: %.300s", err, errb.String()))
			tr.writes = append(tr.writes, w)
			continue
		}
		var o memory.Observation
		if json.Unmarshal(out.Bytes(), &o) != nil || o.ID != w.ID {
			tr.errors = append(tr.errors, fmt.Sprintf("cairn log answered %.200q", out.String()))
		} else {
			w.Acked = true
		}
		tr.writes = append(tr.writes, w)
	}
}

// mcpTrial starts `cairn mcp` and writes through it, two calls in flight
// at a time, until the kill lands.
func (r *rel) mcpTrial(db string, f *killFace, n int) (trial, error) {
	var tr trial
	c := r.cmd(db, nil, "mcp")
	in, err := c.StdinPipe()
	if err != nil {
		return tr, err
	}
	outPipe, err := c.StdoutPipe()
	if err != nil {
		return tr, err
	}
	t0 := time.Now()
	if err := r.start(c); err != nil {
		return tr, err
	}
	ks := r.killSwitch(f.window)
	defer ks.stop()
	ks.set(c)

	mk := &mcpKill{tr: &tr, writes: map[int]*write{}, slots: make(chan struct{}, 2),
		readerDone: make(chan struct{}), ready: make(chan struct{})}
	go mk.readReplies(outPipe, t0)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cairn-reliability","version":"1"}}}`)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		mk.sendCalls(in, func(i int) write { return r.newWrite(fmt.Sprintf("mcp%d", n), i) }, f.session)
	}()
	r.wait(c)
	in.Close()
	<-mk.readerDone
	<-writerDone
	mk.mu.Lock()
	defer mk.mu.Unlock()
	tr.landed = killed(c.ProcessState)
	if !tr.landed {
		return tr, memory.Errorf(memory.CodeInternal, "cairn mcp ended by itself: %v", c.ProcessState)
	}
	tr.elapsed = time.Since(t0)
	tr.beforeReady = tr.ready == 0
	for _, id := range mk.order {
		tr.writes = append(tr.writes, *mk.writes[id])
	}
	return tr, nil
}

// mcpKill is an MCP kill trial's calls in flight and what their answers
// say.
type mcpKill struct {
	mu     sync.Mutex
	tr     *trial
	writes map[int]*write // by JSON-RPC id
	order  []int
	// slots holds a token per call in flight; readerDone closes when the
	// answers end, ready when the session is initialised.
	slots             chan struct{}
	readerDone, ready chan struct{}
}

// readReplies reads the session's answers until they end: the
// initialisation's, then each log call's (acknowledging its write).
func (mk *mcpKill) readReplies(outPipe io.Reader, t0 time.Time) {
	defer close(mk.readerDone)
	out := bufio.NewReaderSize(outPipe, 1<<20)
	for {
		line, err := out.ReadString('\n')
		if err != nil {
			return
		}
		var rep rpcReply
		if json.Unmarshal([]byte(line), &rep) != nil || rep.ID == nil {
			continue
		}
		if *rep.ID == 0 {
			mk.mu.Lock()
			mk.tr.ready = time.Since(t0)
			mk.mu.Unlock()
			close(mk.ready)
			continue
		}
		mk.mu.Lock()
		w := mk.writes[*rep.ID]
		switch {
		case w == nil:
		case rep.Error != nil || rep.Result == nil || rep.Result.IsError:
			mk.tr.errors = append(mk.tr.errors, fmt.Sprintf("mcp log: %.300s", line))
		default:
			var o memory.Observation
			if json.Unmarshal(rep.Result.StructuredContent, &o) != nil || o.ID != w.ID {
				mk.tr.errors = append(mk.tr.errors, fmt.Sprintf("mcp log answered %.200s", line))
			} else {
				w.Acked = true
			}
		}
		mk.mu.Unlock()
		select {
		case <-mk.slots:
		default:
		}
	}
}

// sendCalls, once the session is ready, sends log calls of the writes
// next gives, as slots free up, until the answers end.
func (mk *mcpKill) sendCalls(in io.Writer, next func(i int) write, session string) {
	select {
	case <-mk.ready:
	case <-mk.readerDone:
		return
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := 1; ; i++ {
		select {
		case mk.slots <- struct{}{}:
		case <-mk.readerDone:
			return
		}
		w := next(i)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call",
			"params": map[string]any{"name": "log", "arguments": logArgs(w, session)}})
		mk.mu.Lock()
		mk.writes[i] = &w
		mk.order = append(mk.order, i)
		mk.mu.Unlock()
		if _, err := in.Write(append(b, '\n')); err != nil {
			return
		}
	}
}

// httpTrial starts `cairn serve` and writes through it with three
// concurrent clients until the kill lands.
func (r *rel) httpTrial(db string, f *killFace, n int) (trial, error) {
	var tr trial
	c := r.cmd(db, nil, "serve", "--addr", "127.0.0.1:0")
	stderr, err := c.StderrPipe()
	if err != nil {
		return tr, err
	}
	t0 := time.Now()
	if err := r.start(c); err != nil {
		return tr, err
	}
	ks := r.killSwitch(f.window)
	defer ks.stop()
	ks.set(c)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- "http://" + strings.TrimSuffix(m[1], ")")
			}
		}
		close(addr)
	}()
	exited := make(chan struct{})
	go func() { r.wait(c); close(exited) }()

	var mu sync.Mutex
	var all []*write
	base, ok := <-addr
	if ok {
		tr.ready = time.Since(t0)
		tp := &http.Transport{MaxIdleConnsPerHost: 4}
		client := &http.Client{Transport: tp, Timeout: time.Minute}
		var wg sync.WaitGroup
		for cl := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					w := r.newWrite(fmt.Sprintf("http%dc%d", n, cl), i)
					body, _ := json.Marshal(logArgs(w, f.session))
					mu.Lock()
					all = append(all, &w)
					mu.Unlock()
					res, err := client.Post(base+"/v1/observations", "application/json", bytes.NewReader(body))
					if err != nil {
						return // the server died: w is in flight
					}
					var o memory.Observation
					dec := json.NewDecoder(res.Body).Decode(&o)
					res.Body.Close()
					mu.Lock()
					switch {
					case res.StatusCode == http.StatusCreated && dec == nil && o.ID == w.ID:
						w.Acked = true
					case dec != nil && res.StatusCode == http.StatusCreated:
						// The answer was cut by the kill: the write is in
						// flight (committed or not).
					default:
						tr.errors = append(tr.errors, fmt.Sprintf("POST /v1/observations: %d", res.StatusCode))
					}
					mu.Unlock()
					if res.StatusCode != http.StatusCreated {
						return
					}
				}
			}()
		}
		<-exited
		wg.Wait()
		tp.CloseIdleConnections()
	}
	<-exited
	tr.landed = killed(c.ProcessState)
	if !tr.landed {
		return tr, memory.Errorf(memory.CodeInternal, "cairn serve ended by itself: %v", c.ProcessState)
	}
	tr.elapsed = time.Since(t0)
	tr.beforeReady = !ok
	for _, w := range all {
		tr.writes = append(tr.writes, *w)
	}
	return tr, nil
}

// verifyTrial checks the database after a kill, in a new engine, as the
// next process would find it: every acknowledged write whole, every write
// in flight whole or absent, the capsule holding exactly what was
// written, the doctor content, the retrieval index's files sound and
// answering.
func (r *rel) verifyTrial(ctx context.Context, db string, f *killFace, rep *KillReport, tr trial) error {
	eng, err := r.open(db)
	if err != nil {
		r.fail("kill trial %d (%s): the database does not open: %v", rep.Trials, f.Face, err)
		rep.CheckFailures++
		return nil
	}
	defer eng.Close()
	var found []write
	for _, w := range tr.writes {
		o, err := eng.Observation(ctx, w.ID)
		switch {
		case memory.CodeOf(err) == memory.CodeNotFound && w.Acked:
			f.Lost++
			rep.Lost++
			r.fail("kill trial %d (%s): acknowledged write %s is missing", rep.Trials, f.Face, w.ID)
		case memory.CodeOf(err) == memory.CodeNotFound:
			f.InFlightAbsent++
			rep.InFlightAbsent++
		case err != nil:
			return err
		case o.Content != w.Content || o.Kind != memory.KindMessage || o.Scope.SessionID != f.session:
			f.HalfWritten++
			rep.HalfWritten++
			r.fail("kill trial %d (%s): %s is not as written (%d of %d bytes)", rep.Trials, f.Face, w.ID, len(o.Content), len(w.Content))
		default:
			found = append(found, w)
			if w.Acked {
				f.Acknowledged++
				rep.Acknowledged++
			} else {
				f.InFlightPresent++
				rep.InFlightPresent++
			}
		}
	}
	f.present = append(f.present, found...)
	rep.Checks++
	failed := func(format string, args ...any) {
		rep.CheckFailures++
		r.fail("kill trial %d (%s): "+format, append([]any{rep.Trials, f.Face}, args...)...)
	}

	// The capsule: every record written joined it, once, in order of
	// commit (concurrent HTTP writers commit in any order).
	c, err := eng.Capsule(ctx, f.capsule)
	if err != nil {
		return err
	}
	if len(c.ObservationIDs) != len(f.present) {
		failed("capsule %s holds %d observations; %d were written", f.capsule, len(c.ObservationIDs), len(f.present))
	} else {
		tail := map[string]bool{}
		for _, id := range c.ObservationIDs[len(c.ObservationIDs)-len(found):] {
			tail[id] = true
		}
		for _, w := range found {
			if !tail[w.ID] {
				failed("capsule %s lacks %s among its last members", f.capsule, w.ID)
			}
		}
	}

	bad, warns, err := r.doctor(ctx, eng)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		failed("doctor: %s", strings.Join(bad, "; "))
	}
	for _, w := range warns {
		if strings.HasPrefix(w, "vectors") {
			rep.PendingWarnings++
		}
	}
	if err := eng.VerifyIndex(ctx); err != nil {
		failed("the retrieval index's files: %v", memory.Detail(err))
	}
	// The index answers: the newest record of the face is found by its
	// own word.
	if len(f.present) > 0 {
		w := f.present[len(f.present)-1]
		res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: w.Token, ScopeIDs: memory.Scope{SessionID: f.session}, MaxCandidates: ptrTo(5)})
		hit := false
		for _, c := range res.Candidates {
			hit = hit || c.Entity.ID() == w.ID
		}
		if err != nil {
			failed("retrieve %s: %v", w.Token, err)
		} else if !hit {
			failed("retrieve %s did not find %s", w.Token, w.ID)
		}
	}
	return nil
}

// verifyAll checks the whole database after the loop: nothing but what
// was written, everything acknowledged, each capsule exactly its face's
// records, and the real `cairn doctor` and `cairn retrieve` agree.
func (r *rel) verifyAll(ctx context.Context, db string, faces []*killFace, rep *KillReport) error {
	eng, err := r.open(db)
	if err != nil {
		return err
	}
	written := map[string]write{}
	for _, f := range faces {
		for _, w := range f.present {
			written[w.ID] = w
		}
	}
	var exported bytes.Buffer
	if _, err := eng.Export(ctx, &exported); err != nil {
		eng.Close()
		return err
	}
	seen := 0
	sc := bufio.NewScanner(&exported)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec memory.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			eng.Close()
			return err
		}
		if rec.Observation == nil {
			continue
		}
		seen++
		w, ok := written[rec.Observation.ID]
		if !ok || w.Content != rec.Observation.Content {
			rep.CheckFailures++
			r.fail("after the loop: observation %s was not written as it is", rec.Observation.ID)
		}
	}
	if seen != len(written) {
		rep.CheckFailures++
		r.fail("after the loop: %d observations in the database; %d were found after their trials", seen, len(written))
	}
	for _, f := range faces {
		c, err := eng.Capsule(ctx, f.capsule)
		if err != nil {
			eng.Close()
			return err
		}
		members := map[string]bool{}
		for _, id := range c.ObservationIDs {
			if members[id] {
				rep.CheckFailures++
				r.fail("after the loop: %s joined capsule %s twice", id, f.capsule)
			}
			members[id] = true
		}
		for _, w := range f.present {
			if !members[w.ID] {
				rep.CheckFailures++
				r.fail("after the loop: %s is not in capsule %s", w.ID, f.capsule)
			}
		}
	}
	if err := eng.Close(); err != nil {
		return err
	}
	rep.Checks++
	if err := r.cliDoctor(db); err != nil {
		rep.CheckFailures++
		r.fail("after the loop: %v", err)
	}
	if out, err := r.cmd(db, nil, "index", "verify").CombinedOutput(); err != nil {
		rep.CheckFailures++
		r.fail("after the loop: cairn index verify: %v: %.300s", err, out)
	}
	for _, f := range faces {
		if len(f.present) == 0 {
			continue
		}
		w := f.present[len(f.present)/2]
		out, err := r.cmd(db, nil, "--json", "retrieve", "--scope", "session="+f.session, "--max-candidates", "5", w.Token).Output()
		if err != nil || !found(out, w.ID) {
			rep.CheckFailures++
			r.fail("after the loop: cairn retrieve %s did not find %s: %v", w.Token, w.ID, err)
		}
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
