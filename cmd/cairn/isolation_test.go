package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/isotest"
	"github.com/cairnhq/cairn/internal/pgtest"
	"github.com/cairnhq/cairn/memory"
)

// isoNow is the isolation stores' clock, as --now gives it.
const isoNow = 1_800_000_000_000

// isoCLI runs the command line on a store of the isolation model: the
// same settings as the engine that wrote it (env over the environment),
// the same clock.
type isoCLI struct {
	db  string
	env map[string]string
}

func (c isoCLI) getenv(k string) string {
	if v, ok := c.env[k]; ok {
		return v
	}
	return os.Getenv(k)
}

// run runs one command with --json and returns its output; any exit but
// 0 fails t.
func (c isoCLI) run(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errw bytes.Buffer
	a := &app{in: strings.NewReader(""), out: &out, err: &errw, env: c.env}
	full := append([]string{"--db", c.db, "--now", strconv.Itoa(isoNow), "--json"}, args...)
	if code := runApp(context.Background(), a, full); code != 0 {
		t.Fatalf("cairn %s: exit %d: %s", strings.Join(args, " "), code, errw.String())
	}
	return out.Bytes()
}

// scopeArgs renders a scope as the --scope flag ("" for none).
func scopeArgs(s memory.Scope) []string {
	if s == (memory.Scope{}) {
		return nil
	}
	return []string{"--scope", s.String()}
}

// commands renders each of a question's tool calls as the command that
// makes it.
func commands(q isotest.Question) map[string][]string {
	r := q.Retrieve
	retrieve := append([]string{"retrieve", "--provider", r.Provider, "--max-candidates", strconv.Itoa(*r.MaxCandidates)}, scopeArgs(r.ScopeIDs)...)
	if r.IncludeRedacted {
		retrieve = append(retrieve, "--include-redacted")
	}
	iv := q.InnerVoice
	voice := []string{"inner-voice", "--top-k", strconv.Itoa(*iv.TopK)}
	if iv.IncludePrivate {
		voice = append(voice, "--private")
	}
	th := q.Thoughts
	thoughts := append([]string{"thoughts", "--limit", strconv.Itoa(th.Limit)}, scopeArgs(th.ScopeIDs)...)
	if th.IncludePrivate {
		thoughts = append(thoughts, "--private")
	}
	ak := q.Ask
	if *ak.Save || ak.Mode != "none" {
		panic("an isolation question's inner_voice writes nothing")
	}
	ask := []string{"inner-voice", "ask", "--no-save", "--mode", ak.Mode, "--top-k", strconv.Itoa(*ak.TopK),
		"--sim-thresh", strconv.FormatFloat(*ak.SimThresh, 'g', -1, 64)}
	if ak.IncludePrivate {
		ask = append(ask, "--private")
	}
	return map[string][]string{
		isotest.ToolRetrieve:   append(retrieve, "--", r.Query),
		isotest.ToolInnerVoice: append(voice, "--", iv.Query),
		isotest.ToolThoughts:   thoughts,
		isotest.ToolAsk:        append(ask, "--", ak.Content),
	}
}

// testIsolationCLI builds stores of the isolation model with an engine
// and replays the random questions through the command line (cairn
// retrieve, inner-voice, thoughts, inner-voice ask, each --json): every
// answer must be the engine's, and pass the model's checks.
func testIsolationCLI(t *testing.T, stores, questions int, where func(t *testing.T, seed uint64) string) {
	ctx := context.Background()
	var tl isotest.Tally
	for seed := range uint64(stores) {
		c := isoCLI{db: where(t, seed), env: map[string]string{"SURR_ENABLE_INNER_VOICE": "1", "CAIRN_INDEX_DIR": filepath.Join(t.TempDir(), "index")}}
		set, err := cairn.SettingsFromEnv(c.getenv)
		if err != nil {
			t.Fatal(err)
		}
		opts, err := set.Options()
		if err != nil {
			t.Fatal(err)
		}
		now := time.UnixMilli(isoNow)
		opts.Now = func() time.Time { return now }
		eng, err := cairn.Open(c.db, opts)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 78))
		st := isotest.Build(t, eng, rng)
		for i := range questions {
			what := fmt.Sprintf("store %d, question %d", seed, i)
			q := st.Question(rng)
			cmds := commands(q)
			for _, call := range []struct {
				tool  string
				args  any
				check func(raw []byte)
			}{
				{isotest.ToolRetrieve, q.Retrieve, func(raw []byte) { st.CheckRetrieve(t, what, q.Retrieve, raw, &tl) }},
				{isotest.ToolInnerVoice, q.InnerVoice, func(raw []byte) { st.CheckInnerVoice(t, what, q.InnerVoice, raw, &tl) }},
				{isotest.ToolThoughts, q.Thoughts, func(raw []byte) { st.CheckThoughts(t, what, q.Thoughts, raw) }},
				{isotest.ToolAsk, q.Ask, func(raw []byte) { st.CheckAsk(t, what, q.Ask, raw, &tl) }},
			} {
				in, _ := json.Marshal(call.args)
				out, err := eng.CallJSON(ctx, call.tool, in)
				if err != nil {
					t.Fatalf("%s: %s %s: %v", what, call.tool, in, err)
				}
				want, _ := json.Marshal(out)
				got := c.run(t, cmds[call.tool]...)
				if !isotest.SameJSON(got, want) {
					t.Fatalf("%s: cairn %s answers otherwise than the engine's %s:\ncommand line %s\nengine       %s",
						what, strings.Join(cmds[call.tool], " "), call.tool, isotest.Short(got), isotest.Short(want))
				}
				call.check(got)
			}
		}
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tl.Exercised(t)
}

// TestIsolationPropertiesCLI: the isolation properties through the command
// line, on SQLite.
func TestIsolationPropertiesCLI(t *testing.T) {
	stores, questions := 2, 25
	if testing.Short() {
		stores, questions = 1, 8
	}
	testIsolationCLI(t, stores, questions, func(t *testing.T, seed uint64) string {
		return filepath.Join(t.TempDir(), "iso.db")
	})
}

// TestIsolationPropertiesCLIPostgres: the same on PostgreSQL (a private
// server of internal/pgtest; skipped with a message without the server's
// binaries, failed in CI).
func TestIsolationPropertiesCLIPostgres(t *testing.T) {
	stores, questions := 1, 15
	if testing.Short() {
		questions = 5
	}
	testIsolationCLI(t, stores, questions, func(t *testing.T, seed uint64) string {
		return pgtest.Shared(t).NewDatabase(t) + fmt.Sprintf("&cairn_schema=iso%d", seed)
	})
}
