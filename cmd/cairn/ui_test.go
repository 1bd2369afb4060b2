package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// signalWriter collects what is written and reports the page's address
// once it appears.
type signalWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	addr chan string
}

var pageAt = regexp.MustCompile(`the web page is at (http://\S+)`)

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := pageAt.FindStringSubmatch(w.buf.String()); m != nil && w.addr != nil {
		w.addr <- m[1]
		w.addr = nil
	}
	return len(p), nil
}

// cairn ui serves the page, moderation included, on a free loopback port
// and says where; it refuses any other address.
func TestUICommand(t *testing.T) {
	t.Setenv("CAIRN_TOKEN", "")
	t.Setenv("SURR_ARCHIVE_DIR", filepath.Join(t.TempDir(), "archive"))
	db := filepath.Join(t.TempDir(), "cairn.db")
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:4747", "nonsense"} {
		if _, errs, code := cli(t, db, "", "ui", "--no-open", "--addr", addr); code != 2 || !strings.Contains(errs, "loopback only") {
			t.Errorf("ui --addr %s: exit %d %s", addr, code, errs)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	errw := &signalWriter{addr: make(chan string, 1)}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--db", db, "ui", "--no-open"}, strings.NewReader(""), io.Discard, errw)
	}()
	var url string
	select {
	case url = <-errw.addr:
	case code := <-done:
		t.Fatalf("cairn ui exited %d: %s", code, errw.buf.String())
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "What do you want to remember") || res.Header.Get("Content-Security-Policy") == "" ||
		!strings.Contains(string(body), `href="/moderation"`) {
		t.Fatalf("GET %s: %d\n%.500s", url, res.StatusCode, body)
	}
	if res, err = http.Get(url + "moderation"); err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "Graph candidates") || !strings.Contains(string(body), "Removal queue") {
		t.Fatalf("GET %smoderation: %d\n%.500s", url, res.StatusCode, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("cairn ui exited %d after the interrupt: %s", code, errw.buf.String())
	}
}
