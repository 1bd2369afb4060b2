package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC error codes the stdio guard answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
)

// MaxDepth bounds how deeply one message's JSON may nest. The SDK's
// decoder stops at 1000 levels and ends the whole session when it does; a
// deeper line is answered here instead, and the session goes on.
const MaxDepth = 256

// lockedWriter serialises whole-message writes from the SDK and the guard,
// and keeps count of the requests still waiting for an answer.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending map[string]bool
	idle    chan struct{} // closed and replaced when pending empties
}

func newLockedWriter(w io.Writer) *lockedWriter {
	return &lockedWriter{w: w, pending: map[string]bool{}, idle: make(chan struct{})}
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id := answeredID(p); id != "" && l.pending[id] {
		delete(l.pending, id)
		if len(l.pending) == 0 {
			close(l.idle)
			l.idle = make(chan struct{})
		}
	}
	if _, err := l.w.Write(publicMessage(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (l *lockedWriter) Close() error { return nil }

// expect notes a request whose answer is on its way.
func (l *lockedWriter) expect(id string) {
	l.mu.Lock()
	l.pending[id] = true
	l.mu.Unlock()
}

// drained waits until every request forwarded has been answered, or d.
func (l *lockedWriter) drained(d time.Duration) {
	deadline := time.After(d)
	for {
		l.mu.Lock()
		n, idle := len(l.pending), l.idle
		l.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-idle:
		case <-deadline:
			return
		}
	}
}

// answeredID is the id of a response message, or "". It reads tokens only
// up to the "id" member (the SDK writes it second), so a large result is
// not parsed again.
func answeredID(msg []byte) string {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		switch key {
		case "id":
			var id json.RawMessage
			if dec.Decode(&id) != nil {
				return ""
			}
			return string(id)
		case "method":
			return "" // a request or notification from the server
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// GuardedTransport is newline-delimited JSON-RPC over in and out (the stdio
// wire format) that survives bad input: a line that is not JSON gets a
// -32700 parse error, a JSON value that is not a JSON-RPC message gets a
// -32600 invalid request error, a line over maxLine bytes gets -32600 too,
// and the session goes on. (The SDK's own stdio transport ends the session
// at the first malformed line.) Well-formed messages pass to the SDK
// unchanged; its error answers lose any quote of Go's decoder.
func GuardedTransport(in io.Reader, out io.Writer, maxLine int) mcp.Transport {
	pr, pw := io.Pipe()
	w := newLockedWriter(out)
	go pump(in, pw, w, maxLine)
	return &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1}
}

// ServeStdio serves srv over in and out (a process's standard input and
// output) until the client disconnects or ctx ends.
func ServeStdio(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer, maxLine int) error {
	return srv.Run(ctx, GuardedTransport(in, out, maxLine))
}

// drainTimeout bounds how long the end of input waits for answers.
const drainTimeout = 30 * time.Second

// pump copies good lines from in to the SDK and answers bad ones. At the
// end of input it waits for the answers to the requests already passed on
// (so `printf ... | cairn mcp` gets them) before ending the session.
func pump(in io.Reader, toSDK *io.PipeWriter, out *lockedWriter, maxLine int) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, maxLine)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if reply := check(line, tooLong, maxLine); reply != nil {
				out.Write(reply)
			} else {
				if id := requestID(line); id != "" {
					out.expect(id)
				}
				if _, werr := toSDK.Write(append(line, '\n')); werr != nil {
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				out.drained(drainTimeout)
				toSDK.Close()
			} else {
				toSDK.CloseWithError(err)
			}
			return
		}
	}
}

// readLine reads one line without its newline. Past maxLine bytes it stops
// keeping the line, reads on to the newline, and reports tooLong.
func readLine(r *bufio.Reader, maxLine int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if maxLine > 0 && len(line) > maxLine+1 {
				tooLong, line = true, nil
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// check returns the error reply for a bad line, or nil for a good one.
func check(line []byte, tooLong bool, maxLine int) []byte {
	if tooLong {
		return rpcError(nil, codeInvalidRequest, fmt.Sprintf("request over %d bytes", maxLine))
	}
	trimmed := bytes.TrimSpace(line)
	if reply := checkDepth(trimmed); reply != nil {
		return reply
	}
	if !json.Valid(trimmed) {
		return rpcError(nil, codeParseError, "parse error: not valid JSON")
	}
	if trimmed[0] == '[' {
		return nil // a batch: the SDK answers it
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &msg) != nil {
		return rpcError(nil, codeInvalidRequest, "invalid request: not a JSON-RPC message object")
	}
	var id json.RawMessage
	if len(msg.ID) > 0 && (msg.ID[0] == '"' || msg.ID[0] == '-' || (msg.ID[0] >= '0' && msg.ID[0] <= '9')) {
		id = msg.ID
	}
	switch {
	case msg.JSONRPC != "2.0":
		return rpcError(id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	case msg.Method == nil && msg.Result == nil && msg.Error == nil:
		return rpcError(id, codeInvalidRequest, "invalid request: no method")
	case msg.Method != nil && *msg.Method == "":
		return rpcError(id, codeInvalidRequest, "invalid request: empty method")
	case len(msg.ID) > 0 && id == nil && !bytes.Equal(msg.ID, []byte("null")):
		return rpcError(nil, codeInvalidRequest, "invalid request: id must be a string or a number")
	}
	return nil
}

// checkDepth returns the error reply for a message nesting deeper than
// MaxDepth, or nil.
func checkDepth(msg []byte) []byte {
	d := memory.JSONDepth(msg)
	if d <= MaxDepth {
		return nil
	}
	return rpcError(topLevelID(msg), codeInvalidParams, fmt.Sprintf("invalid params: the message nests %d levels deep, over the limit of %d", d, MaxDepth))
}

// topLevelID is a message object's id when it is a string or a number,
// else nil; it reads the top level only.
func topLevelID(msg []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil
		}
		if key == "id" && len(v) > 0 && (v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
			return v
		}
	}
	return nil
}

// requestID is the id of a request (a message with a method and an id).
func requestID(line []byte) string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil || m.Method == nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return ""
	}
	return string(m.ID)
}

func rpcError(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return append(b, '\n')
}
