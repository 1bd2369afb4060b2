package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/webui"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// app is the state the commands share: the I/O streams, the global flags
// and the engine, opened on first use.
type app struct {
	in       io.Reader
	out, err io.Writer

	dbFlag  string
	nowFlag string
	json    bool

	eng *cairn.Engine
	bar *progressbar.ProgressBar
	// longRunning says the command serves (cairn serve, cairn mcp): the
	// retrieval index is maintained, and pending records embedded, in the
	// background. background says it is itself background maintenance.
	longRunning, background bool
	// network says the engine serves the network faces (cairn serve,
	// cairn ui): code_index indexes only under CAIRN_CODE_ROOTS.
	network bool
	// logInfo makes info the default log level of the engine too (cairn
	// serve), rather than warn.
	logInfo bool
	// env overrides the environment for settings a flag sets.
	env map[string]string
	// started says the command got past cobra's argument and flag checks.
	started bool
	// errlog, set by the servers, keeps recent warnings and errors for
	// the web page.
	errlog *webui.ErrorLog
	// timer times a hook's steps (cairn hook).
	timer *hookTimer
}

// setenv makes a flag's value win over the environment variable k.
func (a *app) setenv(k, v string) {
	if a.env == nil {
		a.env = map[string]string{}
	}
	a.env[k] = v
}

// getenv reads a setting: a flag's value, else the environment.
func (a *app) getenv(k string) string {
	if v, ok := a.env[k]; ok {
		return v
	}
	return os.Getenv(k)
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	return runApp(ctx, &app{in: in, out: out, err: errw}, args)
}

// runApp executes the CLI with a's streams and settings.
func runApp(ctx context.Context, a *app, args []string) int {
	root := newRootCmd(a)
	if cmd, _, err := root.Find(args); err == nil && cmd.Name() == "hook" && cmd.Parent() == root {
		return hookExit(a.err, func() int { return execute(ctx, a, root, args) })
	}
	return execute(ctx, a, root, args)
}

// hookExit runs a hook and gives the agent an exit code that never blocks
// it: 0, or 1 for any failure. Claude Code reads exit 2 (which a usage
// error or a Go panic would give) as "block this prompt or tool call",
// and a settings file committed to a project may run another version of
// cairn, whose flags differ.
func hookExit(errw io.Writer, run func() int) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(errw, "cairn: hook failed (internal error: %v); the agent goes on\n", r)
			code = 1
		}
	}()
	return min(run(), 1)
}

// execute runs the root command with args and returns the exit code.
func execute(ctx context.Context, a *app, root *cobra.Command, args []string) int {
	in, out, errw := a.in, a.out, a.err
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errw)
	err := root.ExecuteContext(ctx)
	a.finishProgress()
	if err == nil {
		a.startBackgroundOptimize(ctx)
	}
	if a.eng != nil {
		if cerr := a.eng.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return a.fail(err)
	}
	return 0
}

// Exit codes: 0 success; 1 a failure of cairn or its database; 2 bad input
// (invalid_params, or a usage error); 3 not_found; 4 conflict; 5 a disabled
// feature or an unavailable embedder.
func exitCode(err error) int {
	switch memory.CodeOf(err) {
	case memory.CodeInvalidParams:
		return 2
	case memory.CodeNotFound:
		return 3
	case memory.CodeConflict:
		return 4
	case memory.CodeFeatureDisabled, memory.CodeEmbedderUnavailable:
		return 5
	}
	return 1
}

// fail prints err (as {"error": {...}} with --json) and returns its exit code.
func (a *app) fail(err error) int {
	var silent *silentError
	if errors.As(err, &silent) {
		return exitCode(err)
	}
	var me *memory.Error
	switch {
	case errors.As(err, &me):
	case !a.started:
		// Untyped errors before a command runs come from argument
		// parsing (cobra, pflag) and speak of the arguments.
		err = memory.Errorf(memory.CodeInvalidParams, "%s", err.Error())
	default:
		// Any other untyped error is a bug: its text stays in the log.
		err = memory.Wrap(memory.CodeInternal, err, "internal error (CAIRN_LOG=debug shows the detail)")
	}
	if log, lerr := a.logger(slog.LevelWarn); lerr == nil {
		log.Debug("error detail", "detail", memory.Detail(err))
	}
	pub := memory.Public(err)
	if a.json {
		b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": string(pub.Code), "message": pub.Message}})
		fmt.Fprintln(a.err, string(b))
	} else {
		fmt.Fprintf(a.err, "cairn: %s\n", pub.Error())
	}
	return exitCode(err)
}

// engine opens the database on first use.
func (a *app) engine() (*cairn.Engine, error) {
	if a.eng != nil {
		return a.eng, nil
	}
	opts, err := a.options()
	if err != nil {
		return nil, err
	}
	path := cairn.ResolvePath(a.dbFlag)
	if err := a.checkDBDir(path); err != nil {
		return nil, err
	}
	eng, err := cairn.Open(path, opts)
	if err != nil {
		return nil, err
	}
	a.eng = eng
	return eng, nil
}

// checkDBDir refuses a database file the user named (--db or $CAIRN_DB)
// whose directory does not exist: a mistyped path would otherwise create
// the directory and an empty database, and a retrieval from it answer
// "no candidates" as if memory were empty. The default path's directory is
// cairn's own and is created on first use.
func (a *app) checkDBDir(path string) error {
	if cairn.IsPostgres(path) || (a.dbFlag == "" && a.getenv(cairn.EnvDB) == "") {
		return nil
	}
	dir := filepath.Dir(path)
	switch fi, err := os.Stat(dir); {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return memory.Errorf(memory.CodeInvalidParams, "the database path %s is inside %s, which is a file, not a directory", path, dir)
	default:
		return memory.Errorf(memory.CodeNotFound, "no directory %s for the database %s: check the path (cairn creates the database file, not its directory)", dir, path)
	}
}

// options reads the start-up settings from the environment (cairn config
// prints them) and applies the global flags. Clamped or replaced settings
// are logged as warnings.
func (a *app) options() (*cairn.Options, error) {
	set, err := cairn.SettingsFromEnv(a.getenv)
	if err != nil {
		return nil, err
	}
	opts, err := set.Options()
	if err != nil {
		return nil, err
	}
	level := slog.LevelWarn
	if a.logInfo {
		level = slog.LevelInfo
	}
	log, err := a.logger(level)
	if err != nil {
		return nil, err
	}
	for _, w := range set.Warnings {
		log.Warn("setting adjusted", "detail", w)
	}
	opts.Logger = log
	opts.IndexBackground = a.longRunning
	opts.HealEmbeddings = a.longRunning
	opts.CodeRootsOnly = a.network
	if !a.background {
		opts.IndexProgress = a.stagedProgress()
	}
	if a.nowFlag != "" {
		t, err := parseTime(a.nowFlag)
		if err != nil {
			return nil, memory.Errorf(memory.CodeInvalidParams, "--now: %v", err)
		}
		opts.Now = func() time.Time { return t }
	}
	return opts, nil
}

// parseTime reads RFC 3339 ("2024-02-05T00:00:00Z"), a date
// ("2024-02-05", UTC midnight) or Unix milliseconds.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (want RFC 3339, YYYY-MM-DD or Unix milliseconds)", s)
}

// parseTTL reads a Go duration ("90m", "2h") or a number of days ("7d").
func parseTTL(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (want 90m, 2h or 7d)", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (want 90m, 2h or 7d)", s)
	}
	return dur, nil
}

// emit writes v as indented JSON.
func (a *app) emit(v any) error {
	enc := json.NewEncoder(a.out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return memory.Wrap(memory.CodeInternal, err, "writing the output failed")
	}
	return nil
}

// readText returns the arguments joined by spaces, or standard input when
// there are none or the only one is "-".
func (a *app) readText(args []string, what string) (string, error) {
	if len(args) > 0 && !(len(args) == 1 && args[0] == "-") {
		return strings.Join(args, " "), nil
	}
	if f, ok := a.in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return "", memory.Errorf(memory.CodeInvalidParams, "give the %s as arguments or on standard input", what)
	}
	b, err := io.ReadAll(io.LimitReader(a.in, memory.DefaultMaxContentBytes*4))
	if err != nil {
		return "", memory.Wrap(memory.CodeInvalidParams, err, "reading standard input failed")
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// isTerminal reports whether w is a terminal (progress bars go only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// usageArgs wraps a cobra argument check so its complaint is a typed
// invalid_params error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return memory.Errorf(memory.CodeInvalidParams, "%v (see %s --help)", err, cmd.CommandPath())
		}
		return nil
	}
}
