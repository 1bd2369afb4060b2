package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

// EnvCapturePrompts set to off leaves user prompts out of what hooks
// record (as --no-prompts does).
const EnvCapturePrompts = "CAIRN_CAPTURE_PROMPTS"

// envHookPause stops a hook at a named point (after-spool, after-write)
// until it is killed: the crash tests kill it there.
const envHookPause = "CAIRN_HOOK_PAUSE"

// envHookTiming, when set, makes a hook print how long each step took
// (JSON on standard error): cairn bench hooks reads it.
const envHookTiming = "CAIRN_HOOK_TIMING"

// hookTimer records the steps of one hook.
type hookTimer struct {
	on    bool
	last  time.Time
	steps map[string]float64
}

func newHookTimer() *hookTimer {
	return &hookTimer{on: os.Getenv(envHookTiming) != "", last: time.Now(), steps: map[string]float64{}}
}

// step ends a step: the time since the last one, in milliseconds.
func (t *hookTimer) step(name string) {
	if t == nil || !t.on {
		return
	}
	now := time.Now()
	t.steps[name] += float64(now.Sub(t.last).Microseconds()) / 1000
	t.last = now
}

func (t *hookTimer) report(w io.Writer) {
	if t == nil || !t.on {
		return
	}
	b, _ := json.Marshal(map[string]any{"hookTiming": t.steps})
	fmt.Fprintln(w, string(b))
}

// EnvHookWrite chooses how a hook's batch reaches the database:
// "background" (the default where file locks exist) leaves it to one
// background 'cairn hooks flush' process, so the agent waits only for the
// batch to reach the spool; "direct" writes it in the hook's own process
// before it exits.
const EnvHookWrite = "CAIRN_HOOK_WRITE"

// spoolDrainPerHook bounds how many older spooled batches one hook writes.
const spoolDrainPerHook = 20

func newHookCmd(a *app) *cobra.Command {
	var agentName string
	var noPrompts bool
	cmd := &cobra.Command{
		Use:   "hook EVENT",
		Short: "Record one coding-agent hook event read as JSON on standard input (agents run it)",
		Long: `Record one hook event. A coding agent runs this with the event's JSON on
standard input; 'cairn hooks install AGENT' sets it up. EVENT is the agent's
own event name (Claude Code: SessionStart, UserPromptSubmit, PostToolUse,
PostToolUseFailure, PreCompact, Stop, SessionEnd; Gemini CLI: SessionStart,
BeforeAgent, AfterTool, PreCompress, AfterAgent, SessionEnd; Cursor:
beforeSubmitPrompt, afterShellExecution, afterFileEdit, afterMCPExecution,
stop).

What it records is decided first, secrets redacted, and put in the spool
(DATABASE-spool/) before the database is opened; once written it leaves the
spool. A hook that cannot write (the database is busy past its timeout, the
disk is full, the process is killed) leaves its batch there, and the next hook
(or cairn hooks flush) writes it: nothing is lost, nothing is written twice.
Tool events write through a lean path that opens neither the retrieval index
nor the embedder. SessionStart prints the repository's context for the agent.

A hook never blocks the agent: it exits 0 when its batch is safe (written or
spooled) and 1 otherwise (bad input), never 2.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := a.runHook(cmd, args[0], agentName, noPrompts)
			if err == nil {
				return nil
			}
			// Exit 1, never 2: Claude Code reads exit 2 as "block this
			// prompt or tool call".
			fmt.Fprintf(a.err, "cairn: hook %s: %s\n", args[0], memory.Public(err).Message)
			return &silentError{memory.Wrap(memory.CodeInternal, err, "hook failed")}
		},
	}
	cmd.Flags().StringVar(&agentName, "agent", string(cairn.AgentClaudeCode), "the agent whose payload this is: claude-code, gemini-cli or cursor")
	cmd.Flags().BoolVar(&noPrompts, "no-prompts", false, "do not record the user's prompt (also "+EnvCapturePrompts+"=off)")
	return cmd
}

// runHook records one hook event.
func (a *app) runHook(cmd *cobra.Command, event, agentName string, noPrompts bool) error {
	tm := newHookTimer()
	defer tm.report(a.err)
	a.timer = tm
	agent, err := cairn.ParseHookAgent(agentName)
	if err != nil {
		return err
	}
	payload, err := io.ReadAll(io.LimitReader(a.in, cairn.MaxHookPayloadBytes+1))
	if err != nil {
		return memory.Wrap(memory.CodeInvalidParams, err, "reading the hook payload failed")
	}
	tm.step("read")
	ev, err := cairn.ParseHook(agent, event, payload)
	if err != nil {
		return err
	}
	now := time.Now
	if a.nowFlag != "" {
		t, err := parseTime(a.nowFlag)
		if err != nil {
			return memory.Errorf(memory.CodeInvalidParams, "--now: %v", err)
		}
		now = func() time.Time { return t }
	}
	set, err := cairn.SettingsFromEnv(a.getenv)
	if err != nil {
		return err
	}
	batch, err := cairn.BuildHookBatch(ev, cairn.HookBatchOptions{Now: now, NoRedact: !set.Redact,
		NoPrompts: noPrompts || strings.EqualFold(strings.TrimSpace(a.getenv(EnvCapturePrompts)), "off")})
	if err != nil {
		return err
	}
	tm.step("build")
	db := cairn.ResolvePath(a.dbFlag)
	spool := cairn.HookSpool{Dir: cairn.SpoolDir(db)}
	spooled, err := spool.Put(batch)
	if err != nil {
		return err
	}
	tm.step("spool")
	a.pause("after-spool")
	context, werr := a.writeHook(cmd, db, spool, spooled, batch, ev)
	if werr != nil {
		// The batch waits in the spool; the agent goes on.
		fmt.Fprintf(a.err, "cairn: hook %s kept in the spool (%s) for the next hook: %s\n", ev.Native, spooled, memory.Public(werr).Message)
	}
	if out := hookOutput(agent, ev.Native, context); out != nil {
		a.out.Write(append(out, '\n'))
	}
	return nil
}

// writeHook writes the batch (and older spooled ones) and, for a session
// start, renders the context.
func (a *app) writeHook(cmd *cobra.Command, db string, spool cairn.HookSpool, spooled string, b cairn.HookBatch, ev cairn.HookEvent) (string, error) {
	if ev.Kind == cairn.HookSessionStart {
		eng, err := a.engine()
		if err != nil {
			return "", err
		}
		if _, err := eng.ApplyCapture(cmd.Context(), b); err != nil {
			return "", err
		}
		a.pause("after-write")
		if err := spool.Remove(spooled); err != nil {
			return "", err
		}
		files, _ := spool.List()
		for _, f := range files[:min(len(files), spoolDrainPerHook)] {
			old, err := spool.Read(f)
			if err != nil {
				a.rejectBatch(spool, f, err)
				continue
			}
			if _, err := eng.ApplyCapture(cmd.Context(), old); err != nil {
				if a.rejectBatch(spool, f, err) {
					continue
				}
				break
			}
			spool.Remove(f)
		}
		c, err := eng.SessionContext(cmd.Context(), cairn.SessionContextRequest{ScopeIDs: memory.Scope{RepoID: b.Scope.RepoID, SessionID: b.Scope.SessionID}, Branch: b.Branch})
		if err != nil {
			return "", err
		}
		return c.Markdown, nil
	}
	tm := a.timer
	switch strings.ToLower(strings.TrimSpace(a.getenv(EnvHookWrite))) {
	case "", "background":
		if backgroundWrites {
			return "", a.startFlusher(db, spool)
		}
	case "direct":
	default:
		return "", memory.Errorf(memory.CodeInvalidParams, "%s=%q: want background or direct", EnvHookWrite, a.getenv(EnvHookWrite))
	}
	rec, err := cairn.OpenRecorder(db, a.recorderOptions())
	if err != nil {
		return "", err
	}
	tm.step("open")
	defer func() {
		rec.Close()
		tm.step("close")
	}()
	if _, err := rec.Apply(cmd.Context(), b); err != nil {
		return "", err
	}
	tm.step("write")
	a.pause("after-write")
	if err := spool.Remove(spooled); err != nil {
		return "", err
	}
	_, err = a.drainSpool(cmd, rec, spool, spooled, spoolDrainPerHook)
	tm.step("unspool")
	return "", err
}

// startFlusher starts a background 'cairn hooks flush' for the spool,
// unless one is running already (it takes the batch written just now:
// it looks at the spool again after it lets go of its lock).
func (a *app) startFlusher(db string, spool cairn.HookSpool) error {
	l, ok, err := tryFlushLock(flushLockPath(spool))
	if err != nil {
		return memory.Wrap(memory.CodeInternal, err, "locking the spool: %v", err)
	}
	if !ok {
		a.timer.step("handoff")
		return nil
	}
	l.release()
	exe, err := os.Executable()
	if err != nil {
		return memory.Wrap(memory.CodeInternal, err, "finding the cairn binary: %v", err)
	}
	args := []string{"--db", db, "hooks", "flush", "--background"}
	if cairn.IsPostgres(db) {
		// A connection string may hold a password: it goes to the writer
		// in its environment, not on its command line where ps shows it.
		os.Setenv(cairn.EnvDB, db)
		args = args[2:]
	}
	err = startDetached(exe, args)
	a.timer.step("handoff")
	if err != nil {
		return memory.Wrap(memory.CodeInternal, err, "starting the background writer: %v", err)
	}
	return nil
}

// flushLockPath is the lock file of a spool's background writer.
func flushLockPath(spool cairn.HookSpool) string { return spool.Dir + ".lock" }

// pause stops here when CAIRN_HOOK_PAUSE names this point: it says so on
// standard error and waits to be killed (crash tests).
func (a *app) pause(point string) {
	if os.Getenv(envHookPause) != point {
		return
	}
	fmt.Fprintf(a.err, "cairn: paused %s\n", point)
	for {
		time.Sleep(time.Hour)
	}
}
