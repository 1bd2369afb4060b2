package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/internal/embedtest"
	"github.com/cairnhq/cairn/retrieve"
)

// HTTP against a real remote embedder, failing each way and working: writes
// succeed, retrieve degrades (and says so, and /metrics counts it) only
// when the embedder fails, the inner voice and reembed answer 503
// embedder_unavailable, and no body or log line shows the embedder's
// address, path or answer, or Go's error texts.
func TestRemoteEmbedderHTTP(t *testing.T) {
	for _, mode := range append(embedtest.Failing, embedtest.Working) {
		t.Run(string(mode), func(t *testing.T) {
			emb := embedtest.Start(t, mode, 16)
			down := mode != embedtest.Working
			iv := retrieve.DefaultInnerVoiceConfig()
			iv.Enabled = true
			now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
			eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Embedder: emb.Embedder(), InnerVoice: &iv,
				Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { eng.Close() })
			var logs bytes.Buffer
			srv := httptest.NewServer(httpapi.New(eng, &httpapi.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
			t.Cleanup(srv.Close)
			shows := func(what string, r reply) {
				t.Helper()
				if leaks := emb.Leaks(string(r.body)); len(leaks) > 0 {
					t.Errorf("%s shows %q: %s", what, leaks, r.body)
				}
			}

			for _, text := range embedtest.Birds {
				body, _ := json.Marshal(map[string]any{"kind": "command", "content": text, "scopeIds": map[string]string{"repoId": embedtest.Repo}})
				r := do(t, srv, "POST", "/v1/observations", string(body))
				if r.status != 201 {
					t.Fatalf("a write failed: %d %s", r.status, r.body)
				}
				shows("log", r)
			}

			r := do(t, srv, "POST", "/v1/retrieve", fmt.Sprintf(`{"query":%q,"scopeIds":{"repoId":%q}}`, embedtest.Query, embedtest.Repo))
			shows("retrieve", r)
			if r.status != 200 {
				t.Fatalf("retrieve: %d %s", r.status, r.body)
			}
			var got cairn.RetrieveResult
			r.decode(t, &got)
			wantDegraded, wantCount := "", 0
			if down {
				wantDegraded, wantCount = "embedder_unavailable", 1
				if len(got.Candidates) != embedtest.Matching {
					t.Errorf("degraded retrieve found %d candidates; want the %d sharing words with the query", len(got.Candidates), embedtest.Matching)
				}
			} else if strings.Contains(string(r.body), "degraded") {
				t.Errorf("a full answer says degraded: %s", r.body)
			}
			if string(got.Provenance.Degraded) != wantDegraded {
				t.Errorf("provenance degraded %q; want %q", got.Provenance.Degraded, wantDegraded)
			}
			for _, c := range got.Candidates {
				if string(c.Explanation.Degraded) != wantDegraded {
					t.Errorf("candidate %s: explanation degraded %q; want %q", c.Entity.ID(), c.Explanation.Degraded, wantDegraded)
				}
			}
			metrics := string(do(t, srv, "GET", "/metrics", "").body)
			if want := fmt.Sprintf("cairn_retrieve_degraded_total{reason=\"embedder_unavailable\"} %d\n", wantCount); !strings.Contains(metrics, want) {
				t.Errorf("metrics lack %q:\n%s", want, metrics)
			}

			for _, route := range []struct{ path, body string }{
				{"/v1/inner-voice/retrieve", fmt.Sprintf(`{"query":%q}`, embedtest.Query)},
				{"/v1/reembed", `{}`},
			} {
				r := do(t, srv, "POST", route.path, route.body)
				shows(route.path, r)
				want, status := "", 200
				if down {
					want, status = "embedder_unavailable", 503
				}
				if r.code() != want || r.status != status {
					t.Errorf("%s: %d %q; want %d %q: %s", route.path, r.status, r.code(), status, want, r.body)
				}
			}
			shows("doctor", do(t, srv, "POST", "/v1/doctor", `{}`))

			// Malformed arguments are named in JSON's words, not Go's.
			r = do(t, srv, "POST", "/v1/retrieve", `{"query":"x","syntax":3}`)
			if r.code() != "invalid_params" || !strings.Contains(string(r.body), "must be a string") || strings.Contains(string(r.body), "memory.") {
				t.Errorf("bad arguments: %d %s", r.status, r.body)
			}
			r = do(t, srv, "GET", "/v1/thoughts?limit=ten", "")
			if r.code() != "invalid_params" || strings.Contains(string(r.body), "strconv") {
				t.Errorf("bad query parameter: %d %s", r.status, r.body)
			}

			for _, l := range strings.Split(logs.String(), "\n") {
				if leaks := emb.Leaks(l); len(leaks) > 0 {
					t.Errorf("the log shows %q: %s", leaks, l)
				}
			}
		})
	}
}
