package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// The SDK answers a request whose params do not decode with a JSON-RPC
// error quoting Go's decoder ("unmarshaling ... into a *mcp.CallToolParamsRaw:
// json: cannot unmarshal ... into Go value of type ..."), and a /mcp body
// that is not JSON-RPC with such a text too. Both transports pass every
// answer through publicMessage or publicHTTPError, which keep the SDK's
// words up to the first quote of Go's and say the rest plainly.

// goDetail are the marks of Go's decoder in a message, the first ones
// being where such a quote starts.
var goDetail = []string{": unmarshaling", ": json:", ": cannot unmarshal", "unmarshal", "json: ", "Go value", "Go struct", "jsonrpc2.", "*mcp."}

// publicText cuts msg before any quote of Go's decoder and adds plain.
func publicText(msg, plain string) string {
	cut := -1
	for _, m := range goDetail {
		if i := strings.Index(msg, m); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut < 0 {
		return msg
	}
	head := strings.TrimRight(msg[:cut], ": ")
	if head == "" {
		return plain
	}
	return head + ": " + plain
}

const badParams = "the params do not have the shape the method takes"

// publicMessage returns msg, a JSON-RPC message (or batch) the server
// sends, with any error's message stripped of Go's decoder texts; other
// messages come back unchanged, unparsed past their first keys.
func publicMessage(msg []byte) []byte {
	trimmed := bytes.TrimSpace(msg)
	if len(trimmed) == 0 {
		return msg
	}
	if trimmed[0] == '[' {
		if !bytes.Contains(trimmed, []byte(`"error"`)) {
			return msg
		}
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil {
			return msg
		}
		for i, m := range batch {
			batch[i] = publicMessage(m)
		}
		out, err := json.Marshal(batch)
		if err != nil {
			return msg
		}
		return append(out, msg[len(bytes.TrimRight(msg, "\r\n")):]...)
	}
	if !isErrorResponse(trimmed) {
		return msg
	}
	var m map[string]json.RawMessage
	var e map[string]any
	if json.Unmarshal(trimmed, &m) != nil || json.Unmarshal(m["error"], &e) != nil {
		return msg
	}
	text, _ := e["message"].(string)
	safe := publicText(text, badParams)
	if safe == text {
		return msg
	}
	e["message"] = safe
	delete(e, "data")
	enc, err := json.Marshal(e)
	if err != nil {
		return msg
	}
	// The members in the SDK's order: jsonrpc, id, error.
	out := []byte(`{"jsonrpc":"2.0"`)
	if id, ok := m["id"]; ok {
		out = append(append(out, `,"id":`...), id...)
	}
	out = append(append(append(out, `,"error":`...), enc...), '}')
	return append(out, msg[len(bytes.TrimRight(msg, "\r\n")):]...)
}

// isErrorResponse reports whether msg, a JSON object, has an "error"
// member before any "result" or "method" one (the SDK writes "jsonrpc"
// and "id" first, so a large result is not read).
func isErrorResponse(msg []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		switch key {
		case "error":
			return true
		case "result", "method":
			return false
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// publicResponses wraps an HTTP handler of JSON-RPC so that its answers
// pass through publicMessage, and its plain-text errors through
// publicText. Event streams pass untouched.
func publicResponses(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := &bufferedWriter{ResponseWriter: w}
		h.ServeHTTP(bw, r)
		bw.finish()
	})
}

// bufferedWriter holds a response's body until the handler returns,
// unless it is an event stream, which it passes on as it comes.
type bufferedWriter struct {
	http.ResponseWriter
	status  int
	started bool // headers decided
	stream  bool
	body    bytes.Buffer
}

func (b *bufferedWriter) WriteHeader(code int) {
	if b.started {
		return
	}
	b.started, b.status = true, code
	if strings.HasPrefix(b.Header().Get("Content-Type"), "text/event-stream") {
		b.stream = true
		b.ResponseWriter.WriteHeader(code)
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if !b.started {
		b.WriteHeader(http.StatusOK)
	}
	if b.stream {
		return b.ResponseWriter.Write(p)
	}
	return b.body.Write(p)
}

// Flush passes on an event stream's flushes; a buffered body is written
// at the end anyway.
func (b *bufferedWriter) Flush() {
	if b.stream {
		if f, ok := b.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
}

func (b *bufferedWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

func (b *bufferedWriter) finish() {
	if b.stream {
		return
	}
	if !b.started {
		b.status = http.StatusOK
	}
	body := b.body.Bytes()
	if strings.HasPrefix(b.Header().Get("Content-Type"), "application/json") {
		body = publicMessage(body)
	} else if b.status >= 400 {
		line := strings.TrimSpace(string(body))
		if safe := publicText(line, "not a JSON-RPC message"); safe != line {
			body = []byte(safe + "\n")
		}
	}
	if len(body) > 0 {
		b.Header().Set("Content-Length", strconv.Itoa(len(body)))
	} else {
		b.Header().Del("Content-Length")
	}
	b.ResponseWriter.WriteHeader(b.status)
	b.ResponseWriter.Write(body)
}
