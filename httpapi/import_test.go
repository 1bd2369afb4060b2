package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
)

// importServer serves eng with at most max imports at once; every import,
// once it holds its slot, says so on started and waits for release before
// it reads its body.
func importServer(t *testing.T, eng *cairn.Engine, max int) (srv *httptest.Server, started chan struct{}, release chan struct{}) {
	t.Helper()
	api := httpapi.New(eng, &httpapi.Options{MaxImports: max})
	started, release = make(chan struct{}, 16), make(chan struct{})
	httpapi.SetImportHook(api, func() {
		started <- struct{}{}
		<-release
	})
	srv = httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv, started, release
}

func postImport(t *testing.T, srv *httptest.Server, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	res, err := srv.Client().Post(srv.URL+"/v1/import", "application/x-ndjson", body)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// Past MaxImports, an import is refused at once (503, code busy,
// Retry-After), writes nothing, and leaves the running ones alone; once
// they end, imports run again.
func TestImportsPastTheBoundAreBusy(t *testing.T) {
	eng := newEngine(t)
	srv, started, release := importServer(t, eng, 2)
	lines := func(tag string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "{\"kind\":\"message\",\"content\":\"%s import line %d\"}\n", tag, i)
		}
		return b.String()
	}
	type result struct {
		status int
		body   []byte
	}
	running := make(chan result, 2)
	for _, tag := range []string{"first", "second"} {
		go func() {
			res, err := srv.Client().Post(srv.URL+"/v1/import", "application/x-ndjson", strings.NewReader(lines(tag, 3)))
			if err != nil {
				running <- result{-1, []byte(err.Error())}
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			running <- result{res.StatusCode, b}
		}()
	}
	<-started
	<-started // both slots held
	for range 3 {
		res, body := postImport(t, srv, strings.NewReader(lines("refused", 2)))
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(body, &e)
		if res.StatusCode != http.StatusServiceUnavailable || e.Error.Code != "busy" || res.Header.Get("Retry-After") != "5" {
			t.Fatalf("an import past the bound: %d %q (Retry-After %q); want 503 busy with Retry-After 5",
				res.StatusCode, body, res.Header.Get("Retry-After"))
		}
	}
	if n := observations(t, eng); n != 0 {
		t.Fatalf("%d observations before the held imports ran", n)
	}
	close(release)
	for range 2 {
		if r := <-running; r.status != 200 {
			t.Fatalf("a held import: %d %s", r.status, r.body)
		}
	}
	// The slots are free again (the hook no longer waits).
	if res, body := postImport(t, srv, strings.NewReader(lines("after", 4))); res.StatusCode != 200 {
		t.Fatalf("an import after the others ended: %d %s", res.StatusCode, body)
	}
	if n := observations(t, eng); n != 3+3+4 {
		t.Fatalf("%d observations; want the two held imports' and the last one's (10), none of the refused ones'", n)
	}
	exp := string(do(t, srv, "GET", "/v1/export", "").body)
	if strings.Contains(exp, "refused import") {
		t.Fatal("a refused import wrote records")
	}
}

func observations(t *testing.T, eng *cairn.Engine) int {
	t.Helper()
	st, err := eng.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.Observations
}

// bigBody writes n JSON Lines observations through a pipe, as a client
// streaming a file would: the first line is longer than any read buffer,
// the contents carry multi-byte text and escapes.
func bigBody(n int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		long := strings.Repeat("long first line ", 20000) // 320 KB
		fmt.Fprintf(pw, "{\"kind\":\"message\",\"content\":\"%s\"}\n", long)
		pad := strings.Repeat("déploiement ∑ \\\"quoted\\\" \\n ", 40)
		for i := 1; i < n; i++ {
			if i%1000 == 0 {
				io.WriteString(pw, "\n   \n") // blank lines are skipped
			}
			fmt.Fprintf(pw, "{\"kind\":\"command\",\"content\":\"streamed record %06d %s\"}\n", i, pad)
		}
		pw.Close()
	}()
	return pr
}

// A large import streamed in arrives whole and decoded as sent.
func TestImportStreamsALargeBody(t *testing.T) {
	eng := newEngine(t)
	srv := httptest.NewServer(httpapi.New(eng, nil))
	t.Cleanup(srv.Close)
	const n = 6000 // about 9 MB
	res, body := postImport(t, srv, bigBody(n))
	var rep cairn.ImportReport
	if err := json.Unmarshal(body, &rep); err != nil || res.StatusCode != 200 || rep.Observations != n {
		t.Fatalf("import: %d %s", res.StatusCode, body)
	}
	exp := string(do(t, srv, "GET", "/v1/export", "").body)
	pad := strings.Repeat("déploiement ∑ \"quoted\" \n ", 40)
	for _, i := range []int{1, 999, 1000, 3456, n - 1} {
		var want strings.Builder
		json.NewEncoder(&want).Encode(fmt.Sprintf("streamed record %06d %s", i, pad))
		if !strings.Contains(exp, strings.TrimSpace(want.String())) {
			t.Fatalf("record %d is not in the export as sent", i)
		}
	}
	if !strings.Contains(exp, strings.Repeat("long first line ", 100)) {
		t.Fatal("the long first line is not in the export")
	}
}

// An import that is bad anywhere (a bad line deep in a large body, a body
// over the limit, a body cut mid-record, one with nothing in it) writes
// nothing, and frees its slot.
func TestBadImportChangesNothing(t *testing.T) {
	eng := newEngine(t)
	srv := httptest.NewServer(httpapi.New(eng, &httpapi.Options{MaxImports: 1, MaxImportBytes: 4 << 20}))
	t.Cleanup(srv.Close)
	good := "{\"id\":\"obs_seed1\",\"kind\":\"message\",\"content\":\"kept before\"}\n"
	if res, body := postImport(t, srv, strings.NewReader(good)); res.StatusCode != 200 {
		t.Fatalf("seed: %d %s", res.StatusCode, body)
	}
	before := string(do(t, srv, "GET", "/v1/export", "").body)
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "{\"kind\":\"message\",\"content\":\"bad import line %d\"}\n", i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, body string
		status     int
		says       string
	}{
		{"a bad line deep in", lines(3000) + "{\"kind\":\"nope\",\"content\":\"x\"}\n" + lines(10), 400, "line 3001"},
		{"not JSON deep in", lines(2000) + "not json\n" + lines(10), 400, "line 2001"},
		{"blank lines first, a bad line deep in", "\n  \n" + lines(100) + "oops\n", 400, "line 103"},
		{"over the limit", lines(120000), 413, "over"},
		{"over the limit in one line", "{\"kind\":\"message\",\"content\":\"" + strings.Repeat("x", 5<<20) + "\"}\n", 413, "over"},
		{"cut mid-record", lines(500) + "{\"kind\":\"message\",\"cont", 400, "line 501"},
		{"empty", "", 400, "no records"},
		{"blank lines only", "\n \n\n", 400, "no records"},
		{"a JSON array", "[1, 2]", 400, ""},
		{"a clash with the database", lines(5) + "{\"id\":\"obs_seed1\",\"kind\":\"message\",\"content\":\"other\"}\n", 0, ""},
	} {
		res, body := postImport(t, srv, strings.NewReader(c.body))
		if c.status != 0 && (res.StatusCode != c.status || !strings.Contains(string(body), c.says)) {
			t.Errorf("%s: %d %s; want %d saying %q", c.name, res.StatusCode, body, c.status, c.says)
		}
		if res.StatusCode == 200 {
			t.Errorf("%s: accepted", c.name)
		}
		if after := string(do(t, srv, "GET", "/v1/export", "").body); after != before {
			t.Fatalf("%s changed the database", c.name)
		}
	}
	if res, body := postImport(t, srv, strings.NewReader(lines(2))); res.StatusCode != 200 {
		t.Fatalf("a good import after the bad ones: %d %s", res.StatusCode, body)
	}
}
