package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cli runs the cairn binary and returns its standard output.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(cairnBin, args...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// mcpRetrieve asks a running cairn mcp and returns the candidates' texts.
func mcpRetrieve(t *testing.T, ctx context.Context, s *mcp.ClientSession, query string) []string {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "retrieve", Arguments: map[string]any{"query": query, "maxCandidates": 5}})
	if err != nil || res.IsError {
		t.Fatalf("retrieve %q: %v %+v", query, err, res)
	}
	var r struct {
		Candidates []struct {
			Entity struct {
				Content string `json:"content"`
			} `json:"entity"`
		} `json:"candidates"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &r)
	var out []string
	for _, c := range r.Candidates {
		out = append(out, c.Entity.Content)
	}
	return out
}

func holds(texts []string, word string) bool {
	for _, s := range texts {
		if strings.Contains(s, word) {
			return true
		}
	}
	return false
}

// TestReadYourWritesAcrossProcesses: a cairn mcp started before the
// writes, and a new cairn retrieve, find what other processes log at
// once, before and after other processes write the index's files out and
// merge them.
func TestReadYourWritesAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "agents.db")
	for i := range 20 {
		cli(t, "--db", db, "log", "--kind", "message", fmt.Sprintf("warm-up note %d about the deploy pipeline", i))
	}
	cli(t, "--db", db, "retrieve", "deploy pipeline") // writes the index's files
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(cairnBin, "--db", db, "mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	if got := mcpRetrieve(t, ctx, session, "deploy pipeline"); len(got) == 0 {
		t.Fatal("the running server finds nothing")
	}
	var words []string
	for round := range 6 {
		word := fmt.Sprintf("zebra%dquokka", round)
		words = append(words, word)
		cli(t, "--db", db, "log", "--kind", "message", "the "+word+" flag broke the deploy pipeline")
		if got := mcpRetrieve(t, ctx, session, word); !holds(got, word) {
			t.Fatalf("round %d: the running cairn mcp does not find %s just logged by another process: %v", round, word, got)
		}
		if got := cli(t, "--db", db, "retrieve", word); !strings.Contains(got, word) {
			t.Fatalf("round %d: a new cairn retrieve does not find %s:\n%s", round, word, got)
		}
		if round%2 == 1 {
			// Another process writes the files out (a segment per import)
			// and merges them; the running server moves to the new files.
			var lines []string
			for i := range 400 {
				lines = append(lines, fmt.Sprintf(`{"kind":"message","content":"bulk %d-%d about the release train"}`, round, i))
			}
			bulk := filepath.Join(dir, fmt.Sprintf("bulk%d.jsonl", round))
			os.WriteFile(bulk, []byte(strings.Join(lines, "\n")), 0o600)
			cli(t, "--db", db, "import", bulk)
			cli(t, "--db", db, "index", "optimize")
		}
		for _, w := range words {
			if got := mcpRetrieve(t, ctx, session, w); !holds(got, w) {
				t.Fatalf("round %d: after the files changed, the running server lost %s: %v", round, w, got)
			}
		}
	}
	var st struct {
		Generation int `json:"generation"`
		Segments   int `json:"segments"`
		Behind     int `json:"behind"`
	}
	json.Unmarshal([]byte(cli(t, "--db", db, "--json", "index", "status")), &st)
	if st.Generation < 4 {
		t.Fatalf("the files were committed %d times; the test meant more", st.Generation)
	}
	if out := cli(t, "--db", db, "index", "verify"); !strings.Contains(out, "ok") {
		t.Fatalf("verify: %s", out)
	}
}
