package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/memory"
)

// HooksOptions configure `cairn bench hooks`.
type HooksOptions struct {
	// Dir holds the generated database; Size is its record count.
	Dir  string
	Size int
	Seed uint64
	// Calls is how many tool-call hooks are timed (after Warmup untimed
	// ones); SessionStarts how many session-start hooks.
	Calls, Warmup, SessionStarts int
	// Binary is the cairn executable the hooks run.
	Binary string
	// Progress receives one line per step.
	Progress io.Writer
}

// Latency is a latency distribution in milliseconds: wall time, and the
// CPU time (user and system) the process used, which other work on the
// machine changes much less.
type Latency struct {
	N      int     `json:"n"`
	P50    float64 `json:"p50Ms"`
	P95    float64 `json:"p95Ms"`
	P99    float64 `json:"p99Ms"`
	Max    float64 `json:"maxMs"`
	CPUP50 float64 `json:"cpuP50Ms"`
	CPUP95 float64 `json:"cpuP95Ms"`
}

// timing is one process's wall and CPU time.
type timing struct{ wall, cpu time.Duration }

func latencyOf(ts []timing) Latency {
	if len(ts) == 0 {
		return Latency{}
	}
	var wall, cpu []time.Duration
	for _, t := range ts {
		wall, cpu = append(wall, t.wall), append(cpu, t.cpu)
	}
	return Latency{N: len(ts), P50: Percentile(wall, 0.50), P95: Percentile(wall, 0.95), P99: Percentile(wall, 0.99), Max: Percentile(wall, 1),
		CPUP50: Percentile(cpu, 0.50), CPUP95: Percentile(cpu, 0.95)}
}

// HooksReport is what `cairn bench hooks` measured.
type HooksReport struct {
	Machine Machine `json:"machine"`
	// Records in the database before the hooks ran; BuildSeconds to
	// generate, embed and index them.
	Records      int     `json:"records"`
	BuildSeconds float64 `json:"buildSeconds"`
	// ProcessStart is a cairn process that parses its arguments and
	// exits (cairn hook --help): the floor under every hook.
	ProcessStart Latency `json:"processStart"`
	// ToolHook is a PostToolUse hook (a shell command and its output)
	// from start to exit, as the agent waits for it; PromptHook a
	// UserPromptSubmit hook; SessionStart a session-start hook that
	// renders context.
	ToolHook   Latency `json:"toolHook"`
	PromptHook Latency `json:"promptHook"`
	// ToolHookDirect is the same tool-call hook writing the database in
	// its own process (CAIRN_HOOK_WRITE=direct), run in turn with the
	// default (background writer) so load weighs on both alike.
	ToolHookDirect Latency `json:"toolHookDirect"`
	// DrainMs is how long the background writer took, after the last
	// timed hook, to empty the spool.
	DrainMs      float64 `json:"drainMs"`
	SessionStart Latency `json:"sessionStart"`
	// Steps are the tool hook's steps inside the process, median ms:
	// read, build (parse, redact, decide), spool, open (the database),
	// write (one transaction, fsync), unspool, close.
	Steps       map[string]float64 `json:"stepsMedianMs"`
	StepsDirect map[string]float64 `json:"stepsDirectMedianMs"`
	// Written counts the observations the timed hooks added; Spooled the
	// batches left in the spool at the end (0: every write landed).
	Written int `json:"written"`
	Spooled int `json:"spooled"`
	// ContextTokens is the size of the last session-start context.
	ContextTokens int     `json:"contextTokens"`
	Load1Before   float64 `json:"load1Before"`
	Load1After    float64 `json:"load1After"`
	Seconds       float64 `json:"seconds"`
}

// Hooks builds a database of o.Size generated records, then runs the real
// cairn binary as a coding agent's hooks would, one process per event, and
// times them.
func Hooks(ctx context.Context, o HooksOptions) (HooksReport, error) {
	start := time.Now()
	rep := HooksReport{Machine: machine(), Steps: map[string]float64{}, StepsDirect: map[string]float64{}}
	if o.Size < 1 || o.Calls < 1 || o.Binary == "" || o.Dir == "" {
		return rep, memory.Errorf(memory.CodeInvalidParams, "hooks bench: size, calls, binary and dir are required")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	db := filepath.Join(o.Dir, "hooks.db")
	repoDir := filepath.Join(o.Dir, "shop")
	if err := os.MkdirAll(filepath.Join(repoDir, ".git"), 0o755); err != nil {
		return rep, memory.Wrap(memory.CodeInternal, err, "creating the repository: %v", err)
	}
	os.WriteFile(filepath.Join(repoDir, ".git", "HEAD"), []byte("ref: refs/heads/fix/checkout\n"), 0o644)

	fmt.Fprintf(o.Progress, "generating %d records\n", o.Size)
	t0 := time.Now()
	if err := buildHooksDB(ctx, db, o); err != nil {
		return rep, err
	}
	rep.BuildSeconds = time.Since(t0).Seconds()
	before, err := observationCount(ctx, db)
	if err != nil {
		return rep, err
	}
	rep.Records = o.Size
	hr := &hookRun{ctx: ctx, o: o, db: db, repoDir: repoDir, session: "bench-session-1",
		env: append(os.Environ(), "CAIRN_DB="+db, "CAIRN_HOOK_TIMING=1", "HOME="+o.Dir)}
	if err := hr.processStarts(&rep); err != nil {
		return rep, err
	}
	rep.Load1Before = load1()
	// The session opens first, as in a real session.
	if _, _, _, err := hr.run(false, hr.payload("SessionStart", 0), "hook", "SessionStart", "--agent", "claude-code"); err != nil {
		return rep, err
	}
	if err := hr.toolCalls(&rep); err != nil {
		return rep, err
	}
	if err := hr.sessionStarts(&rep); err != nil {
		return rep, err
	}
	rep.Load1After = load1()
	after, err := observationCount(ctx, db)
	if err != nil {
		return rep, err
	}
	rep.Written = after - before
	files, err := capture.Spool{Dir: capture.SpoolDir(db)}.List()
	if err != nil {
		return rep, err
	}
	rep.Spooled = len(files)
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// hookRun runs hooks as an agent would: a process each, in the
// repository, on the bench's database.
type hookRun struct {
	ctx     context.Context
	o       HooksOptions
	db      string
	repoDir string
	env     []string
	session string // the session the payloads name
}

// run runs cairn with args and payload on its standard input (direct:
// the hook writes to the database itself, not through the spool); it
// returns its timing, standard output and standard error.
func (hr *hookRun) run(direct bool, payload []byte, args ...string) (timing, []byte, []byte, error) {
	cmd := exec.CommandContext(hr.ctx, hr.o.Binary, args...)
	cmd.Env = hr.env
	if direct {
		cmd.Env = append(slices.Clone(hr.env), "CAIRN_HOOK_WRITE=direct")
	}
	cmd.Dir = hr.repoDir
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t := time.Now()
	err := cmd.Run()
	d := timing{wall: time.Since(t)}
	if cmd.ProcessState != nil {
		d.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return d, nil, nil, memory.Wrap(memory.CodeInternal, err, "cairn %s: %v: %s", strings.Join(args, " "), err, lastLines(errb.String(), 5))
	}
	return d, out.Bytes(), errb.Bytes(), nil
}

// payload is Claude Code's payload of a hook event, the i-th of its kind.
func (hr *hookRun) payload(event string, i int) []byte {
	m := map[string]any{"session_id": hr.session, "cwd": hr.repoDir, "hook_event_name": event,
		"transcript_path": filepath.Join(hr.o.Dir, "t.jsonl"), "permission_mode": "default"}
	switch event {
	case "PostToolUse":
		var outText strings.Builder
		for l := 0; l < 20; l++ {
			fmt.Fprintf(&outText, "ok  \tgithub.com/acme/shop/pkg%d\t0.%03ds\n", (i+l)%97, (i*7+l)%1000)
		}
		m["tool_name"], m["tool_use_id"] = "Bash", fmt.Sprintf("toolu_%06d", i)
		m["tool_input"] = map[string]string{"command": fmt.Sprintf("go test ./pkg%d/...", i%97), "description": "run the tests"}
		m["tool_response"] = map[string]any{"stdout": outText.String(), "stderr": "", "interrupted": false, "isImage": false}
	case "UserPromptSubmit":
		m["prompt"] = fmt.Sprintf("Step %d: make the checkout tests pass again and explain the failure.", i)
	case "SessionStart":
		m["source"] = "startup"
	}
	b, _ := json.Marshal(m)
	return b
}

// processStarts times the start of a process that does nothing.
func (hr *hookRun) processStarts(rep *HooksReport) error {
	o := hr.o
	fmt.Fprintf(o.Progress, "process start: %d runs\n", o.Calls)
	var starts []timing
	for i := 0; i < o.Calls+o.Warmup; i++ {
		d, _, _, err := hr.run(false, nil, "hook", "--help")
		if err != nil {
			return err
		}
		if i >= o.Warmup {
			starts = append(starts, d)
		}
	}
	rep.ProcessStart = latencyOf(starts)
	return nil
}

// spooled lists the spool's files.
func (hr *hookRun) spooled() ([]string, error) {
	return capture.Spool{Dir: capture.SpoolDir(hr.db)}.List()
}

// toolCalls times the tool-call hooks (through the spool and direct) and
// the prompt hooks, with their steps, then how long the spool takes to
// drain.
func (hr *hookRun) toolCalls(rep *HooksReport) error {
	o := hr.o
	fmt.Fprintf(o.Progress, "tool-call hooks: %d timed after %d untimed\n", o.Calls, o.Warmup)
	var tools, prompts, directs []timing
	steps, stepsDirect := map[string][]time.Duration{}, map[string][]time.Duration{}
	addSteps := func(into map[string][]time.Duration, stderr []byte) {
		for name, ms := range hookSteps(stderr) {
			into[name] = append(into[name], time.Duration(ms*float64(time.Millisecond)))
		}
	}
	for i := 0; i < o.Warmup+o.Calls; i++ {
		// The background writer of the last hook is done before a direct
		// hook runs: the two never compete for the database.
		if err := hr.waitSpool(); err != nil {
			return err
		}
		d, _, stderr, err := hr.run(true, hr.payload("PostToolUse", -1-i), "hook", "PostToolUse", "--agent", "claude-code")
		if err != nil {
			return err
		}
		if i >= o.Warmup {
			directs = append(directs, d)
			addSteps(stepsDirect, stderr)
		}
		if i%10 == 0 {
			d, _, _, err = hr.run(false, hr.payload("UserPromptSubmit", i), "hook", "UserPromptSubmit", "--agent", "claude-code")
			if err != nil {
				return err
			}
			if i >= o.Warmup {
				prompts = append(prompts, d)
			}
		}
		d, _, stderr, err = hr.run(false, hr.payload("PostToolUse", i), "hook", "PostToolUse", "--agent", "claude-code")
		if err != nil {
			return err
		}
		if i < o.Warmup {
			continue
		}
		tools = append(tools, d)
		addSteps(steps, stderr)
	}
	drained, err := hr.drain()
	if err != nil {
		return err
	}
	rep.DrainMs = drained
	rep.ToolHook, rep.PromptHook, rep.ToolHookDirect = latencyOf(tools), latencyOf(prompts), latencyOf(directs)
	for name, ds := range steps {
		rep.Steps[name] = Percentile(ds, 0.5)
	}
	for name, ds := range stepsDirect {
		rep.StepsDirect[name] = Percentile(ds, 0.5)
	}
	return nil
}

// waitSpool waits (a minute at most) for the spool to be empty.
func (hr *hookRun) waitSpool() error {
	for t := time.Now(); time.Since(t) < time.Minute; time.Sleep(2 * time.Millisecond) {
		files, err := hr.spooled()
		if err != nil || len(files) == 0 {
			return err
		}
	}
	return nil
}

// drain waits for the background writers to empty the spool and
// returns how long it took, in milliseconds. The bound only keeps a
// stuck writer from hanging the run (what is left is reported as
// spooled); a loaded machine drains well within it.
func (hr *hookRun) drain() (float64, error) {
	drainStart := time.Now()
	for {
		files, err := hr.spooled()
		if err != nil {
			return 0, err
		}
		if len(files) == 0 || time.Since(drainStart) > 5*time.Minute {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return float64(time.Since(drainStart).Microseconds()) / 1000, nil
}

// sessionStarts times the session-start hooks, each of a new session,
// and measures the context they inject.
func (hr *hookRun) sessionStarts(rep *HooksReport) error {
	o := hr.o
	fmt.Fprintf(o.Progress, "session-start hooks: %d\n", o.SessionStarts)
	var ss []timing
	for i := 0; i < o.SessionStarts; i++ {
		hr.session = fmt.Sprintf("bench-session-start-%d", i)
		d, out, _, err := hr.run(false, hr.payload("SessionStart", i), "hook", "SessionStart", "--agent", "claude-code")
		if err != nil {
			return err
		}
		ss = append(ss, d)
		var res struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if json.Unmarshal(out, &res) == nil {
			rep.ContextTokens = (len([]rune(res.HookSpecificOutput.AdditionalContext)) + 3) / 4
		}
	}
	rep.SessionStart = latencyOf(ss)
	return nil
}

// hookSteps reads the step timings a hook printed (CAIRN_HOOK_TIMING).
func hookSteps(stderr []byte) map[string]float64 {
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		var t struct {
			HookTiming map[string]float64 `json:"hookTiming"`
		}
		if json.Unmarshal(sc.Bytes(), &t) == nil && t.HookTiming != nil {
			return t.HookTiming
		}
	}
	return nil
}

// buildHooksDB generates, embeds and indexes the database, as a user's
// would be after a while.
func buildHooksDB(ctx context.Context, path string, o HooksOptions) error {
	if _, err := os.Stat(path); err == nil {
		return memory.Errorf(memory.CodeConflict, "%s already exists; give an empty directory", path)
	}
	now := genNow(o.Size)
	eng, err := cairn.Open(path, &cairn.Options{Now: func() time.Time { return now }, SkipEmbedOnWrite: true})
	if err != nil {
		return err
	}
	defer eng.Close()
	gen := NewMemoryGen(o.Seed, o.Size)
	for !gen.Done() {
		if err := eng.ImportDump(ctx, gen.Next(min(DefaultScaleBatch, o.Size-gen.sent))); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Progress, "embedding and indexing\n")
	if _, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil); err != nil {
		return err
	}
	_, err = eng.RebuildIndex(ctx)
	return err
}

func observationCount(ctx context.Context, path string) (int, error) {
	eng, err := cairn.Open(path, nil)
	if err != nil {
		return 0, err
	}
	defer eng.Close()
	st, err := eng.Stats(ctx)
	return st.Observations, err
}

// WriteHooksTable renders the report as Markdown.
func WriteHooksTable(w io.Writer, r HooksReport) {
	fmt.Fprintf(w, "| what (%d records, one process per call) | calls | p50 ms | p95 ms | p99 ms | max ms | CPU p50 ms | CPU p95 ms |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n", r.Records)
	row := func(name string, l Latency) {
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", name, l.N, l.P50, l.P95, l.P99, l.Max, l.CPUP50, l.CPUP95)
	}
	row("process start (`cairn hook --help`)", r.ProcessStart)
	row("tool call (PostToolUse, Bash), background writer (default)", r.ToolHook)
	row("tool call, written in the hook's process (`CAIRN_HOOK_WRITE=direct`)", r.ToolHookDirect)
	row("prompt (UserPromptSubmit)", r.PromptHook)
	row("session start (context rendered)", r.SessionStart)
	steps := func(m map[string]float64) string {
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		order := []string{"read", "build", "spool", "handoff", "open", "write", "unspool", "close"}
		slices.SortFunc(names, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %.2f", n, m[n]))
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(w, "\nTool-call hook steps inside the process, median ms: background %s; direct %s. The background writer emptied the spool %.0f ms after the last hook.\n", steps(r.Steps), steps(r.StepsDirect), r.DrainMs)
	fmt.Fprintf(w, "Written: %d observations; left in the spool: %d. Session-start context: %d tokens. Load average %.2f before, %.2f after; built in %.0f s.\n",
		r.Written, r.Spooled, r.ContextTokens, r.Load1Before, r.Load1After, r.BuildSeconds)
}
