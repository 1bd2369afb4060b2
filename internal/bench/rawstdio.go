package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// rawStdio is the thinnest MCP client: it writes one JSON-RPC line to
// `cairn mcp` and reads lines until the answer with its id. It measures
// the protocol's own round trip, without a client library's costs.
type rawStdio struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startRawStdio(bin, db string, env []string, flags ...string) (*rawStdio, error) {
	cmd := exec.Command(bin, append(append([]string{"--db", db}, flags...), "mcp")...)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "starting cairn mcp: %v", err)
	}
	r := &rawStdio{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := r.call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cairn-bench","version":"1"}}`); err != nil {
		r.close()
		return nil, err
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r, nil
}

func (r *rawStdio) call(method, params string) (string, error) {
	r.id++
	if _, err := fmt.Fprintf(r.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", r.id, method, params); err != nil {
		return "", err
	}
	want := fmt.Sprintf(`"id":%d,`, r.id)
	for {
		line, err := r.out.ReadString('\n')
		if err != nil {
			return "", err
		}
		if strings.Contains(line, want) {
			if strings.Contains(line, `"isError":true`) || strings.Contains(line, `"error":{`) {
				return line, fmt.Errorf("call failed: %.200s", line)
			}
			return line, nil
		}
	}
}

// retrieve calls the retrieve tool.
func (r *rawStdio) retrieve(_ context.Context, args any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	_, err = r.call("tools/call", `{"name":"retrieve","arguments":`+string(b)+`}`)
	return err
}

func (r *rawStdio) close() {
	r.in.Close()
	r.cmd.Wait()
}
