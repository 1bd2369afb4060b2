package mcpserver_test

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
)

// The recall prompt and the context resource answer bad arguments with a
// JSON-RPC invalid-params error (-32602) carrying cairn's code and
// message, as clients expect of a request they can fix, not with code 0.
func TestPromptErrorsAreJSONRPCErrors(t *testing.T) {
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	c := startMCP(t, eng, slog.New(slog.DiscardHandler))
	for _, args := range []map[string]string{{}, {"repo": " padded "}, {"repo": "/src/shop", "session": "a\nb"}} {
		line := c.call("prompts/get", map[string]any{"name": "recall", "arguments": args})
		var m struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Error == nil {
			t.Fatalf("recall %v: %s", args, line)
		}
		if m.Error.Code != -32602 || !strings.HasPrefix(m.Error.Message, "invalid_params: ") {
			t.Errorf("recall %v: error %d %q; want -32602 and cairn's invalid_params", args, m.Error.Code, m.Error.Message)
		}
	}
}
