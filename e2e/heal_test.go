package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// downEmbedder points cairn at an OpenAI-compatible embedder nobody
// listens for: each write is stored, its vector is not.
var downEmbedder = []string{"CAIRN_EMBED_PROVIDER=openai", "CAIRN_EMBED_URL=http://127.0.0.1:9/v1", "CAIRN_EMBED_MODEL=m",
	"CAIRN_EMBED_DIM=100", "CAIRN_EMBED_API_KEY=k", "CAIRN_EMBED_TIMEOUT=1s"}

// run runs the cairn binary on db and returns its output and exit code.
func run(t *testing.T, db string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(cairnBin, append([]string{"--db", db}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestServeHealsPendingRecords: records written while the embedder was
// down stay pending (cairn doctor warns, exit 0); a cairn serve embeds them
// in the background, says so on standard error and counts them in
// /metrics, and doctor then finds nothing pending.
func TestServeHealsPendingRecords(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	const n = 2
	for i := range n {
		if out, code := run(t, db, downEmbedder, "log", fmt.Sprintf("deploy %d failed: registry timeout", i)); code != 0 {
			t.Fatalf("cairn log with the embedder down: exit %d\n%s", code, out)
		}
	}
	if out, code := run(t, db, nil, "doctor"); code != 0 || !strings.Contains(out, "WARN  vectors") || !strings.Contains(out, fmt.Sprintf("%d pending", n)) {
		t.Fatalf("doctor with pending records: exit %d\n%s", code, out)
	}

	base, lines := serveLogged(t, db)
	deadline := time.After(stuck)
	for healed := false; !healed; {
		select {
		case l := <-lines:
			healed = strings.Contains(l, "embedded pending records in the background") && strings.Contains(l, fmt.Sprintf("records=%d", n))
		case <-deadline:
			t.Fatal("cairn serve did not say it embedded the pending records")
		}
	}
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{fmt.Sprintf("cairn_embeddings_healed_total %d", n), "cairn_embeddings_pending 0"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if out, code := run(t, db, nil, "doctor"); code != 0 || strings.Contains(out, "WARN") || !strings.Contains(out, fmt.Sprintf("%d records embedded", n)) {
		t.Fatalf("doctor after healing: exit %d\n%s", code, out)
	}
}

// TestMCPHealsPendingRecords: a `cairn mcp` an agent keeps open embeds
// what was written while the embedder was down, without being asked.
func TestMCPHealsPendingRecords(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	if out, code := run(t, db, downEmbedder, "log", "the registry times out under load"); code != 0 {
		t.Fatalf("cairn log with the embedder down: exit %d\n%s", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(cairnBin, "--db", db, "mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	for {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "status", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("status: %v %v", err, res)
		}
		var st cairn.Status
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		if st.Embedder.Pending == 0 && st.Embedder.InSpace == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("cairn mcp left the record pending: %+v", st.Embedder)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
