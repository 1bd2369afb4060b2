package cairn_test

import (
	"os"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
)

// Every tool is documented where users look for it: the MCP page, the HTTP
// page with its route, and the README.
func TestDocsListEveryTool(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mcpDoc, httpDoc, readme := read("docs/mcp.md"), read("docs/http.md"), read("README.md")
	for _, tool := range cairn.Tools() {
		name := "`" + tool.Name + "`"
		if !strings.Contains(mcpDoc, name) {
			t.Errorf("docs/mcp.md does not list %s", name)
		}
		if !strings.Contains(httpDoc, "`"+tool.Method+" "+tool.Path+"`") {
			t.Errorf("docs/http.md does not list %s %s", tool.Method, tool.Path)
		}
		if !strings.Contains(readme, name) {
			t.Errorf("README.md does not list %s", name)
		}
	}
}
