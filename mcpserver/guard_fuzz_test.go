package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// FuzzGuardLine: whatever line a client sends on stdio, the guard either
// passes it on (then it is JSON nesting at most MaxDepth levels, which the
// SDK reads without ending the session) or answers with one JSON-RPC error
// line of a known code, never quoting the line; it never panics. The
// depth it measures is the depth Go's own decoder sees.
func FuzzGuardLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","arguments":{"kind":"message","content":"x"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"1.0","id":3,"method":"ping"}`, `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, `{"jsonrpc":"2.0","id":5,"method":""}`,
		`{{{`, `"just a string"`, `{"s":"[[[[\"{{{{"}`, `null`, ``, "\xff", `{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
		`{"jsonrpc":"2.0","id":7,"method":"x","params":` + strings.Repeat(`{"a":`, 257) + "1" + strings.Repeat("}", 257) + `}`,
	} {
		f.Add([]byte(s))
	}
	known := map[int]bool{codeParseError: true, codeInvalidRequest: true, codeInvalidParams: true}
	f.Fuzz(func(t *testing.T, line []byte) {
		const maxLine = 1 << 20
		tooLong := len(line) > maxLine
		reply := check(line, tooLong, maxLine)
		trimmed := bytes.TrimSpace(line)
		if json.Valid(trimmed) {
			// The scanner agrees with Go's decoder on depth.
			if got, want := memory.JSONDepth(trimmed), decoderDepth(trimmed); got != want {
				t.Fatalf("JSONDepth %d; the decoder sees %d", got, want)
			}
		}
		if reply == nil {
			if tooLong || !json.Valid(trimmed) || memory.JSONDepth(trimmed) > MaxDepth {
				t.Fatalf("passed on a line the SDK cannot take: %.80q", line)
			}
			return
		}
		if bytes.Count(reply, []byte("\n")) != 1 || reply[len(reply)-1] != '\n' {
			t.Fatalf("reply is not one line: %q", reply)
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(reply, &m); err != nil || m.JSONRPC != "2.0" || m.Error == nil || !known[m.Error.Code] {
			t.Fatalf("reply %q", reply)
		}
		if id := string(m.ID); id != "null" && !(id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9')) {
			t.Fatalf("reply echoes an id that is not a string or a number: %q", reply)
		}
		if len(trimmed) > 16 && strings.Contains(m.Error.Message, string(trimmed)) {
			t.Fatalf("reply quotes the line: %q", reply)
		}
	})
}

// decoderDepth is the nesting depth of valid JSON as Go's decoder reads it.
func decoderDepth(p []byte) int {
	dec := json.NewDecoder(bytes.NewReader(p))
	d, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			d++
			deepest = max(deepest, d)
		case json.Delim('}'), json.Delim(']'):
			d--
		}
	}
}
