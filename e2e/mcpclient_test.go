package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOfficialMCPClient drives cairn with a client cairn did not write: the
// official TypeScript SDK (npm @modelcontextprotocol/sdk, installed by
// .ci/run with `npm ci` in e2e/mcp-client). It initialises, lists the
// tools, calls each one and checks the results, over stdio (`cairn mcp`)
// and over streamable HTTP (`cairn serve`).
func TestOfficialMCPClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat("mcp-client/node_modules/@modelcontextprotocol/sdk/package.json")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install node and the MCP SDK (cd e2e/mcp-client && npm ci): %v", err)
		}
		t.Skipf("needs node and the TypeScript MCP SDK: run (cd e2e/mcp-client && npm ci): %v", err)
	}
	run := func(t *testing.T, args ...string) {
		cmd := exec.Command(node, append([]string{"mcp-client/client.mjs"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("client: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), `"ok":true`) {
			t.Fatalf("client output: %s", out)
		}
		t.Logf("%s", strings.TrimSpace(string(out)))
	}
	t.Run("stdio", func(t *testing.T) {
		run(t, "stdio", cairnBin, filepath.Join(t.TempDir(), "cairn.db"))
	})
	t.Run("streamable-http", func(t *testing.T) {
		url := serve(t, filepath.Join(t.TempDir(), "cairn.db"), "SURR_ENABLE_INNER_VOICE=0")
		run(t, "http", url+"/mcp")
	})
}
