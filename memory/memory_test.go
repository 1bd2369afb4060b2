package memory_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

func TestScopeJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want memory.Scope
		err  string
	}{
		{`{}`, memory.Scope{}, ""},
		{`null`, memory.Scope{}, ""},
		{`{"sessionId":"s1","repoId":"/repo"}`, memory.Scope{SessionID: "s1", RepoID: "/repo"}, ""},
		{`{"agentId":"a","userId":"u"}`, memory.Scope{AgentID: "a", UserID: "u"}, ""},
		{`{"session":"s1"}`, memory.Scope{}, `unknown scope key "session"`},
		{`{"sessionId":""}`, memory.Scope{}, "sessionId is empty"},
		{`{"sessionId":3}`, memory.Scope{}, "must be a string"},
		{`[]`, memory.Scope{}, "must be an object"},
		{`{"repoId":"a\u0000b"}`, memory.Scope{}, "NUL"},
		{`{"repoId":" padded "}`, memory.Scope{}, "surrounding spaces"},
		{fmt.Sprintf(`{"repoId":%q}`, strings.Repeat("r", memory.MaxScopeValueBytes+1)), memory.Scope{}, "over the"},
	} {
		var s memory.Scope
		err := json.Unmarshal([]byte(tc.in), &s)
		if tc.err == "" {
			if err != nil || s != tc.want {
				t.Errorf("%s: %+v, %v; want %+v", tc.in, s, err, tc.want)
			}
			continue
		}
		if memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v; want invalid_params containing %q", tc.in, err, tc.err)
		}
	}
	b, _ := json.Marshal(memory.Scope{RepoID: "r"})
	if string(b) != `{"repoId":"r"}` {
		t.Errorf("marshal: %s", b)
	}
}

func TestParseScope(t *testing.T) {
	s, err := memory.ParseScope("session=s1, repo=/src/x ,agentId=a")
	if err != nil || s != (memory.Scope{SessionID: "s1", RepoID: "/src/x", AgentID: "a"}) {
		t.Fatalf("%+v %v", s, err)
	}
	if s.String() != "session=s1,repo=/src/x,agent=a" {
		t.Errorf("String() = %q", s.String())
	}
	if err := s.Set("user=u"); err != nil || s.UserID != "u" {
		t.Fatalf("Set accumulates: %+v %v", s, err)
	}
	for _, bad := range []string{"session", "team=x", "session=", "session=a,session=b", "repo=\x00"} {
		if _, err := memory.ParseScope(bad); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("ParseScope(%q) = %v; want invalid_params", bad, err)
		}
	}
	if s, err := memory.ParseScope(""); err != nil || !s.IsZero() {
		t.Errorf("empty: %+v %v", s, err)
	}
}

func TestScopeMatchesFillConflicts(t *testing.T) {
	rec := memory.Scope{SessionID: "s1", RepoID: "r"}
	for filter, want := range map[memory.Scope]bool{
		{}:                              true,
		{RepoID: "r"}:                   true,
		{SessionID: "s1", RepoID: "r"}:  true,
		{SessionID: "s2"}:               false,
		{AgentID: "a"}:                  false,
		{SessionID: "s1", RepoID: "r2"}: false,
	} {
		if got := filter.Matches(rec); got != want {
			t.Errorf("%+v.Matches(%+v) = %v", filter, rec, got)
		}
	}
	if got := (memory.Scope{AgentID: "a"}).Fill(rec); got != (memory.Scope{SessionID: "s1", RepoID: "r", AgentID: "a"}) {
		t.Errorf("Fill = %+v", got)
	}
	if k := (memory.Scope{RepoID: "x"}).Conflicts(rec); k != "repoId" {
		t.Errorf("Conflicts = %q", k)
	}
	if k := (memory.Scope{AgentID: "x"}).Conflicts(rec); k != "" {
		t.Errorf("Conflicts = %q", k)
	}
}

func TestErrors(t *testing.T) {
	cause := errors.New("SELECT secret FROM table")
	err := fmt.Errorf("outer: %w", memory.Wrap(memory.CodeDBError, cause, "reading pins failed"))
	if memory.CodeOf(err) != memory.CodeDBError || !errors.Is(err, cause) {
		t.Fatalf("code %s, is cause %v", memory.CodeOf(err), errors.Is(err, cause))
	}
	pub := memory.Public(err)
	if pub.Error() != "db_error: reading pins failed" || pub.Err != nil || strings.Contains(pub.Error(), "SELECT") {
		t.Fatalf("public error %q leaks or loses its message", pub.Error())
	}
	if p := memory.Public(errors.New("boom at 0xdeadbeef")); p.Code != memory.CodeInternal || strings.Contains(p.Message, "boom") {
		t.Fatalf("untyped error became %v", p)
	}
	if memory.CodeOf(nil) != "" || memory.Public(nil) != nil {
		t.Fatal("nil error")
	}
	// Detail, for logs, tells the whole chain, cause included.
	if d := memory.Detail(err); d != "outer: db_error: reading pins failed (cause: SELECT secret FROM table)" {
		t.Fatalf("detail %q", d)
	}
	nested := memory.Wrap(memory.CodeEmbedderUnavailable, fmt.Errorf("POST http://10.0.0.1/api: %w", errors.New("connection reset")), "the embedder is unavailable")
	if d := memory.Detail(nested); d != "embedder_unavailable: the embedder is unavailable: POST http://10.0.0.1/api: connection reset" {
		t.Fatalf("detail %q", d)
	}
	if memory.Detail(nil) != "" {
		t.Fatal("detail of nil")
	}
}

func TestKindsAndText(t *testing.T) {
	if len(memory.Kinds) != 9 {
		t.Fatalf("%d kinds; the contract has nine", len(memory.Kinds))
	}
	for _, k := range memory.Kinds {
		if got, err := memory.ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%s) = %s, %v", k, got, err)
		}
	}
	if _, err := memory.ParseKind("thought"); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Errorf("unknown kind: %v", err)
	}
	for in, ok := range map[string]bool{"fine": true, "  ": false, "a\x00b": false, string([]byte{0xff, 0xfe}): false, "x" + strings.Repeat("y", 20): false} {
		err := memory.ValidateContent("content", in, 16)
		if (err == nil) != ok {
			t.Errorf("ValidateContent(%q) = %v", in, err)
		}
	}
	for in, want := range map[string]string{"": "{}", "null": "{}", ` { "a" : 1 } `: `{"a":1}`} {
		got, err := memory.NormalizeProvenance(json.RawMessage(in))
		if err != nil || string(got) != want {
			t.Errorf("NormalizeProvenance(%q) = %s, %v", in, got, err)
		}
	}
	for _, bad := range []string{`[1]`, `"s"`, `{"a":}`, `3`} {
		if _, err := memory.NormalizeProvenance(json.RawMessage(bad)); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("NormalizeProvenance(%s) = %v", bad, err)
		}
	}
	// Nesting: brackets inside strings (escaped quotes too) do not count;
	// arrays count as objects do.
	deep := func(n int) string { return strings.Repeat(`{"a":[`, n/2) + "1" + strings.Repeat("]}", n/2) }
	for in, ok := range map[string]bool{
		deep(memory.MaxObjectDepth):                   true,
		deep(memory.MaxObjectDepth + 2):               false,
		`{"s":"` + strings.Repeat(`[{\"`, 500) + `"}`: true,
		`{"a":[[[[[[[[[[]]]]]]]]]]}`:                  true,
	} {
		_, err := memory.NormalizeObject("data", json.RawMessage(in))
		if (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "data nests")) {
			t.Errorf("NormalizeObject(%.40s…) = %v; want ok %v", in, err, ok)
		}
	}
}

func TestEntityJSONRoundTrip(t *testing.T) {
	for _, e := range []memory.Entity{
		memory.ObservationEntity(memory.Observation{ID: "o", Kind: memory.KindError, Content: "c", Provenance: json.RawMessage(`{}`), TS: 5}),
		memory.SummaryEntity(memory.Summary{ID: "s", CapsuleID: "c", Content: "x", Confidence: 0.5, EvidenceRefs: []string{}}),
	} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back memory.Entity
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Type() != e.Type() || back.ID() != e.ID() || back.Content() != e.Content() || back.Time() != e.Time() {
			t.Errorf("round trip of %s: %+v", b, back)
		}
	}
}
