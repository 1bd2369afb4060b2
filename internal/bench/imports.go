package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// ImportsOptions configure RunImports.
type ImportsOptions struct {
	// Binary is the cairn executable that serves.
	Binary string
	// Clients is how many imports are sent at once (default 6); Bytes
	// the size of each body (default 250 MiB).
	Clients int
	Bytes   int64
	// Retry makes a client refused as busy (503) send its import again
	// after the Retry-After the server gave, until it is taken.
	Retry bool
	// Env is added to the server's environment.
	Env []string
	// Progress receives a line per step; nil is silent.
	Progress io.Writer
}

// ImportsReport is what RunImports measured.
type ImportsReport struct {
	Clients   int   `json:"clients"`
	BodyBytes int64 `json:"bodyBytes"`
	// Accepted counts the imports the server took and wrote (200); Busy
	// the 503 answers it gave (a retrying client may get several);
	// Failed the imports that ended otherwise.
	Accepted int      `json:"accepted"`
	Busy     int      `json:"busy"`
	Failed   int      `json:"failed"`
	Errors   []string `json:"errors,omitempty"`
	// Records counts the observations the accepted imports wrote.
	Records int `json:"records"`
	// StartRSSMiB is the server's resident memory once it listens (Linux;
	// 0 elsewhere); PeakRSSMiB its peak over the whole run.
	StartRSSMiB float64 `json:"startRssMiB"`
	PeakRSSMiB  float64 `json:"peakRssMiB"`
	// PeakAnonMiB and PeakFileMiB are the largest anonymous memory (the
	// heaps) and file-backed resident memory (the database file's pages,
	// read through memory maps) seen by sampling every 100 ms (Linux).
	PeakAnonMiB float64 `json:"peakAnonMiB"`
	PeakFileMiB float64 `json:"peakFileMiB"`
	// Seconds is how long the imports took; SearchSeconds the search
	// sent after them, which makes the retrieval index catch up on what
	// they wrote.
	Seconds       float64 `json:"seconds"`
	SearchSeconds float64 `json:"searchSeconds"`
}

// RunImports starts `cairn serve` on a new database in a temporary
// directory, sends Clients imports of Bytes each at once (bodies made as
// they are sent, so the client holds none), stops the server and reports
// its peak resident memory.
func RunImports(ctx context.Context, o ImportsOptions) (ImportsReport, error) {
	if o.Clients <= 0 {
		o.Clients = 6
	}
	if o.Bytes <= 0 {
		o.Bytes = 250 << 20
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	rep := ImportsReport{Clients: o.Clients, BodyBytes: o.Bytes}
	dir, err := os.MkdirTemp("", "cairn-bench-imports-")
	if err != nil {
		return rep, memory.Wrap(memory.CodeInternal, err, "temporary directory: %v", err)
	}
	defer os.RemoveAll(dir)
	srv, base, err := startServeProcess(o.Binary, filepath.Join(dir, "cairn.db"), o.Env)
	if err != nil {
		return rep, err
	}
	pid := srv.Process.Pid
	rep.StartRSSMiB = procStatusMiB(pid)["VmRSS"]
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			m := procStatusMiB(pid)
			rep.PeakAnonMiB = max(rep.PeakAnonMiB, m["RssAnon"])
			rep.PeakFileMiB = max(rep.PeakFileMiB, m["RssFile"])
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	fmt.Fprintf(o.Progress, "server up (%.0f MiB); sending %d imports of %d MiB at once\n", rep.StartRSSMiB, o.Clients, o.Bytes>>20)
	start := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for c := range o.Clients {
		wg.Go(func() {
			res := sendImport(ctx, base, c, o.Bytes, o.Retry)
			mu.Lock()
			defer mu.Unlock()
			rep.Busy += res.busy
			switch {
			case res.err != nil:
				rep.Failed++
				rep.Errors = append(rep.Errors, res.err.Error())
			default:
				rep.Accepted++
				rep.Records += res.records
			}
			fmt.Fprintf(o.Progress, "client %d: %s after %.1f s (%d busy answers)\n", c, res.outcome(), time.Since(start).Seconds(), res.busy)
		})
	}
	wg.Wait()
	if rep.Accepted > 0 {
		// A search makes the retrieval index catch up on every record
		// imported, as the first search after an import would: the peak
		// counts that too, not only what came before the answer.
		searched := time.Now()
		if err := search(ctx, base); err != nil {
			rep.Errors = append(rep.Errors, "the search after the imports: "+err.Error())
		}
		rep.SearchSeconds = time.Since(searched).Seconds()
		fmt.Fprintf(o.Progress, "a search after the imports answered in %.1f s\n", rep.SearchSeconds)
	}
	close(stopSampling)
	<-sampled
	rep.Seconds = time.Since(start).Seconds() - rep.SearchSeconds
	if err := stopServeProcess(srv); err != nil && srv.ProcessState == nil {
		return rep, memory.Wrap(memory.CodeInternal, err, "stopping cairn serve: %v", err)
	}
	rep.PeakRSSMiB = maxRSSMiB(srv.ProcessState)
	return rep, nil
}

// search sends one retrieval (POST /v1/retrieve) and waits for its answer.
func search(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/retrieve", strings.NewReader(`{"query":"which client sent the import line about the window table?"}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
	}
	return nil
}

// importResult is how one client's import ended.
type importResult struct {
	busy    int
	records int
	err     error
}

func (r importResult) outcome() string {
	if r.err != nil {
		return "failed: " + r.err.Error()
	}
	return fmt.Sprintf("imported %d records", r.records)
}

// sendImport posts one import of size bytes, again after each busy answer
// when retry is set.
func sendImport(ctx context.Context, base string, client int, size int64, retry bool) importResult {
	var res importResult
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/import", newImportBody(client, size))
		if err != nil {
			res.err = err
			return res
		}
		req.Header.Set("Content-Type", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res.err = err
			return res
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			var rep struct {
				Observations int `json:"observations"`
			}
			if err := json.Unmarshal(body, &rep); err != nil {
				res.err = fmt.Errorf("unexpected answer %.200s", body)
				return res
			}
			res.records = rep.Observations
			return res
		case resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), `"busy"`):
			res.busy++
			if !retry {
				res.err = fmt.Errorf("busy (Retry-After %s)", resp.Header.Get("Retry-After"))
				return res
			}
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			select {
			case <-ctx.Done():
				res.err = ctx.Err()
				return res
			case <-time.After(time.Duration(max(wait, 1)) * time.Second):
			}
		default:
			res.err = fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
			return res
		}
	}
}

// importBody makes a JSON Lines import of observations as it is read:
// lines of about 2 KiB of varied words, size bytes in all.
type importBody struct {
	client int
	left   int64
	line   int
	buf    []byte
}

func newImportBody(client int, size int64) io.Reader {
	return &importBody{client: client, left: size}
}

func (b *importBody) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && b.left > 0 {
		if len(b.buf) == 0 {
			b.buf = b.nextLine()
			if rest := b.left - int64(len(b.buf)); rest < 128 {
				// The last line fills what is left: pad its content.
				b.buf = b.lastLine(int(b.left))
			}
		}
		c := copy(p[n:], b.buf)
		b.buf = b.buf[c:]
		n += c
		b.left -= int64(c)
	}
	if n == 0 && b.left <= 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (b *importBody) nextLine() []byte {
	b.line++
	var sb strings.Builder
	fmt.Fprintf(&sb, `{"kind":"message","content":"client %d line %d`, b.client, b.line)
	for i := 0; sb.Len() < 2000; i++ {
		sb.WriteByte(' ')
		sb.WriteString(fillerWords[(b.line*7+i*13+b.client)%len(fillerWords)])
	}
	sb.WriteString("\"}\n")
	return []byte(sb.String())
}

// lastLine is a line of exactly n bytes (at least a minimal one).
func (b *importBody) lastLine(n int) []byte {
	head := fmt.Sprintf(`{"kind":"message","content":"client %d last`, b.client)
	pad := max(0, n-len(head)-3)
	return []byte(head + strings.Repeat("x", pad) + "\"}\n")
}

// procStatusMiB reads a process's memory figures (VmRSS, RssAnon,
// RssFile, ...) in MiB from /proc (Linux; empty elsewhere).
func procStatusMiB(pid int) map[string]float64 {
	out := map[string]float64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		v, isKB := strings.CutSuffix(strings.TrimSpace(v), " kB")
		if !ok || !isKB {
			continue
		}
		if kb, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = kb / 1024
		}
	}
	return out
}
