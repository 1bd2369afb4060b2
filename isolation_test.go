package cairn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/mcpserver"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The isolation properties: for random stores and random questions,
// retrieval never returns a record outside the requested scope, a private
// thought without include_private, a thought marked for removal or
// forgotten, or a forgotten observation (a pin on one only with
// includeRedacted) — with either provider, through the
// engine, the HTTP API and MCP alike.

var isoWords = []string{"deploy", "token", "schema", "cache", "retry", "parser", "login", "billing",
	"staging", "migration", "timeout", "webhook", "invoice", "postgres", "redis", "queue"}

// isoStore is what a random store holds, as the test's oracle.
type isoStore struct {
	obs       map[string]memory.Observation
	forgotten map[string]bool
	thoughts  map[string]memory.Thought
	// removed holds thoughts marked for removal or forgotten.
	removed map[string]bool
	// secrets are words only forgotten observations and private thoughts
	// hold.
	secrets map[string]bool
}

func isoScope(rng *rand.Rand) memory.Scope {
	pick := func(prefix string, n int) string {
		if rng.IntN(4) == 0 {
			return ""
		}
		return fmt.Sprintf("%s%d", prefix, rng.IntN(n))
	}
	return memory.Scope{SessionID: pick("s", 4), RepoID: pick("r", 3), AgentID: pick("a", 2), UserID: pick("u", 2)}
}

func isoText(rng *rand.Rand, extra string) string {
	var ws []string
	for range 4 + rng.IntN(6) {
		ws = append(ws, isoWords[rng.IntN(len(isoWords))])
	}
	if extra != "" {
		ws = append(ws, extra)
	}
	return strings.Join(ws, " ")
}

// within reports whether a record's scope r meets the request's s: every
// key s gives must match exactly.
func within(r, s memory.Scope) bool {
	return (s.SessionID == "" || r.SessionID == s.SessionID) && (s.RepoID == "" || r.RepoID == s.RepoID) &&
		(s.AgentID == "" || r.AgentID == s.AgentID) && (s.UserID == "" || r.UserID == s.UserID)
}

func buildIsoStore(t *testing.T, ctx context.Context, eng *cairn.Engine, rng *rand.Rand) *isoStore {
	t.Helper()
	st := &isoStore{obs: map[string]memory.Observation{}, forgotten: map[string]bool{}, thoughts: map[string]memory.Thought{}, removed: map[string]bool{}, secrets: map[string]bool{}}
	var ids []string
	for i := range 60 + rng.IntN(60) {
		o, err := eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: isoText(rng, ""), ScopeIDs: isoScope(rng)})
		if err != nil {
			t.Fatal(err)
		}
		st.obs[o.ID] = o
		ids = append(ids, o.ID)
		if i%9 == 4 {
			// A capsule with a summary, in a scope of its own.
			c, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{Type: "session", Intent: isoText(rng, ""), ScopeIDs: isoScope(rng)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: isoText(rng, ""), CapsuleID: c.ID, ScopeIDs: c.Scope}); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: c.ID, Summary: &cairn.SummaryInput{Content: isoText(rng, "")}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Forget some observations, each holding a secret word of its own.
	for i := range 8 {
		secret := fmt.Sprintf("zqsecret%dx%d", rng.IntN(1000), i)
		o, err := eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: isoText(rng, secret), ScopeIDs: isoScope(rng)})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			// A pin on it, which may be returned only with includeRedacted.
			if _, err := eng.Pin(ctx, cairn.PinRequest{TargetType: memory.TargetObservation, TargetID: o.ID}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := eng.Forget(ctx, o.ID); err != nil {
			t.Fatal(err)
		}
		st.forgotten[o.ID] = true
		st.secrets[secret] = true
	}
	for range 6 {
		id, scope := ids[rng.IntN(len(ids))], isoScope(rng)
		if _, err := eng.Pin(ctx, cairn.PinRequest{TargetType: memory.TargetObservation, TargetID: id, ScopeIDs: &scope}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		private := rng.IntN(3) == 0
		extra := ""
		if private {
			extra = fmt.Sprintf("zqprivate%dx%d", rng.IntN(1000), i)
			st.secrets[extra] = true
		}
		th, err := eng.Think(ctx, cairn.ThinkRequest{Content: isoText(rng, extra), IsPrivate: private, ScopeIDs: isoScope(rng)})
		if err != nil {
			t.Fatal(err)
		}
		st.thoughts[th.ID] = th
		switch rng.IntN(6) {
		case 0:
			// Marked for removal: never retrieved, its text kept.
			if th, err = eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: th.ID, Status: memory.StatusRemoval}); err != nil {
				t.Fatal(err)
			}
			st.removed[th.ID] = true
		case 1:
			marker := fmt.Sprintf("zqforgot%dx%d", rng.IntN(1000), i)
			if th, err = eng.Think(ctx, cairn.ThinkRequest{Content: isoText(rng, marker), ScopeIDs: isoScope(rng)}); err != nil {
				t.Fatal(err)
			}
			if th, err = eng.ForgetThought(ctx, th.ID); err != nil {
				t.Fatal(err)
			}
			st.secrets[marker] = true
			st.removed[th.ID] = true
		}
		st.thoughts[th.ID] = th
	}
	return st
}

func isoQuery(rng *rand.Rand, st *isoStore) string {
	q := isoText(rng, "")
	if rng.IntN(2) == 0 {
		// Ask for a secret by its word.
		for s := range st.secrets {
			if rng.IntN(3) == 0 {
				q += " " + s
			}
		}
	}
	return q
}

// checkRetrieve asserts the isolation properties of one retrieve answer.
func checkRetrieve(t *testing.T, what string, st *isoStore, req cairn.RetrieveRequest, res cairn.RetrieveResult) {
	t.Helper()
	for _, p := range res.Pins {
		if !within(p.Pin.Scope, req.ScopeIDs) {
			t.Fatalf("%s: pin %s of scope %+v answers scope %+v", what, p.Pin.ID, p.Pin.Scope, req.ScopeIDs)
		}
		if o := p.Target.Observation; o != nil && st.forgotten[o.ID] && !req.IncludeRedacted {
			t.Fatalf("%s: the pin on forgotten %s came back without includeRedacted", what, o.ID)
		}
	}
	if s := res.CurrentSummary; s != nil && !within(s.Scope, req.ScopeIDs) {
		t.Fatalf("%s: current summary %s of scope %+v answers scope %+v", what, s.ID, s.Scope, req.ScopeIDs)
	}
	for _, c := range res.Candidates {
		switch {
		case c.Entity.Observation != nil:
			o := c.Entity.Observation
			if !within(o.Scope, req.ScopeIDs) {
				t.Fatalf("%s: observation %s of scope %+v answers scope %+v", what, o.ID, o.Scope, req.ScopeIDs)
			}
			if st.forgotten[o.ID] {
				t.Fatalf("%s: forgotten observation %s is a candidate", what, o.ID)
			}
		case c.Entity.Summary != nil:
			if s := c.Entity.Summary; !within(s.Scope, req.ScopeIDs) {
				t.Fatalf("%s: summary %s of scope %+v answers scope %+v", what, s.ID, s.Scope, req.ScopeIDs)
			}
		}
	}
	// Provenance echoes the question (which may ask for a secret); the
	// records returned must not hold one.
	raw, _ := json.Marshal([]any{res.Pins, res.CurrentSummary, res.Candidates})
	for s := range st.secrets {
		if bytes.Contains(raw, []byte(s)) {
			t.Fatalf("%s: the answer holds %q, written only in a forgotten observation or a private thought", what, s)
		}
	}
}

func checkInnerVoice(t *testing.T, what string, st *isoStore, req retrieve.InnerVoiceRequest, res retrieve.InnerVoiceResult) {
	t.Helper()
	for _, s := range res.Snippets {
		if th, ok := st.thoughts[s.ID]; ok && th.IsPrivate && !req.IncludePrivate {
			t.Fatalf("%s: private thought %s without include_private", what, s.ID)
		}
		if st.removed[s.ID] {
			t.Fatalf("%s: thought %s, marked for removal or forgotten, was retrieved", what, s.ID)
		}
	}
	if req.IncludePrivate {
		return
	}
	raw, _ := json.Marshal(res.Snippets)
	for s := range st.secrets {
		if bytes.Contains(raw, []byte(s)) {
			t.Fatalf("%s: the answer holds the private word %q", what, s)
		}
	}
}

func checkThoughts(t *testing.T, what string, req cairn.ThoughtsRequest, res cairn.ThoughtList) {
	t.Helper()
	for _, th := range res.Thoughts {
		if th.IsPrivate && !req.IncludePrivate {
			t.Fatalf("%s: private thought %s without include_private", what, th.ID)
		}
		if !within(th.Scope, req.ScopeIDs) {
			t.Fatalf("%s: thought %s of scope %+v answers scope %+v", what, th.ID, th.Scope, req.ScopeIDs)
		}
	}
}

// faces calls a tool through the engine, HTTP and MCP; each returns the
// JSON result.
type faces struct {
	eng *cairn.Engine
	srv *httptest.Server
	mcp *mcp.ClientSession
}

func newFaces(t *testing.T, eng *cairn.Engine) *faces {
	t.Helper()
	srv := httptest.NewServer(httpapi.New(eng, nil))
	t.Cleanup(srv.Close)
	ms, err := mcpserver.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := ms.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "isolation-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &faces{eng: eng, srv: srv, mcp: cs}
}

// call returns the engine's, HTTP's and MCP's JSON answers to one call.
func (f *faces) call(t *testing.T, tool string, args any) (engine, viaHTTP, viaMCP []byte) {
	t.Helper()
	ctx := context.Background()
	in, _ := json.Marshal(args)
	out, err := f.eng.CallJSON(ctx, tool, in)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, in, err)
	}
	engine, _ = json.Marshal(out)

	var tl cairn.Tool
	for _, x := range cairn.Tools() {
		if x.Name == tool {
			tl = x
		}
	}
	var resp *http.Response
	if tl.Method == http.MethodGet {
		// A GET takes its arguments as query parameters, nested objects'
		// fields by their own names.
		var m map[string]any
		json.Unmarshal(in, &m)
		q := url.Values{}
		var add func(m map[string]any)
		add = func(m map[string]any) {
			for k, v := range m {
				if sub, ok := v.(map[string]any); ok {
					add(sub)
					continue
				}
				q.Set(k, fmt.Sprint(v))
			}
		}
		add(m)
		resp, err = http.Get(f.srv.URL + tl.Path + "?" + q.Encode())
	} else {
		resp, err = http.Post(f.srv.URL+tl.Path, "application/json", bytes.NewReader(in))
	}
	if err != nil {
		t.Fatal(err)
	}
	viaHTTP, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %s: %d %s", tl.Path, resp.StatusCode, viaHTTP)
	}

	var m map[string]any
	json.Unmarshal(in, &m)
	res, err := f.mcp.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: m})
	if err != nil || res.IsError {
		t.Fatalf("MCP %s: %v %+v", tool, err, res)
	}
	viaMCP, _ = json.Marshal(res.StructuredContent)
	return engine, viaHTTP, viaMCP
}

// sameJSON compares two JSON documents as values, leaving out the
// measured latency (latency_ms) that differs between any two calls.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	for _, v := range []any{x, y} {
		if m, ok := v.(map[string]any); ok {
			if d, ok := m["diagnostics"].(map[string]any); ok {
				delete(d, "latency_ms")
			}
		}
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// short cuts a JSON answer for a failure message.
func short(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

func TestIsolationProperties(t *testing.T) {
	ctx := context.Background()
	// What the answers held, so the properties are not vacuous.
	var scopedCands, privateSeen, redactedPins int
	stores, questions := 3, 60
	if testing.Short() {
		stores, questions = 1, 20
	}
	for seed := range uint64(stores) {
		rng := rand.New(rand.NewPCG(seed, 77))
		now := time.UnixMilli(1_800_000_000_000)
		s, err := cairn.SettingsFromEnv(func(k string) string {
			if k == "SURR_ENABLE_INNER_VOICE" {
				return "1"
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		o, err := s.Options()
		if err != nil {
			t.Fatal(err)
		}
		o.Now = func() time.Time { return now }
		eng, err := cairn.Open(filepath.Join(t.TempDir(), "iso.db"), o)
		if err != nil {
			t.Fatal(err)
		}
		st := buildIsoStore(t, ctx, eng, rng)
		f := newFaces(t, eng)
		for i := range questions {
			scope := isoScope(rng)
			if rng.IntN(5) == 0 {
				scope = memory.Scope{}
			}
			what := fmt.Sprintf("store %d, question %d", seed, i)
			n := 1000
			req := cairn.RetrieveRequest{Query: isoQuery(rng, st), ScopeIDs: scope, MaxCandidates: &n, IncludeRedacted: rng.IntN(3) == 0,
				Provider: []string{"hybrid", "local-fts"}[rng.IntN(2)]}
			e, h, m := f.call(t, "retrieve", req)
			if !sameJSON(e, h) || !sameJSON(e, m) {
				t.Fatalf("%s: the faces answer retrieve differently:\nengine %s\nHTTP   %s\nMCP    %s", what, short(e), short(h), short(m))
			}
			var res cairn.RetrieveResult
			if err := json.Unmarshal(e, &res); err != nil {
				t.Fatal(err)
			}
			checkRetrieve(t, what+" ("+req.Provider+")", st, req, res)
			if req.ScopeIDs != (memory.Scope{}) {
				scopedCands += len(res.Candidates)
			}
			for _, p := range res.Pins {
				if o := p.Target.Observation; o != nil && st.forgotten[o.ID] {
					redactedPins++
				}
			}

			topK := 50
			ivq := retrieve.InnerVoiceRequest{Query: isoQuery(rng, st), TopK: &topK, IncludePrivate: rng.IntN(3) == 0}
			e, h, m = f.call(t, "inner_voice_retrieve", ivq)
			if !sameJSON(e, h) || !sameJSON(e, m) {
				t.Fatalf("%s: the faces answer inner_voice_retrieve differently:\nengine %s\nHTTP   %s\nMCP    %s", what, short(e), short(h), short(m))
			}
			var iv retrieve.InnerVoiceResult
			if err := json.Unmarshal(e, &iv); err != nil {
				t.Fatal(err)
			}
			checkInnerVoice(t, what, st, ivq, iv)
			for _, sn := range iv.Snippets {
				if st.thoughts[sn.ID].IsPrivate {
					privateSeen++
				}
			}

			treq := cairn.ThoughtsRequest{ScopeIDs: isoScope(rng), IncludePrivate: rng.IntN(2) == 0, Limit: 1000}
			e, h, m = f.call(t, "thoughts_list", treq)
			if !sameJSON(e, h) || !sameJSON(e, m) {
				t.Fatalf("%s: the faces answer thoughts differently", what)
			}
			var tl cairn.ThoughtList
			if err := json.Unmarshal(e, &tl); err != nil {
				t.Fatal(err)
			}
			checkThoughts(t, what, treq, tl)
			// The oracle: every thought of the scope the filter allows is listed.
			want := 0
			for _, th := range st.thoughts {
				if within(th.Scope, treq.ScopeIDs) && (!th.IsPrivate || treq.IncludePrivate) {
					want++
				}
			}
			if len(tl.Thoughts) != want {
				t.Fatalf("%s: thoughts lists %d, the store holds %d in scope %+v (private %v)", what, len(tl.Thoughts), want, treq.ScopeIDs, treq.IncludePrivate)
			}
		}
		eng.Close()
	}
	if scopedCands == 0 || privateSeen == 0 || redactedPins == 0 {
		t.Fatalf("the answers held %d scoped candidates, %d private thoughts (asked for), %d pins on forgotten records (asked for): the properties were not exercised",
			scopedCands, privateSeen, redactedPins)
	}
	t.Logf("checked %d scoped candidates, %d private thoughts asked for, %d pins on forgotten records asked for", scopedCands, privateSeen, redactedPins)
}
