package cairn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/internal/sample"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

var ctx = context.Background()

// openSample opens a fresh database holding the bundled sample, with the
// clock fixed shortly after it.
func openSample(t testing.TB, opts *cairn.Options) *cairn.Engine {
	t.Helper()
	return openSampleAt(t, filepath.Join(t.TempDir(), "cairn.db"), opts)
}

// openAt opens the database at path with the sample's clock.
func openAt(t testing.TB, path string, opts *cairn.Options) *cairn.Engine {
	t.Helper()
	if opts == nil {
		opts = &cairn.Options{}
	}
	if opts.Now == nil {
		now := time.UnixMilli(sample.Now)
		opts.Now = func() time.Time { return now }
	}
	eng, err := cairn.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

func openSampleAt(t testing.TB, path string, opts *cairn.Options) *cairn.Engine {
	t.Helper()
	eng := openAt(t, path, opts)
	if _, err := eng.Import(ctx, bytes.NewReader(sample.AgentSessions), cairn.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	return eng
}

// export is every record as JSON Lines: two equal exports mean two equal
// databases.
func export(t testing.TB, eng *cairn.Engine) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := eng.Export(ctx, &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

const repo = "github.com/acme/shop"

func TestRetrieveBadInput(t *testing.T) {
	eng := openSample(t, nil)
	before := export(t, eng)
	for _, tc := range []struct {
		name string
		req  string // JSON, decoded as a face would
		want string
	}{
		{"empty query", `{"query":""}`, "query is empty"},
		{"whitespace query", `{"query":" \t\n "}`, "query is empty"},
		{"no words", `{"query":"?!... ***"}`, "no words"},
		{"unknown scope key", `{"query":"x","scopeIds":{"project":"p"}}`, `unknown scope key "project"`},
		{"empty scope value", `{"query":"x","scopeIds":{"sessionId":""}}`, "sessionId is empty"},
		{"non-string scope", `{"query":"x","scopeIds":{"repoId":7}}`, "must be a string"},
		{"negative budget", `{"query":"x","tokenBudget":-1}`, "tokenBudget -1 is out of range"},
		{"zero budget", `{"query":"x","tokenBudget":0}`, "tokenBudget 0 is out of range"},
		{"absurd budget", `{"query":"x","tokenBudget":1000000000000}`, "out of range"},
		{"negative count", `{"query":"x","maxCandidates":-3}`, "maxCandidates -3 is out of range"},
		{"absurd count", `{"query":"x","maxCandidates":100000}`, "out of range"},
		{"NUL byte", `{"query":"a\u0000b"}`, "NUL"},
		{"unknown syntax", `{"query":"x","syntax":"regex"}`, "unknown query syntax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req cairn.RetrieveRequest
			err := json.Unmarshal([]byte(tc.req), &req)
			if err == nil {
				_, err = eng.Retrieve(ctx, req)
			}
			if memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want invalid_params mentioning %q", err, tc.want)
			}
		})
	}
	// JSON decoding replaces invalid UTF-8; the Go API sees it raw.
	for _, q := range []string{"caf\xe9", "\xff\xfe"} {
		if _, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: q}); memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("query %q: %v; want invalid_params about UTF-8", q, err)
		}
	}
	if export(t, eng) != before {
		t.Fatal("bad retrievals changed the database")
	}
}

func TestWriteBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	eng := openSampleAt(t, path, nil)
	capped := openAt(t, path, &cairn.Options{MaxContentBytes: 64})
	before := export(t, eng)
	msg := memory.KindMessage
	for _, tc := range []struct {
		name string
		code memory.Code
		do   func() error
	}{
		{"invalid UTF-8 content", memory.CodeInvalidParams, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{Kind: msg, Content: "bad \xff\xfe"})
			return err
		}},
		{"NUL in content", memory.CodeInvalidParams, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{Kind: msg, Content: "a\x00b"})
			return err
		}},
		{"content over the cap", memory.CodeInvalidParams, func() error {
			_, err := capped.Log(ctx, cairn.LogRequest{Kind: msg, Content: strings.Repeat("x", 65)})
			return err
		}},
		{"content over the default 1 MiB cap", memory.CodeInvalidParams, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{Kind: msg, Content: strings.Repeat("x", memory.DefaultMaxContentBytes+1)})
			return err
		}},
		{"empty content", memory.CodeInvalidParams, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{Kind: msg, Content: "  "})
			return err
		}},
		{"unknown kind", memory.CodeInvalidParams, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{Kind: "thought", Content: "x"})
			return err
		}},
		{"provenance not an object", memory.CodeInvalidParams, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{Kind: msg, Content: "x", Provenance: json.RawMessage(`[1,2]`)})
			return err
		}},
		{"negative ts", memory.CodeInvalidParams, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{Kind: msg, Content: "x", TS: ptr(int64(-1))})
			return err
		}},
		{"duplicate id", memory.CodeConflict, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{ID: "obs_s1_00", Kind: msg, Content: "x"})
			return err
		}},
		{"batch with one bad record", memory.CodeInvalidParams, func() error {
			_, err := eng.LogBatch(ctx, []cairn.LogRequest{{Kind: msg, Content: "fine"}, {Kind: msg, Content: ""}})
			return err
		}},
		{"closed capsule", memory.CodeConflict, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{Kind: msg, Content: "late", CapsuleID: "cap_s1"})
			return err
		}},
		{"pin on a missing target", memory.CodeNotFound, func() error {
			_, err := eng.Pin(ctx, cairn.PinRequest{TargetID: "obs_nope"})
			return err
		}},
		{"pin with a bad ttl", memory.CodeInvalidParams, func() error {
			_, err := eng.Pin(ctx, cairn.PinRequest{TargetID: "obs_s1_00", TTLSeconds: ptr(int64(-5))})
			return err
		}},
		{"pin expiring in the past", memory.CodeInvalidParams, func() error {
			_, err := eng.Pin(ctx, cairn.PinRequest{TargetID: "obs_s1_00", ExpiresAt: ptr(int64(1))})
			return err
		}},
		{"pin with a bad target type", memory.CodeInvalidParams, func() error {
			_, err := eng.Pin(ctx, cairn.PinRequest{TargetID: "obs_s1_00", TargetType: "capsule"})
			return err
		}},
		{"close a closed capsule", memory.CodeConflict, func() error {
			_, err := eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: "cap_s1"})
			return err
		}},
		{"close a missing capsule", memory.CodeNotFound, func() error {
			_, err := eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: "cap_nope"})
			return err
		}},
		{"close with a bad summary", memory.CodeInvalidParams, func() error {
			_, err := eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: "cap_s2", Summary: &cairn.SummaryInput{Content: "s", Confidence: ptr(1.5)}})
			return err
		}},
		{"second open capsule for a session", memory.CodeConflict, func() error {
			_, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{ScopeIDs: memory.Scope{SessionID: "s2"}})
			return err
		}},
		{"bad capsule type", memory.CodeInvalidParams, func() error {
			_, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{Type: "Session Type!"})
			return err
		}},
		{"forget a missing observation", memory.CodeNotFound, func() error {
			_, err := eng.Forget(ctx, "obs_nope")
			return err
		}},
		{"unpin a missing pin", memory.CodeNotFound, func() error { return eng.Unpin(ctx, "pin_nope") }},
		{"id with control characters", memory.CodeInvalidParams, func() error {
			_, err := eng.Log(ctx, cairn.LogRequest{ID: "bad\nid", Kind: msg, Content: "x"})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if memory.CodeOf(err) != tc.code {
				t.Fatalf("error %v; want %s", err, tc.code)
			}
			if after := export(t, eng); after != before {
				t.Fatal("a refused write changed the database")
			}
		})
	}
}

// TestFTSSyntaxErrors: in fts syntax a malformed query is a typed
// invalid_params error, never a silent empty list and never an internal
// error; well-formed FTS5 syntax works.
func TestFTSSyntaxErrors(t *testing.T) {
	eng := openSample(t, nil)
	for _, q := range []string{"?", `"session expired`, "speaker:user", "user:", "C++", "well-being", "AND", "(webhook", "NEAR(", "a OR"} {
		_, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: q, Syntax: memory.SyntaxFTS})
		if memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), "malformed FTS query") {
			t.Errorf("fts %q: %v; want invalid_params: malformed FTS query", q, err)
		}
		if strings.Contains(err.Error(), "SQL") || strings.Contains(err.Error(), "SELECT") {
			t.Errorf("fts %q: error leaks SQL: %v", q, err)
		}
	}
	// A query past the engine's own limits is refused in cairn's words,
	// not the engine's ("parser stack overflow").
	deep := strings.Repeat("(", 2000) + "x" + strings.Repeat(")", 2000)
	_, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: deep, Syntax: memory.SyntaxFTS})
	if pub := memory.Public(err); pub.Code != memory.CodeInvalidParams || !strings.Contains(pub.Message, "nests too deeply") || strings.Contains(pub.Message, "parser") {
		t.Errorf("a deeply nested fts query: %v", err)
	}
	for q, want := range map[string]string{
		`"session expired"`:               "obs_s1_00",
		`webhook AND idempotent`:          "obs_s2_02",
		`migrat* NOT staging`:             "obs_s2_04",
		`clock OR skew`:                   "obs_s1_05",
		`NEAR(duplicate charges, 2)`:      "obs_s2_00",
		`content: "background job"`:       "obs_s2_11",
		`^assistant opened`:               "obs_s1_11",
		`(webhook OR stripe) AND retries`: "obs_s2_02",
	} {
		res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: q, Syntax: memory.SyntaxFTS})
		if err != nil {
			t.Errorf("fts %q: %v", q, err)
			continue
		}
		found := false
		for _, c := range res.Candidates {
			found = found || c.Entity.ID() == want
		}
		if !found {
			t.Errorf("fts %q: %s not among %d candidates", q, want, len(res.Candidates))
		}
	}
}

// TestTextQueriesAreSafe: by default the query is user text; anything
// goes, and it is searched by its words.
func TestTextQueriesAreSafe(t *testing.T) {
	eng := openSample(t, nil)
	for _, q := range []string{
		"why did checkout say session expired?", `"session expired`, "speaker:user", "user:", "C++ webhook",
		"well-being of the webhook", "webhook AND", "(webhook", "NEAR(webhook", "migrat*", "-webhook", "^webhook",
		"webhook OR", "'; DROP TABLE observations; --", "Webhook\u00a0idempotent 🎉", "ＷＥＢＨＯＯＫ", "a\tb\nwebhook",
	} {
		res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: q})
		if err != nil {
			t.Errorf("text %q: %v", q, err)
			continue
		}
		if len(res.Candidates) == 0 {
			t.Errorf("text %q: no candidates for words %v", q, res.Provenance.SearchTerms)
		}
		if res.Provenance.Syntax != memory.SyntaxText || len(res.Provenance.SearchTerms) == 0 {
			t.Errorf("text %q: provenance %+v", q, res.Provenance)
		}
	}
	if st, _ := eng.Stats(ctx); st.Observations != 26 {
		t.Fatal("a query changed the database")
	}
}

// TestTextQueryRanksMatchesOfMoreWordsFirst: words are OR'ed and ranked by
// bm25, so records holding all of a query's words come first.
func TestTextQueryRanksMatchesOfMoreWordsFirst(t *testing.T) {
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "c.db"), &cairn.Options{Now: func() time.Time { return time.UnixMilli(10_000_000) }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var batch []cairn.LogRequest
	add := func(id, text string) {
		batch = append(batch, cairn.LogRequest{ID: id, Kind: memory.KindMessage, Content: text, TS: ptr(int64(10_000_000)), ScopeIDs: memory.Scope{RepoID: "r"}})
	}
	add("both-1", "the authentication bug is back in production")
	add("both-2", "bug report: authentication fails after the password reset")
	add("auth-1", "authentication now goes through the new identity provider")
	add("auth-2", "rotated the authentication secrets")
	add("bug-1", "fixed an off-by-one bug in pagination")
	add("bug-2", "the flaky test bug was a race in the cache")
	for i := range 30 {
		add(strings.Repeat("z", 1)+string(rune('a'+i%26))+string(rune('a'+i/26)), "routine refactoring of the billing module and its tests")
	}
	if _, err := eng.LogBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, provider := range []string{"local-fts", "hybrid"} {
		res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "authentication bug", Provider: provider})
		if err != nil {
			t.Fatal(err)
		}
		if provider == "local-fts" && len(res.Candidates) != 6 {
			t.Fatalf("%d candidates; want the 6 records holding either word", len(res.Candidates))
		}
		if len(res.Candidates) < 6 {
			t.Fatalf("%s: %d candidates; want at least the 6 records holding either word", provider, len(res.Candidates))
		}
		for i, c := range res.Candidates[:2] {
			if !strings.HasPrefix(c.Entity.ID(), "both-") {
				t.Fatalf("%s: candidate %d is %s; records with both words must come first", provider, i, c.Entity.ID())
			}
		}
	}
}

func TestDefaultMaxCandidatesIsTheContracts(t *testing.T) {
	env := loadParity(t)
	env.now = time.UnixMilli(1707091200000)
	res, err := env.eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "Caroline Melanie painting family"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Provenance.MaxCandidates != 50 || len(res.Candidates) != 50 {
		t.Fatalf("default: %d candidates, max %d; want the contract's 50", len(res.Candidates), res.Provenance.MaxCandidates)
	}
}

// TestTokenBudgetOnRealData: what comes back fits the budget (unless pins
// and the summary alone exceed it), and totalCandidates counts the
// candidates before the cut.
func TestTokenBudgetOnRealData(t *testing.T) {
	eng := openSample(t, nil)
	full, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "webhook charges invoice migration", ScopeIDs: memory.Scope{RepoID: repo}})
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{1, 40, 100, 200, 400, 100000} {
		res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "webhook charges invoice migration", ScopeIDs: memory.Scope{RepoID: repo}, TokenBudget: &budget})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Provenance
		fixed := 0
		for _, pin := range res.Pins {
			fixed += (len([]rune(pin.Target.Content())) + 3) / 4
		}
		if p.TotalCandidates != len(full.Candidates) || (p.TokensUsed > budget && len(res.Candidates) > 0) ||
			p.TruncatedDueToTokenBudget != (len(res.Candidates) < len(full.Candidates)) || len(res.Pins) != len(full.Pins) {
			t.Errorf("budget %d: %+v", budget, p)
		}
		if fixed <= budget && p.TokensUsed > budget {
			t.Errorf("budget %d: used %d", budget, p.TokensUsed)
		}
	}
}

func TestRetrieveIsByteIdentical(t *testing.T) {
	var outs []string
	for range 2 {
		eng := openSample(t, nil)
		for range 2 {
			res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "webhook retried duplicate", ScopeIDs: memory.Scope{SessionID: "s2", RepoID: repo}, TokenBudget: ptr(500)})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res)
			outs = append(outs, string(b))
		}
	}
	for _, o := range outs[1:] {
		if o != outs[0] {
			t.Fatal("the same data, query and clock gave different JSON")
		}
	}
}

func TestForgetThroughRetrieval(t *testing.T) {
	eng := openSample(t, nil)
	if _, err := eng.Pin(ctx, cairn.PinRequest{TargetID: "obs_s1_04", Reason: "the failing test", ScopeIDs: &memory.Scope{RepoID: repo}}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Forget(ctx, "obs_s1_04"); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "TestValidateToken_ClockSkew expected nil error", ScopeIDs: memory.Scope{RepoID: repo}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Candidates {
		if c.Entity.ID() == "obs_s1_04" || strings.Contains(c.Entity.Content(), "[redacted]") {
			t.Fatal("a forgotten observation is a candidate")
		}
	}
	for _, p := range res.Pins {
		if p.Target.ID() == "obs_s1_04" {
			t.Fatal("a pin on a forgotten observation shows without includeRedacted")
		}
	}
	res, _ = eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "anything", ScopeIDs: memory.Scope{RepoID: repo}, IncludeRedacted: true})
	shown := false
	for _, p := range res.Pins {
		if p.Target.ID() == "obs_s1_04" {
			shown = p.Target.Content() == memory.RedactedContent && p.Target.Redacted()
		}
	}
	if !shown {
		t.Fatal("with includeRedacted the pin shows its target as [redacted]")
	}
}

func TestLogJoinsOpenCapsuleAndClose(t *testing.T) {
	eng := openSample(t, nil)
	o, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindCommand, Content: "go test ./internal/payments/... -> ok", ScopeIDs: memory.Scope{SessionID: "s2"}})
	if err != nil {
		t.Fatal(err)
	}
	if o.Scope.RepoID != repo || !strings.HasPrefix(o.ID, "obs_") {
		t.Fatalf("logged %+v: want the capsule's repo filled in and an obs_ id", o)
	}
	res, err := eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: "cap_s2", Summary: &cairn.SummaryInput{Content: "Webhook made idempotent; invoices render in the background.", EvidenceRefs: []string{o.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Capsule
	if c.Status != memory.CapsuleClosed || c.ObservationIDs[len(c.ObservationIDs)-1] != o.ID || res.Summary == nil || res.Summary.ID != "sum_s2" || res.Summary.Confidence != 1 {
		t.Fatalf("closed %+v with summary %+v", c, res.Summary)
	}
	r, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "invoices", ScopeIDs: memory.Scope{SessionID: "s2"}})
	if err != nil || r.CurrentSummary != nil {
		t.Fatalf("after closing, no current summary: %+v %v", r.CurrentSummary, err)
	}
	if _, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{ScopeIDs: memory.Scope{SessionID: "s2", RepoID: repo}}); err != nil {
		t.Fatalf("a session may open a new capsule after closing: %v", err)
	}
}

func TestImportExportRoundTrip(t *testing.T) {
	eng := openSample(t, nil)
	if _, err := eng.Forget(ctx, "obs_s1_03"); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Pin(ctx, cairn.PinRequest{TargetID: "sum_s1", TTLSeconds: ptr(int64(3600))}); err != nil {
		t.Fatal(err)
	}
	first := export(t, eng)
	copyEng, err := cairn.Open(filepath.Join(t.TempDir(), "copy.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer copyEng.Close()
	rep, err := copyEng.Import(ctx, strings.NewReader(first), cairn.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Observations != 26 || rep.Capsules != 2 || rep.Summaries != 2 || rep.Pins != 2 {
		t.Fatalf("report %+v", rep)
	}
	if second := export(t, copyEng); second != first {
		t.Fatal("export → import → export is not the identity")
	}
	a, _ := eng.Stats(ctx)
	b, _ := copyEng.Stats(ctx)
	a.Path, b.Path, a.SizeBytes, b.SizeBytes = "", "", 0, 0
	if a != b {
		t.Fatalf("stats differ: %+v vs %+v", a, b)
	}
}

func TestImportIsAllOrNothingPerFile(t *testing.T) {
	eng := openSample(t, nil)
	before := export(t, eng)
	lines := []string{
		`{"kind":"message","content":"first new line","scopeIds":{"repoId":"r"}}`,
		`{"kind":"command","content":"second","provenance":{"cmd":"ls"}}`,
		``,
		`{"kind":"message","content":"third"}`,
		`{"kind":"bogus","content":"fifth line is bad"}`,
	}
	_, err := eng.Import(ctx, strings.NewReader(strings.Join(lines, "\n")), cairn.ImportOptions{})
	if memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), "line 5") {
		t.Fatalf("error %v; want invalid_params naming line 5", err)
	}
	for name, bad := range map[string]string{
		"unknown field":  `{"kind":"message","content":"x","colour":"red"}`,
		"not JSON":       `{"kind":"message",`,
		"not an object":  `[1,2,3]`,
		"dangling pin":   `{"pin":{"id":"p","targetType":"observation","targetId":"ghost","createdAt":1,"scopeIds":{}}}`,
		"duplicate id":   `{"observation":{"id":"obs_s1_00","kind":"message","content":"x","provenance":{},"ts":1,"scopeIds":{},"redacted":false}}`,
		"bad scope":      `{"kind":"message","content":"x","scopeIds":{"team":"a"}}`,
		"closed capsule": `{"kind":"message","content":"x","capsuleId":"cap_s1"}`,
	} {
		_, err := eng.Import(ctx, strings.NewReader(lines[0]+"\n"+bad), cairn.ImportOptions{})
		if err == nil || memory.CodeOf(err) == memory.CodeInternal {
			t.Errorf("%s: %v; want a typed error", name, err)
		}
	}
	if _, err := eng.Import(ctx, strings.NewReader("\n \n"), cairn.ImportOptions{}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Errorf("empty file: %v; want invalid_params", err)
	}
	if export(t, eng) != before {
		t.Fatal("a failed import changed the database")
	}
	var progress []int
	rep, err := eng.Import(ctx, strings.NewReader(strings.Join(lines[:4], "\n")), cairn.ImportOptions{Progress: func(done, total int) { progress = append(progress, done, total) }})
	if err != nil || rep.Observations != 3 || len(progress) < 2 || progress[len(progress)-2] != 3 || progress[len(progress)-1] != 3 {
		t.Fatalf("import of the good lines: %+v %v, progress %v", rep, err, progress)
	}
}

// knowledgeOptions turn the inner voice on, with the hash embedder.
func knowledgeOptions() *cairn.Options {
	return &cairn.Options{Embedder: embed.Hash{Dim: 64}, InnerVoice: voiceOn()}
}

// openKnowledge opens the sample with thoughts (private, tagged, a summary
// of others) and a knowledge graph (entities with data, an observation, an
// edge) added through the engine.
func openKnowledge(t *testing.T) *cairn.Engine {
	t.Helper()
	eng := openSample(t, knowledgeOptions())
	th1 := think(t, eng, cairn.ThinkRequest{ID: "th_1", Content: "federation webhooks retry with backoff", Origin: memory.OriginHuman, Tags: []string{"ops", "webhooks"}})
	th2 := think(t, eng, cairn.ThinkRequest{ID: "th_2", Content: "the federation signing key rotates monthly", Origin: memory.OriginTool, Tags: []string{"secrets"}, IsPrivate: true,
		ScopeIDs: memory.Scope{RepoID: repo}})
	think(t, eng, cairn.ThinkRequest{ID: "th_3", Content: "federation webhooks need backoff and key rotation", IsSummary: true, SummaryOf: []string{th1.ID, th2.ID},
		Pipeline: "inner_voice", Significance: ptr(0.8)})
	for _, req := range []cairn.EntityRequest{
		{EntityID: "ent_gateway", Name: "gateway", Type: "service", Data: json.RawMessage(`{"team": "edge", "tier": 1}`), ScopeIDs: memory.Scope{RepoID: repo}},
		{EntityID: "ent_ledger", Name: "ledger", Type: "service", Data: json.RawMessage(`{"store":"postgres"}`), ScopeIDs: memory.Scope{RepoID: repo}},
	} {
		if _, err := eng.CreateEntity(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	observe(t, eng, "ent_gateway", "the federation gateway retries twice before failing")
	if _, err := eng.CreateEdge(ctx, cairn.EdgeRequest{Source: "ent_gateway", Target: "ent_ledger", Relation: "depends_on", Data: json.RawMessage(`{"since":2021}`)}); err != nil {
		t.Fatal(err)
	}
	return eng
}

func TestImportExportKnowledgeRoundTrip(t *testing.T) {
	eng := openKnowledge(t)
	first := export(t, eng)
	for _, want := range []string{`{"thought":{"id":"th_2"`, `"is_private":true`, `"summary_of":["th_1","th_2"]`, `{"kg_entity":{"id":"ent_gateway"`,
		`"data":{"team":"edge","tier":1}`, `{"kg_observation":`, `{"kg_edge":`} {
		if !strings.Contains(first, want) {
			t.Fatalf("the export lacks %s:\n%s", want, first)
		}
	}
	if strings.Contains(first, "vector") || strings.Contains(first, "embedding") {
		t.Fatal("the export holds vectors; they are derived")
	}
	copyEng := openAt(t, filepath.Join(t.TempDir(), "copy.db"), knowledgeOptions())
	rep, err := copyEng.Import(ctx, strings.NewReader(first), cairn.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Observations != 26 || rep.Capsules != 2 || rep.Summaries != 2 || rep.Pins != 1 ||
		rep.Thoughts != 3 || rep.Entities != 2 || rep.EntityObservations != 1 || rep.Edges != 1 {
		t.Fatalf("report %+v", rep)
	}
	// Every record was embedded after the import: 26 observations, 2
	// summaries, 3 thoughts, 2 entities, 1 observation, 1 edge.
	if rep.Embedded != 35 || rep.Pending != 0 {
		t.Fatalf("embedded %d, pending %d; want 35 and 0", rep.Embedded, rep.Pending)
	}
	if second := export(t, copyEng); second != first {
		t.Fatalf("export → import → export is not the identity:\n%s\n%s", first, second)
	}
	a, _ := eng.Stats(ctx)
	b, _ := copyEng.Stats(ctx)
	a.Path, b.Path, a.SizeBytes, b.SizeBytes = "", "", 0, 0
	if a != b {
		t.Fatalf("stats differ: %+v vs %+v", a, b)
	}
	// The copy recalls what the original recalls: thoughts and the graph.
	for _, req := range []retrieve.InnerVoiceRequest{
		{Query: "federation webhooks backoff gateway retries", Mix: ptr(0.5)},
		{Query: "federation signing key rotation", IncludePrivate: true},
		{Query: "gateway depends_on ledger", Mix: ptr(1.0)},
	} {
		want, got := voice(t, eng, req), voice(t, copyEng, req)
		if len(got.Snippets) == 0 {
			t.Fatalf("%q: the copy recalls nothing", req.Query)
		}
		if !sameSnippets(want.Snippets, got.Snippets) {
			t.Fatalf("%q: the copy recalls\n%+v\nthe original\n%+v", req.Query, got.Snippets, want.Snippets)
		}
	}
	// (The inner voice draws on thoughts, entities and their observations;
	// edges are embedded, as rep.Pending 0 shows, but not recalled.)
	sources := map[string]bool{}
	for _, req := range []retrieve.InnerVoiceRequest{
		{Query: "federation webhooks backoff gateway retries", Mix: ptr(0.5)},
		{Query: "gateway service team edge", Mix: ptr(1.0)},
	} {
		for _, sn := range voice(t, copyEng, req).Snippets {
			sources[sn.SourceType] = true
		}
	}
	for _, src := range []string{"thought", "kg_entity", "kg_observation"} {
		if !sources[src] {
			t.Errorf("no %s recalled from the copy (got %v)", src, sources)
		}
	}
	// The private thought stays private in the copy.
	for _, sn := range voice(t, copyEng, retrieve.InnerVoiceRequest{Query: "federation signing key rotation"}).Snippets {
		if sn.ID == "th_2" {
			t.Fatal("the imported private thought is recalled without include_private")
		}
	}
}

// sameSnippets compares two recalls, leaving out nothing but timing.
func sameSnippets(a, b []retrieve.Snippet) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestImportKnowledgeIsAllOrNothingPerFile(t *testing.T) {
	eng := openKnowledge(t)
	edges, err := eng.Edges(ctx, cairn.EdgesRequest{})
	if err != nil || len(edges.Edges) != 1 {
		t.Fatalf("edges %+v %v", edges, err)
	}
	view, _ := eng.Entity(ctx, "ent_gateway")
	before := export(t, eng)
	// Four good lines; the edge comes before the entity it starts from.
	good := []string{
		`{"kg_edge":{"id":"edge_new","source":"ent_new","target":"ent_gateway","relation":"calls","data":{},"created_at":1,"scopeIds":{"repoId":"` + repo + `"}}}`,
		`{"thought":{"id":"th_new","content":"nightly batch needs the federation gateway","origin":"human","tags":["batch"],"is_private":false,"status":"active","significance":0.5,"is_summary":false,"summary_of":[],"created_at":1,"scopeIds":{}}}`,
		`{"kg_entity":{"id":"ent_new","name":"nightly batch","type":"job","data":{"cron":"0 3 * * *"},"created_at":1,"updated_at":1,"scopeIds":{"repoId":"` + repo + `"}}}`,
		`{"kg_observation":{"id":"kgo_new","entity_id":"ent_new","content":"runs at three","created_at":1,"scopeIds":{}}}`,
	}
	thought := func(fields string) string {
		return `{"thought":{"id":"th_bad","content":"x","origin":"model","tags":[],"is_private":false,"status":"active","significance":0.5,"is_summary":false,"summary_of":[],"created_at":1,"scopeIds":{}` + fields + `}}`
	}
	edge := func(id, source, target, relation string) string {
		return `{"kg_edge":{"id":"` + id + `","source":"` + source + `","target":"` + target + `","relation":"` + relation + `","data":{},"created_at":1,"scopeIds":{}}}`
	}
	for name, tc := range map[string]struct {
		line string
		code memory.Code
	}{
		"thought with a bad origin":        {strings.Replace(thought(""), `"model"`, `"alien"`, 1), memory.CodeInvalidParams},
		"thought with an overlong tag":     {strings.Replace(thought(""), `"tags":[]`, `"tags":["`+strings.Repeat("t", 65)+`"]`, 1), memory.CodeInvalidParams},
		"thought with significance 2":      {strings.Replace(thought(""), `"significance":0.5`, `"significance":2`, 1), memory.CodeInvalidParams},
		"thought with a bad status":        {strings.Replace(thought(""), `"active"`, `"archived"`, 1), memory.CodeInvalidParams},
		"thought with empty content":       {strings.Replace(thought(""), `"content":"x"`, `"content":""`, 1), memory.CodeInvalidParams},
		"thought with an unknown field":    {thought(`,"mood":"sunny"`), memory.CodeInvalidParams},
		"thought with a bad summary_of id": {strings.Replace(thought(""), `"summary_of":[]`, `"summary_of":[" padded "]`, 1), memory.CodeInvalidParams},
		"thought with a bad scope":         {strings.Replace(thought(""), `"scopeIds":{}`, `"scopeIds":{"team":"a"}`, 1), memory.CodeInvalidParams},
		"thought already stored":           {strings.Replace(thought(""), `"th_bad"`, `"th_1"`, 1), memory.CodeConflict},
		"thought twice in the file":        {strings.Replace(thought(""), `"th_bad"`, `"th_new"`, 1), memory.CodeConflict},
		"entity with a bad type":           {`{"kg_entity":{"id":"ent_bad","name":"x","type":"bad type!","data":{},"created_at":1,"updated_at":1,"scopeIds":{}}}`, memory.CodeInvalidParams},
		"entity with data not an object":   {`{"kg_entity":{"id":"ent_bad","name":"x","type":"job","data":[1],"created_at":1,"updated_at":1,"scopeIds":{}}}`, memory.CodeInvalidParams},
		"entity already stored":            {`{"kg_entity":{"id":"ent_ledger","name":"x","type":"job","data":{},"created_at":1,"updated_at":1,"scopeIds":{}}}`, memory.CodeConflict},
		"observation of a missing entity":  {`{"kg_observation":{"id":"kgo_bad","entity_id":"ent_ghost","content":"x","created_at":1,"scopeIds":{}}}`, memory.CodeNotFound},
		"observation already stored":       {`{"kg_observation":{"id":"` + view.Observations[0].ID + `","entity_id":"ent_gateway","content":"x","created_at":1,"scopeIds":{}}}`, memory.CodeConflict},
		"observation out of scope":         {`{"kg_observation":{"id":"kgo_bad","entity_id":"ent_gateway","content":"x","created_at":1,"scopeIds":{"repoId":"elsewhere"}}}`, memory.CodeInvalidParams},
		"edge to a missing entity":         {edge("edge_bad", "ent_gateway", "ent_ghost", "calls"), memory.CodeNotFound},
		"edge from a missing entity":       {edge("edge_bad", "ent_ghost", "ent_gateway", "calls"), memory.CodeNotFound},
		"edge with no relation":            {edge("edge_bad", "ent_gateway", "ent_ledger", ""), memory.CodeInvalidParams},
		"edge already stored":              {edge(edges.Edges[0].ID, "ent_gateway", "ent_ledger", "calls"), memory.CodeConflict},
	} {
		file := strings.Join(append(append([]string{}, good...), tc.line), "\n")
		_, err := eng.Import(ctx, strings.NewReader(file), cairn.ImportOptions{})
		if memory.CodeOf(err) != tc.code || !strings.Contains(err.Error(), "line 5: ") {
			t.Errorf("%s: error %v; want %s naming line 5", name, err, tc.code)
		}
	}
	if export(t, eng) != before {
		t.Fatal("a failed import changed the database")
	}
	rep, err := eng.Import(ctx, strings.NewReader(strings.Join(good, "\n")), cairn.ImportOptions{})
	if err != nil || rep.Thoughts != 1 || rep.Entities != 1 || rep.EntityObservations != 1 || rep.Edges != 1 || rep.Pending != 0 {
		t.Fatalf("import of the good lines: %+v %v", rep, err)
	}
	// The imported observation took its entity's scope, and is recalled.
	nv, _ := eng.Entity(ctx, "ent_new")
	if len(nv.Observations) != 1 || nv.Observations[0].Scope.RepoID != repo || len(nv.Edges) != 1 {
		t.Fatalf("imported entity %+v", nv)
	}
	found := map[string]bool{}
	for _, req := range []retrieve.InnerVoiceRequest{
		{Query: "nightly batch needs the federation gateway", Mix: ptr(0.0)},
		{Query: "nightly batch job cron", Mix: ptr(1.0)},
		{Query: "nightly batch runs at three", Mix: ptr(1.0)},
	} {
		for _, sn := range voice(t, eng, req).Snippets {
			found[sn.ID] = true
		}
	}
	for _, id := range []string{"th_new", "ent_new", "kgo_new"} {
		if !found[id] {
			t.Errorf("imported %s is not recalled: %v", id, found)
		}
	}
}

func TestNewerDatabaseIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	eng, err := cairn.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng.Close()
	if _, err := cairn.Open(filepath.Dir(path), nil); memory.CodeOf(err) != memory.CodeDBError {
		t.Fatalf("opening a directory: %v; want db_error", err)
	}
}
