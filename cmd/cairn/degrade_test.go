package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/embedtest"
	"github.com/cairnhq/cairn/memory"
)

// cliEnv runs the command line against db with env over the environment
// and returns stdout, stderr and the exit code.
func cliEnv(t *testing.T, db string, env map[string]string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errw bytes.Buffer
	a := &app{in: strings.NewReader(stdin), out: &out, err: &errw, env: env}
	full := append([]string{"--db", db, "--now", "2026-03-04T10:00:00Z"}, args...)
	code := runApp(context.Background(), a, full)
	return out.String(), errw.String(), code
}

// The command line against a real remote embedder (configured by the
// settings' environment: provider, URL, model, dimension, a short
// timeout), failing each way and working: writes succeed; retrieve
// degrades, and says so, only when the embedder fails; inner-voice and
// reembed exit 5 with embedder_unavailable; nothing printed, logs
// included, shows the embedder's address, path or answer, or Go's error
// texts.
func TestRemoteEmbedderCLI(t *testing.T) {
	for _, mode := range append(embedtest.Failing, embedtest.Working) {
		t.Run(string(mode), func(t *testing.T) {
			// Each command is a new process with its own embedder, which
			// waits out the provider's retries: the modes run side by side.
			t.Parallel()
			srv := embedtest.Start(t, mode, 16)
			down := mode != embedtest.Working
			env := srv.Env()
			env["SURR_ENABLE_INNER_VOICE"] = "1"
			db := filepath.Join(t.TempDir(), "cairn.db")
			run := func(wantCode int, args ...string) (string, string) {
				t.Helper()
				stdin := ""
				if args[0] == "import" {
					var lines []string
					for _, text := range embedtest.Birds[1:] {
						b, _ := json.Marshal(map[string]any{"kind": "command", "content": text, "scopeIds": map[string]string{"repoId": embedtest.Repo}})
						lines = append(lines, string(b))
					}
					stdin = strings.Join(lines, "\n")
				}
				out, errs, code := cliEnv(t, db, env, stdin, args...)
				if code != wantCode {
					t.Errorf("cairn %s: exit %d; want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, out, errs)
				}
				for what, text := range map[string]string{"stdout": out, "stderr": errs} {
					if leaks := srv.Leaks(text); len(leaks) > 0 {
						t.Errorf("cairn %s: %s shows %q: %s", args[0], what, leaks, text)
					}
				}
				return out, errs
			}

			run(0, "log", "--kind", "command", "--scope", "repo="+embedtest.Repo, embedtest.Birds[0])
			run(0, "import", "-")
			out, _ := run(0, "retrieve", "--json", "--scope", "repo="+embedtest.Repo, embedtest.Query)
			var res cairn.RetrieveResult
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("retrieve --json: %v: %s", err, out)
			}
			human, _ := run(0, "retrieve", "--scope", "repo="+embedtest.Repo, embedtest.Query)
			if down {
				if res.Provenance.Degraded != memory.CodeEmbedderUnavailable || len(res.Candidates) != embedtest.Matching {
					t.Errorf("retrieve: degraded %q with %d candidates; want embedder_unavailable with the %d sharing words with the query",
						res.Provenance.Degraded, len(res.Candidates), embedtest.Matching)
				}
				for _, c := range res.Candidates {
					if c.Explanation.Degraded != memory.CodeEmbedderUnavailable {
						t.Errorf("candidate %s not marked degraded: %+v", c.Entity.ID(), c.Explanation)
					}
				}
				if !strings.Contains(human, "degraded (embedder_unavailable)") {
					t.Errorf("the human output does not say degraded:\n%s", human)
				}
			} else if res.Provenance.Degraded != "" || strings.Contains(out, "degraded") || strings.Contains(human, "degraded") {
				t.Errorf("a full answer says degraded:\n%s\n%s", out, human)
			}

			want := 0
			if down {
				want = 5
			}
			for _, args := range [][]string{{"inner-voice", embedtest.Query}, {"reembed"}, {"reembed", "--json"}} {
				_, errs := run(want, args...)
				if down && !strings.Contains(errs, "embedder_unavailable") {
					t.Errorf("cairn %s: stderr %q; want embedder_unavailable", strings.Join(args, " "), errs)
				}
			}
		})
	}
}
