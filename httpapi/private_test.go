package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
)

// What a network caller reads never says where cairn keeps its files on
// this machine (the database, the index, the archive), and no answer may
// be sniffed as another type than it says.
func TestAnswersHideThisMachinesPaths(t *testing.T) {
	dir := t.TempDir()
	indexDir := filepath.Join(t.TempDir(), "elsewhere", "index")
	eng, err := cairn.Open(filepath.Join(dir, "cairn.db"), &cairn.Options{IndexDir: indexDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv := httptest.NewServer(httpapi.New(eng, nil))
	t.Cleanup(srv.Close)
	cwd, _ := os.Getwd()
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/status"}, {"POST", "/v1/doctor"}, {"GET", "/v1/config"}, {"GET", "/v1/export"}, {"GET", "/metrics"},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader("{}"))
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", tc.method, tc.path, res.StatusCode, b)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: X-Content-Type-Options %q", tc.method, tc.path, got)
		}
		for _, p := range []string{dir, filepath.Dir(indexDir), cwd} {
			if strings.Contains(string(b), p) {
				t.Errorf("%s %s names the directory %s:\n%.600s", tc.method, tc.path, p, b)
			}
		}
	}
	// A local caller still sees where its database is.
	st, err := eng.Status(t.Context())
	if err != nil || st.Database.Path != filepath.Join(dir, "cairn.db") {
		t.Fatalf("a local caller's status: %q %v", st.Database.Path, err)
	}
}
