package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newHooksCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install, remove or inspect cairn's capture hooks in a coding agent's settings",
		Long: `Capture hooks record what a coding agent does (prompts, tool calls, shell
commands with their exit codes, file edits as diffs, errors) as observations
scoped by the agent's session and the repository's git root, keep a capsule
per session with a summary, and hand a new session the repository's context.

Agents: claude-code (~/.claude/settings.json), gemini-cli
(~/.gemini/settings.json) and cursor (~/.cursor/hooks.json). The agent runs
'cairn hook EVENT --agent AGENT' with the event's JSON on standard input.

Secrets are redacted before anything is written ([REDACTED:kind]); files on
the deny list (.env, *.pem, ... and the repository's .cairnignore) are never
recorded. See docs/capture.md.`,
	}
	cmd.AddCommand(newHooksInstallCmd(a, true), newHooksInstallCmd(a, false), newHooksStatusCmd(a), newHooksFlushCmd(a))
	return cmd
}

// hooksTarget is where an agent's hooks go.
type hooksTarget struct {
	scope   string
	project string
}

func (t *hooksTarget) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.scope, "scope", "user", "settings file: user (every project), project (the project's shared settings) or local (Claude Code's settings.local.json)")
	cmd.Flags().StringVar(&t.project, "project", "", "the project's root for --scope project or local (default the current directory)")
}

func (t hooksTarget) path(a cairn.HookAgent) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", memory.Wrap(memory.CodeInternal, err, "finding the home directory: %v", err)
	}
	project := t.project
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return "", memory.Wrap(memory.CodeInternal, err, "finding the current directory: %v", err)
		}
	}
	return cairn.HookSettingsPath(a, cairn.HookSettingsScope(t.scope), home, project)
}

func readSettings(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", memory.Wrap(memory.CodeInvalidParams, err, "reading %s: %v", path, pathless(err))
	}
	return string(b), nil
}

func newHooksInstallCmd(a *app, install bool) *cobra.Command {
	var t hooksTarget
	var dryRun, noPrompts bool
	var bin string
	use, short := "install AGENT", "Add cairn's hooks to an agent's settings (backed up first; idempotent)"
	if !install {
		use, short = "uninstall AGENT", "Remove cairn's hooks from an agent's settings, leaving every other hook"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

The settings file is read, cairn's entries (commands that run 'cairn ... hook')
are replaced or removed, and everything else is kept in place. The old file is
copied to FILE.cairn-TIME.bak before it is replaced; --dry-run prints the diff
and changes nothing. Running it twice changes nothing the second time.`,
		Example: `  cairn hooks install claude-code --dry-run
  cairn hooks install claude-code
  cairn --db ~/work.db hooks install gemini-cli --scope project
  cairn hooks uninstall cursor`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			agent, err := cairn.ParseHookAgent(args[0])
			if err != nil {
				return err
			}
			path, err := t.path(agent)
			if err != nil {
				return err
			}
			current, err := readSettings(path)
			if err != nil {
				return err
			}
			var c cairn.HookChange
			if install {
				if bin == "" {
					if bin, err = os.Executable(); err != nil {
						return memory.Wrap(memory.CodeInternal, err, "finding the cairn binary: %v", err)
					}
				}
				db := ""
				switch {
				case cairn.IsPostgres(a.dbFlag) && cairn.DisplayPath(a.dbFlag) != a.dbFlag:
					return memory.Errorf(memory.CodeInvalidParams, "--db holds a password, which the agent's settings file would keep in clear: put it in ~/.pgpass or PGPASSWORD, or leave --db out and set CAIRN_DB in the agent's environment")
				case cairn.IsPostgres(a.dbFlag):
					db = a.dbFlag
				case a.dbFlag != "":
					if db, err = filepath.Abs(a.dbFlag); err != nil {
						return memory.Wrap(memory.CodeInvalidParams, err, "--db: %v", err)
					}
				}
				c, err = cairn.PlanHookInstall(agent, path, current, bin, db, cairn.HookInstallOptions{NoPrompts: noPrompts})
			} else {
				c, err = cairn.PlanHookUninstall(agent, path, current)
			}
			if err != nil {
				return err
			}
			if !dryRun {
				if err := cairn.ApplyHookChange(&c, time.Now()); err != nil {
					return err
				}
			}
			return a.show(map[string]any{"change": c, "dryRun": dryRun, "diff": c.Diff()}, func() error {
				switch {
				case !c.Changed && install:
					fmt.Fprintf(a.out, "%s: cairn's hooks are already installed in %s (%s)\n", agent, path, strings.Join(c.Events, ", "))
				case !c.Changed:
					fmt.Fprintf(a.out, "%s: %s has no cairn hooks\n", agent, path)
				case dryRun:
					fmt.Fprint(a.out, c.Diff())
					fmt.Fprintf(a.out, "(dry run: %s not changed)\n", path)
				default:
					verb := "installed for " + strings.Join(c.Events, ", ")
					if !install {
						verb = "removed"
					}
					fmt.Fprintf(a.out, "%s: cairn's hooks %s in %s\n", agent, verb, path)
					if c.Backup != "" {
						fmt.Fprintf(a.out, "backup: %s\n", c.Backup)
					}
					if install {
						fmt.Fprintf(a.out, "new sessions of %s now record to %s\n", agent, cairn.DisplayPath(cairn.ResolvePath(a.dbFlag)))
					}
				}
				return nil
			})
		},
	}
	t.flags(cmd)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the change as a diff and write nothing")
	if install {
		cmd.Flags().StringVar(&bin, "bin", "", "the cairn executable the hooks run (default this one)")
		cmd.Flags().BoolVar(&noPrompts, "no-prompts", false, "do not record the user's prompts")
	}
	return cmd
}

// agentStatus is what `cairn hooks status` reports for one agent.
type agentStatus struct {
	Agent     string            `json:"agent"`
	Path      string            `json:"path"`
	Exists    bool              `json:"exists"`
	Installed map[string]string `json:"installed"`
	Missing   []string          `json:"missing"`
	Error     string            `json:"error,omitempty"`
}

func newHooksStatusCmd(a *app) *cobra.Command {
	var t hooksTarget
	cmd := &cobra.Command{
		Use:   "status [AGENT]",
		Short: "Say which agents have cairn's hooks, and what waits in the spool",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			agents := cairn.HookAgents()
			if len(args) == 1 {
				ag, err := cairn.ParseHookAgent(args[0])
				if err != nil {
					return err
				}
				agents = []cairn.HookAgent{ag}
			}
			var out []agentStatus
			for _, ag := range agents {
				path, err := t.path(ag)
				if err != nil {
					return err
				}
				st := agentStatus{Agent: string(ag), Path: path, Installed: map[string]string{}, Missing: []string{}}
				text, err := readSettings(path)
				if err != nil {
					st.Error = memory.Public(err).Message
				} else {
					st.Exists = text != ""
					inst, err := cairn.InstalledHooks(ag, text)
					if err != nil {
						st.Error = "not a JSON object: " + err.Error()
					} else {
						st.Installed = inst
					}
				}
				for _, ev := range cairn.NativeHookEvents(ag) {
					if _, ok := st.Installed[ev]; !ok {
						st.Missing = append(st.Missing, ev)
					}
				}
				out = append(out, st)
			}
			db := cairn.ResolvePath(a.dbFlag)
			sp := cairn.HookSpool{Dir: cairn.SpoolDir(db)}
			spooled, err := sp.List()
			if err != nil {
				return err
			}
			rejected, err := sp.Rejected()
			if err != nil {
				return err
			}
			status := map[string]any{"agents": out, "database": cairn.DisplayPath(db), "spooled": len(spooled), "spool": cairn.SpoolDir(db),
				"rejected": len(rejected)}
			return a.show(status, func() error {
				printHooksStatus(a, out)
				fmt.Fprintf(a.out, "database: %s\n", cairn.DisplayPath(db))
				if len(spooled) > 0 {
					fmt.Fprintf(a.out, "spool: %d hook writes wait in %s (cairn hooks flush writes them)\n", len(spooled), cairn.SpoolDir(db))
				}
				if len(rejected) > 0 {
					fmt.Fprintf(a.out, "spool: %s the database refused set aside in %s\n", text.Plural(len(rejected), "hook write"), sp.RejectedDir())
				}
				return nil
			})
		},
	}
	t.flags(cmd)
	return cmd
}

// printHooksStatus writes where each agent's hooks stand.
func printHooksStatus(a *app, out []agentStatus) {
	for _, st := range out {
		switch {
		case st.Error != "":
			fmt.Fprintf(a.out, "%-12s %s: %s\n", st.Agent, st.Path, st.Error)
		case len(st.Installed) == 0:
			fmt.Fprintf(a.out, "%-12s not installed (%s)\n", st.Agent, st.Path)
		case len(st.Missing) == 0:
			fmt.Fprintf(a.out, "%-12s installed in %s for %s\n", st.Agent, st.Path, strings.Join(sortedKeys(st.Installed), ", "))
		default:
			fmt.Fprintf(a.out, "%-12s partly installed in %s: missing %s (run cairn hooks install %s)\n", st.Agent, st.Path, strings.Join(st.Missing, ", "), st.Agent)
		}
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func newHooksFlushCmd(a *app) *cobra.Command {
	var background bool
	cmd := &cobra.Command{
		Use:   "flush",
		Short: "Write the hook batches waiting in the spool (hooks start it in the background)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			db := cairn.ResolvePath(a.dbFlag)
			if background {
				return a.backgroundFlush(cmd, db)
			}
			rec, err := cairn.OpenRecorder(db, a.recorderOptions())
			if err != nil {
				return err
			}
			defer rec.Close()
			n, err := a.drainSpool(cmd, rec, cairn.HookSpool{Dir: cairn.SpoolDir(db)}, "", -1)
			batches := fmt.Sprintf("%d hook batches", n)
			if n == 1 {
				batches = "1 hook batch"
			}
			if err != nil {
				a.say("wrote %s from the spool\n", batches)
				return err
			}
			return a.show(map[string]int{"written": n}, func() error {
				fmt.Fprintf(a.out, "wrote %s from the spool\n", batches)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&background, "background", false, "run as the spool's one background writer (hooks start it): exit at once if another runs")
	cmd.Flags().MarkHidden("background")
	return cmd
}

// backgroundFlush writes the spool while it holds the spool's lock, then
// looks again after letting go, so a batch spooled while it finished is
// not left behind: either this process sees it, or the hook that spooled
// it found the lock free and started another writer.
func (a *app) backgroundFlush(cmd *cobra.Command, db string) error {
	spool := cairn.HookSpool{Dir: cairn.SpoolDir(db)}
	for {
		l, ok, err := tryFlushLock(flushLockPath(spool))
		if err != nil || !ok {
			return err
		}
		rec, err := cairn.OpenRecorder(db, a.recorderOptions())
		if err != nil {
			l.release()
			return err
		}
		_, err = a.drainSpool(cmd, rec, spool, "", -1)
		rec.Close()
		l.release()
		if err != nil {
			return err
		}
		if files, err := spool.List(); err != nil || len(files) == 0 {
			return err
		}
	}
}

// recorderOptions are the lean writer's options, from the same settings
// as the engine's.
func (a *app) recorderOptions() *cairn.RecorderOptions {
	o := &cairn.RecorderOptions{}
	if set, err := cairn.SettingsFromEnv(a.getenv); err == nil {
		o.NoRedact, o.MaxContentBytes = !set.Redact, set.MaxContentBytes
	}
	if a.nowFlag != "" {
		if t, err := parseTime(a.nowFlag); err == nil {
			o.Now = func() time.Time { return t }
		}
	}
	return o
}

// drainSpool writes up to limit (negative: all) spooled batches, oldest
// first, skipping skip; it stops at the first that fails.
func (a *app) drainSpool(cmd *cobra.Command, rec *cairn.Recorder, sp cairn.HookSpool, skip string, limit int) (int, error) {
	files, err := sp.List()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		if f == skip {
			continue
		}
		if limit >= 0 && n >= limit {
			break
		}
		b, err := sp.Read(f)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // another hook wrote it meanwhile
			}
			if a.rejectBatch(sp, f, err) {
				continue
			}
			return n, err
		}
		if _, err := rec.Apply(cmd.Context(), b); err != nil {
			if a.rejectBatch(sp, f, err) {
				continue
			}
			return n, err
		}
		a.pause("after-write")
		if err := sp.Remove(f); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// rejectBatch sets a spooled batch aside when err says it can never be
// written (invalid_params: the store refuses its content, or the file is
// not a batch), so that the batches behind it are written; it says so on
// standard error. Other errors (the database busy, a full disk) leave the
// batch where it is, to be tried again.
func (a *app) rejectBatch(sp cairn.HookSpool, path string, err error) bool {
	if !memory.IsCode(err, memory.CodeInvalidParams) {
		return false
	}
	if rerr := sp.Reject(path); rerr != nil {
		return false
	}
	fmt.Fprintf(a.err, "cairn: hook batch %s set aside in %s, the database refuses it: %s\n",
		filepath.Base(path), sp.RejectedDir(), memory.Public(err).Message)
	return true
}

// hookOutput is what an agent reads on a hook's standard output: Claude
// Code and Gemini CLI take session-start context from
// hookSpecificOutput.additionalContext; Gemini CLI and Cursor want JSON
// whatever the event.
func hookOutput(agent cairn.HookAgent, native, context string) []byte {
	switch {
	case context != "":
		b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{"hookEventName": native, "additionalContext": context}})
		return b
	case agent == cairn.AgentCursor && native == "beforeSubmitPrompt":
		return []byte(`{"continue":true}`)
	case agent == cairn.AgentGeminiCLI, agent == cairn.AgentCursor:
		return []byte(`{}`)
	}
	return nil
}
