package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The deploy token the fake models have the agents print: a GitHub token
// in its format, made up.
const agentSecret = "ghp_R8mKq2Vx7LtN4wZp9HcY3bJd6FsA1gUe5Tio"

// The two sessions' prompts, the command the model has the agent run and
// its answers.
const (
	sessionPrompt1 = "Print the deploy token with the vault helper."
	sessionPrompt2 = "What did we do in the last session?"
	sessionCommand = "echo deploy token: " + agentSecret
	sessionAnswer1 = "Done: the vault helper printed the deploy token."
	sessionAnswer2 = "Last session printed the deploy token."
)

// noNetwork is the environment that sends everything but loopback to a
// proxy on a port nothing listens on: the fake is the only server there
// is.
var noNetwork = []string{"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost"}

// TestClaudeCodeSessionWithAFakeModel runs whole Claude Code sessions
// (claude -p, the real CLI) against a fake Anthropic Messages API on
// loopback, with cairn's hooks installed by cairn hooks install: the
// model has Claude Code run a Bash command that prints a secret, then
// answers. cairn must record the prompt, the command with the secret
// redacted, the answer and a closed capsule with its summary; and the
// next session's request to the model must carry the context cairn's
// session-start hook gave it.
func TestClaudeCodeSessionWithAFakeModel(t *testing.T) {
	agentsReady(t, "@anthropic-ai/claude-code")
	claude, err := filepath.Abs(filepath.Join("agents", "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	w := newAgentWorld(t)
	model := newFakeAnthropic(t, func(ar anthropicRequest, body string) anthropicTurn {
		switch {
		case !ar.hasTool("Bash"):
			// A request of Claude Code's own (a title, a summary).
			return anthropicTurn{text: "Deploy token"}
		case strings.Contains(body, sessionPrompt2):
			// (Its context names the first session's prompt.)
			return anthropicTurn{text: sessionAnswer2}
		case ar.toolResults():
			return anthropicTurn{text: sessionAnswer1}
		case strings.Contains(body, sessionPrompt1):
			return anthropicTurn{toolName: "Bash", toolInput: map[string]any{"command": sessionCommand, "description": "Print the deploy token"}}
		default:
			return anthropicTurn{text: "Nothing to do."}
		}
	})
	w.run(t, "--db", w.db, "hooks", "install", "claude-code", "--bin", w.cairn)
	env := w.env(append([]string{"ANTHROPIC_BASE_URL=" + model.srv.URL, "ANTHROPIC_API_KEY=sk-ant-api03-not-a-key-this-is-a-test",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, noNetwork...)...)
	checkAgentSessions(t, w, model, "claude-code", func(prompt string) string {
		return w.runAgent(t, model, env, claude, "-p", prompt, "--dangerously-skip-permissions")
	}, func(r modelRequest) bool { return strings.HasSuffix(r.Path, "/v1/messages") })
	if files := filesHolding(filepath.Join(w.home, ".claude"), agentSecret); len(files) == 0 {
		t.Errorf("the secret never reached Claude Code's own transcript: the command the test means to run did not run")
	}
}

// TestGeminiCLISessionWithAFakeModel runs the same two sessions with the
// real Gemini CLI (gemini -p --yolo) against a fake Gemini API on
// loopback (GOOGLE_GEMINI_BASE_URL), with cairn's hooks installed.
func TestGeminiCLISessionWithAFakeModel(t *testing.T) {
	agentsReady(t, "@google/gemini-cli")
	gemini, err := filepath.Abs(filepath.Join("agents", "node_modules", ".bin", "gemini"))
	if err != nil {
		t.Fatal(err)
	}
	w := newAgentWorld(t)
	model := newFakeGemini(t, func(g geminiRequest, name, body string) geminiTurn {
		switch {
		case !g.hasFunction("run_shell_command"):
			// A request of the CLI's own: its model router's and its
			// next-speaker check's, which want JSON.
			return geminiTurn{text: `{"complexity_reasoning": "one command", "complexity_score": 10, "reasoning": "the model answered", "next_speaker": "user"}`}
		case strings.Contains(body, sessionPrompt2):
			return geminiTurn{text: sessionAnswer2}
		case g.functionResponses():
			return geminiTurn{text: sessionAnswer1}
		case strings.Contains(body, sessionPrompt1):
			return geminiTurn{callName: "run_shell_command", callArgs: map[string]any{"command": sessionCommand, "description": "Print the deploy token"}}
		default:
			return geminiTurn{text: "Nothing to do."}
		}
	})
	// The folder is trusted (Gemini CLI runs no hook in an untrusted one)
	// and the API key is the way in.
	os.MkdirAll(filepath.Join(w.home, ".gemini"), 0o755)
	trusted, _ := json.Marshal(map[string]string{w.repo: "TRUST_FOLDER"})
	os.WriteFile(filepath.Join(w.home, ".gemini", "trustedFolders.json"), trusted, 0o644)
	os.WriteFile(filepath.Join(w.home, ".gemini", "settings.json"), []byte(`{"security": {"auth": {"selectedType": "gemini-api-key"}}}`), 0o644)
	w.user.own(t, w.home)
	w.run(t, "--db", w.db, "hooks", "install", "gemini-cli", "--bin", w.cairn)
	env := w.env(append([]string{"GOOGLE_GEMINI_BASE_URL=" + model.srv.URL, "GEMINI_API_KEY=not-a-key-this-is-a-test",
		"GEMINI_CLI_NO_RELAUNCH=true", "NO_COLOR=1"}, noNetwork...)...)
	checkAgentSessions(t, w, model, "gemini-cli", func(prompt string) string {
		return w.runAgent(t, model, env, gemini, "-p", prompt, "--yolo")
	}, func(r modelRequest) bool { return strings.HasSuffix(r.Path, ":streamGenerateContent") })
}

// runAgent runs an agent's CLI as the world's user to its end and returns
// what it printed; it must succeed.
func (w agentWorld) runAgent(t *testing.T, model *fakeModel, env []string, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	defer cancel()
	cmd := w.user.command(ctx, bin, args...)
	cmd.Dir, cmd.Env = w.repo, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s\nrequests:\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.String(), errb.String(), model.dump())
	}
	return out.String()
}

// checkAgentSessions runs the two sessions with run and checks what cairn
// recorded of the first and what the second's request to the model
// (main says which requests are the conversation's) carried.
func checkAgentSessions(t *testing.T, w agentWorld, model *fakeModel, agent string, run func(prompt string) string, main func(modelRequest) bool) {
	t.Helper()
	if out := run(sessionPrompt1); !strings.Contains(out, sessionAnswer1) {
		t.Fatalf("the agent printed %q, not the fake model's answer\nrequests:\n%s", out, model.dump())
	}
	// The hooks' last writes (the session's end) may come after the CLI
	// exits: wait for the closed capsule, then for the spool's writer.
	dump := w.waitExport(t, `"status":"closed"`)
	w.hooks().waitSpool(t)
	dump = w.run(t, "export")
	for _, want := range []string{
		`"content":"user: ` + sessionPrompt1 + `"`,
		`"agentId":"` + agent + `"`,
		`"content":"assistant: ` + sessionAnswer1 + `"`,
		`"kind":"command"`,
		`"content":"$ echo deploy token: [REDACTED:github-token]`,
		`"status":"closed"`,
		"Asked: " + sessionPrompt1,
	} {
		if !strings.Contains(dump, want) {
			t.Errorf("cairn did not record %s:\n%s", want, dump)
		}
	}
	// The secret reached cairn (the command and its output) and is
	// nowhere in what cairn keeps: the database, its log, the spool.
	if strings.Contains(dump, agentSecret) {
		t.Errorf("the secret is in cairn's export")
	}
	if files := filesHolding(filepath.Dir(w.db), agentSecret); len(files) > 0 {
		t.Errorf("the secret is in cairn's files %v", files)
	}

	// The next session: its request to the model carries what cairn's
	// session-start hook printed, the last session's summary among it.
	before := len(model.requests())
	if out := run(sessionPrompt2); !strings.Contains(out, sessionAnswer2) {
		t.Fatalf("the agent printed %q in the second session\nrequests:\n%s", out, model.dump())
	}
	var first string
	for _, r := range model.requests()[before:] {
		if main(r) && strings.Contains(r.Body, sessionPrompt2) {
			first = r.Body
			break
		}
	}
	if first == "" {
		t.Fatalf("no request of the second session carries its prompt\nrequests:\n%s", model.dump())
	}
	for _, want := range []string{"cairn: memory of " + w.repo, "Asked: " + sessionPrompt1} {
		if !strings.Contains(first, want) {
			t.Errorf("the second session's request to the model lacks cairn's context (%q):\n%s", want, first)
		}
	}
	if strings.Contains(first, agentSecret) {
		t.Errorf("the context cairn gave the second session holds the secret")
	}
	w.waitExport(t, sessionPrompt2)
	w.hooks().waitSpool(t)
}

// waitExport waits until cairn's export holds want and returns it.
func (w agentWorld) waitExport(t *testing.T, want string) string {
	t.Helper()
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		dump := w.run(t, "export")
		if strings.Contains(dump, want) {
			return dump
		}
		if time.Since(start) > stuck {
			t.Fatalf("cairn's export does not hold %q after %v:\n%s", want, stuck, dump)
		}
	}
}
