package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
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
		dir := t.TempDir()
		// The client may exit before the cairn mcp it started has closed
		// the database.
		waitForProcessesIn(t, dir)
		run(t, "stdio", cairnBin, filepath.Join(dir, "cairn.db"))
	})
	t.Run("streamable-http", func(t *testing.T) {
		url := serve(t, filepath.Join(t.TempDir(), "cairn.db"), "SURR_ENABLE_INNER_VOICE=0", "CAIRN_CODE_ROOTS="+os.TempDir(), "SURR_ARCHIVE_DIR="+filepath.Join(t.TempDir(), "archive"))
		run(t, "http", url+"/mcp")
	})
}

// TestMCPClientKnowsEveryTool keeps the TypeScript client's list of
// expected tools equal to cairn's tool table, so a new tool is exercised
// end to end; it needs no node, so a stale list fails everywhere, not only
// where the client runs.
func TestMCPClientKnowsEveryTool(t *testing.T) {
	src, err := os.ReadFile("mcp-client/client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)const expectedTools = \[(.*?)\];`).FindSubmatch(src)
	if m == nil {
		t.Fatal("client.mjs declares no expectedTools")
	}
	var listed []string
	for _, q := range regexp.MustCompile(`"([a-z0-9_]+)"`).FindAllSubmatch(m[1], -1) {
		listed = append(listed, string(q[1]))
	}
	var want []string
	for _, tool := range cairn.Tools() {
		want = append(want, tool.Name)
	}
	slices.Sort(listed)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Fatalf("client.mjs expects tools %v\ncairn serves %v", listed, want)
	}
	for _, name := range want {
		if !strings.Contains(string(src), `ok("`+name+`"`) {
			t.Errorf("client.mjs never calls %s", name)
		}
	}
}
