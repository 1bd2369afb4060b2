package cairn_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// Each tool's fields may be spelled in either convention on input: the
// contract's camelCase or inner_voice's snake_case; the output keeps the
// documented names. A name neither spelling knows is still refused.
func TestFieldsInEitherSpelling(t *testing.T) {
	eng := openAt(t, filepath.Join(t.TempDir(), "c.db"), nil)
	res, err := eng.CallJSON(ctx, "log", []byte(`{"kind":"message","content":"spelled the other way","scope_ids":{"session_id":"s9","repo_id":"r"},"ts":9007199254740993}`))
	if err != nil {
		t.Fatal(err)
	}
	o := res.(memory.Observation)
	if o.Scope.SessionID != "s9" || o.Scope.RepoID != "r" || o.TS != 9007199254740993 {
		t.Fatalf("log with snake_case fields: %+v", o)
	}
	res, err = eng.CallJSON(ctx, "think", []byte(`{"content":"private, spelled in camelCase","isPrivate":true}`))
	if err != nil || !res.(memory.Thought).IsPrivate {
		t.Fatalf("think with isPrivate: %+v %v", res, err)
	}
	for _, args := range []string{
		`{"kind":"message","content":"x","scopeIdz":{}}`,
		`{"kind":"message","content":"x","scope_ids":{"session_idd":"s"}}`,
		`{"kind":"message","content":"x","scopeIds":{"sessionId":"a"},"scope_ids":{"sessionId":"b"}}`,
	} {
		if _, err := eng.CallJSON(ctx, "log", []byte(args)); memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), "unknown") {
			t.Errorf("%s: %v, want invalid_params naming the unknown field", args, err)
		}
	}
}
