package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The three introspection endpoints of the code-memory specification,
// with their response shapes, an URL-escaped entity key whose path holds
// "::" and "/", and 404 for unknown episodes.
func TestIntrospectionEndpoints(t *testing.T) {
	srv, _ := newServer(t, nil)
	repo := t.TempDir()
	src := "package auth\n\n// ValidateToken checks a token.\nfunc ValidateToken(t string) bool {\n\treturn t != \"\"\n}\n"
	if err := os.MkdirAll(filepath.Join(repo, "a::b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "a::b", "auth.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"root": repo, "repo_id": "r"})
	var first map[string]any
	if r := do(t, srv, "POST", "/v1/code/index", string(body)); r.status != 200 {
		t.Fatalf("index: %d %s", r.status, r.body)
	} else {
		r.decode(t, &first)
	}
	r := do(t, srv, "POST", "/v1/code/hydrate", `{"query":"fix auth.go","episode_id":"01JQTK8H","session_id":"s1"}`)
	if r.status != 200 {
		t.Fatalf("hydrate: %d %s", r.status, r.body)
	}

	r = do(t, srv, "GET", "/introspect/hydration/01JQTK8H", "")
	var hyd map[string]any
	r.decode(t, &hyd)
	blocks, _ := hyd["hydration_blocks"].([]any)
	if r.status != 200 || hyd["episode_id"] != "01JQTK8H" || len(blocks) != 1 || hyd["budget_used"] == nil || hyd["total_tokens"] == nil {
		t.Fatalf("hydration: %d %s", r.status, r.body)
	}
	b := blocks[0].(map[string]any)
	for _, k := range []string{"entity_key", "artifact_hash", "reason", "method", "triggered_by", "token_count", "hydrated_at"} {
		if _, ok := b[k]; !ok {
			t.Errorf("hydration block lacks %s: %v", k, b)
		}
	}
	if b["entity_key"] != "a::b/auth.go::ValidateToken" || b["reason"] != "ast_resolved" || b["triggered_by"] != "query mention: 'auth.go'" {
		t.Errorf("block %v", b)
	}

	r = do(t, srv, "GET", "/introspect/entity/"+url.PathEscape("a::b/auth.go::ValidateToken"), "")
	var ent map[string]any
	r.decode(t, &ent)
	if r.status != 200 || ent["current_state"] != "AUTHORITATIVE" || ent["filepath"] != "a::b/auth.go" {
		t.Fatalf("entity: %d %s", r.status, r.body)
	}
	etv := ent["etv_status"].(map[string]any)
	hist := ent["state_history"].([]any)
	h0 := hist[0].(map[string]any)
	if etv["is_stale"] != false || etv["disk_exists"] != true || len(hist) != 2 || h0["from_state"] != nil || h0["to_state"] != "PROPOSED" ||
		!strings.Contains(hist[1].(map[string]any)["promotion_reason"].(string), "Gate C") || len(ent["hydration_history"].([]any)) != 1 {
		t.Fatalf("entity view %s", r.body)
	}

	r = do(t, srv, "GET", "/introspect/gates/"+first["episode_id"].(string), "")
	var gates struct {
		Entities []struct {
			Key           string `json:"entity_key"`
			FinalDecision string `json:"final_decision"`
		} `json:"entities_evaluated"`
	}
	r.decode(t, &gates)
	if r.status != 200 || len(gates.Entities) != 1 || gates.Entities[0].FinalDecision != "PROMOTED to AUTHORITATIVE" || !strings.Contains(string(r.body), `"gate_b":{"passed":true`) {
		t.Fatalf("gates: %d %s", r.status, r.body)
	}
	var idx map[string]any
	do(t, srv, "POST", "/v1/code/index", string(body)).decode(t, &idx)
	r = do(t, srv, "GET", "/introspect/gates/"+idx["episode_id"].(string), "")
	if r.status != 200 || !strings.Contains(string(r.body), `"entities_evaluated":[]`) {
		t.Fatalf("gates of an index that changed nothing: %d %s", r.status, r.body)
	}

	for _, p := range []string{"/introspect/hydration/nope", "/introspect/gates/nope", "/introspect/entity/" + url.PathEscape("x.go::Nope")} {
		if r := do(t, srv, "GET", p, ""); r.status != 404 || r.code() != "not_found" {
			t.Errorf("GET %s: %d %s; want 404 not_found", p, r.status, r.body)
		}
	}
	if r := do(t, srv, "GET", "/introspect/entity/no-separator", ""); r.status != 400 {
		t.Errorf("malformed key: %d %s", r.status, r.body)
	}

	// The verification cache's counters reach the status and the metrics.
	var st struct {
		ETV struct {
			Hits, Misses int64
			HitRate      float64 `json:"hit_rate"`
		} `json:"codeVerification"`
	}
	do(t, srv, "GET", "/v1/status", "").decode(t, &st)
	// (Indexing primed the cache, so the checks since were hits.)
	if st.ETV.Hits < 1 || st.ETV.HitRate != float64(st.ETV.Hits)/float64(st.ETV.Hits+st.ETV.Misses) {
		t.Fatalf("status codeVerification %+v; want the checks counted", st.ETV)
	}
	text := string(do(t, srv, "GET", "/metrics", "").body)
	for _, want := range []string{
		fmt.Sprintf(`cairn_code_etv_cache_lookups{result="hit"} %d`, st.ETV.Hits),
		`cairn_store_rows{kind="code_entities"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
