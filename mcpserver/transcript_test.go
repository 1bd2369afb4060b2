package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/mcpserver"
	"github.com/cairnhq/cairn/retrieve"
)

var update = flag.Bool("update", false, "rewrite the expected server output in testdata/transcripts")

// Transcripts are protocol conformance tests: each file under
// testdata/transcripts holds JSON-RPC lines a client sends ("> ") and, after
// each, what the server answered ("< ", pretty-printed). The test replays
// the client lines against a fresh server and database over newline-
// delimited JSON (the stdio wire format) and compares the answers; -update
// rewrites them. Ids cairn generates are replaced by stable placeholders.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/transcripts/*.txt")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { replay(t, f) })
	}
}

var (
	generatedID = regexp.MustCompile(`\b(obs|cap|sum|pin|th|ent|kgo|edge|kgc|ivs|ivx)_[0-9A-HJKMNP-TV-Z]{26}\b`)
	// sizeBytes depends on SQLite's page allocation, latency_ms and
	// mean_latency_ms (a mean, so it may have a fraction) on the machine,
	// not on cairn.
	sizeBytes = regexp.MustCompile(`(\\?"(?:sizeBytes|latency_ms|mean_latency_ms)\\?":)\d+(?:\.\d+)?`)
)

// normalizer maps generated ids to placeholders in order of appearance.
type normalizer struct {
	ids  map[string]string
	dir  string
	seen map[string]int
}

func (n *normalizer) apply(s string) string {
	s = strings.ReplaceAll(s, n.dir, "<tmp>")
	s = sizeBytes.ReplaceAllString(s, "${1}0")
	return generatedID.ReplaceAllStringFunc(s, func(id string) string {
		if p, ok := n.ids[id]; ok {
			return p
		}
		prefix := id[:strings.IndexByte(id, '_')]
		n.seen[prefix]++
		p := fmt.Sprintf("%s_<%d>", prefix, n.seen[prefix])
		n.ids[id] = p
		return p
	})
}

// denormalize turns placeholders in a client line back into real ids.
func (n *normalizer) denormalize(s string) string {
	for id, p := range n.ids {
		s = strings.ReplaceAll(s, p, id)
	}
	return s
}

func replay(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	opts := &cairn.Options{Now: func() time.Time { return now },
		Maintenance: &maintain.Config{RetentionDays: 30, ArchiveDir: filepath.Join(dir, "archive"), Format: maintain.FormatParquet}}
	// A transcript that says so runs with the inner voice enabled.
	if strings.Contains(string(data), "\n# engine: inner voice enabled\n") {
		iv := retrieve.DefaultInnerVoiceConfig()
		iv.Enabled = true
		opts.InnerVoice = &iv
	}
	eng, err := cairn.Open(filepath.Join(dir, "cairn.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := mcpserver.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clientToServer, toServer := io.Pipe()
	fromServer, serverToClient := io.Pipe()
	go srv.Run(ctx, mcpserver.GuardedTransport(clientToServer, serverToClient, 1<<20))
	replies := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(fromServer)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			replies <- sc.Text()
		}
		close(replies)
	}()

	norm := &normalizer{ids: map[string]string{}, dir: dir, seen: map[string]int{}}
	var out strings.Builder
	syncN := 0
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "< "):
			continue // regenerated below
		case !strings.HasPrefix(line, "> "):
			out.WriteString(line + "\n")
			continue
		}
		out.WriteString(line + "\n")
		msg := norm.denormalize(strings.TrimPrefix(line, "> "))
		if _, err := io.WriteString(toServer, msg+"\n"); err != nil {
			t.Fatalf("writing %q: %v", msg, err)
		}
		// A ping after every line marks where the server's answers to it
		// end; requests are answered concurrently, so a request's own
		// answer is awaited too.
		syncN++
		syncID := fmt.Sprintf("sync-%d", syncN)
		fmt.Fprintf(toServer, `{"jsonrpc":"2.0","id":%q,"method":"ping"}`+"\n", syncID)
		wantID := requestID(msg)
		var held []string
		for gotSync, gotReply := false, wantID == ""; !gotSync || !gotReply; {
			select {
			case r, ok := <-replies:
				if !ok {
					t.Fatalf("server closed the connection after %q", msg)
				}
				if replyID(r) == `"`+syncID+`"` {
					gotSync = true
					continue
				}
				if replyID(r) == wantID {
					gotReply = true
				}
				held = append(held, r)
			case <-time.After(2 * time.Minute): // a safety net, not a measurement
				t.Fatalf("no answer to %q", msg)
			}
		}
		for _, r := range held {
			out.WriteString(pretty(norm.apply(r)))
		}
	}
	got := out.String()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != string(data) {
		t.Errorf("%s differs from the server's answers (run go test ./mcpserver -run TestTranscripts -update and review the diff):\n%s", path, firstDiff(string(data), got))
	}
}

// pretty renders a reply as indented JSON, every line prefixed "< ".
func pretty(line string) string {
	var v any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		return "< " + line + "\n"
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return "< " + strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\n", "\n< ") + "\n"
}

// requestID is the id of a request line the server will answer, as raw
// JSON, or "" for notifications and lines that are not JSON.
func requestID(line string) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal([]byte(line), &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return ""
	}
	return string(m.ID)
}

func replyID(line string) string { return requestID(line) }

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, w, g)
		}
	}
	return ""
}
