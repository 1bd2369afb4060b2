package cairn_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// A create retried with the same idempotency key or id returns the first
// result and writes nothing more; the same key or id for another record is
// a conflict that changes nothing; a key and an id together, or a bad key,
// are invalid_params.
func TestRetriedCreatesReturnTheFirstResult(t *testing.T) {
	eng := openAt(t, filepath.Join(t.TempDir(), "c.db"), nil)
	scope := memory.Scope{SessionID: "s1", RepoID: "r"}

	capReq := cairn.OpenCapsuleRequest{Intent: "fix the build", ScopeIDs: scope, IdempotencyKey: "open-1"}
	c1, err := eng.OpenCapsule(ctx, capReq)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := eng.OpenCapsule(ctx, capReq)
	if err != nil || c2.ID != c1.ID || !strings.HasPrefix(c1.ID, "cap_k") {
		t.Fatalf("retried capsule_open: %+v %v; first %s", c2, err, c1.ID)
	}

	logReq := cairn.LogRequest{Kind: memory.KindCommand, Content: "go test ./... (token=ghp_0123456789abcdefghijABCDEFGHIJ012345)", ScopeIDs: scope, IdempotencyKey: "log-1"}
	o1, err := eng.Log(ctx, logReq)
	if err != nil {
		t.Fatal(err)
	}
	o2, err := eng.Log(ctx, logReq)
	if err != nil || o2.ID != o1.ID || o2.Content != o1.Content {
		t.Fatalf("retried log: %+v %v; first %+v", o2, err, o1)
	}
	byID := cairn.LogRequest{ID: "obs_client_1", Kind: memory.KindMessage, Content: "chosen by the client", ScopeIDs: scope}
	if _, err := eng.Log(ctx, byID); err != nil {
		t.Fatal(err)
	}
	if again, err := eng.Log(ctx, byID); err != nil || again.ID != "obs_client_1" {
		t.Fatalf("retried log with a client id: %+v %v", again, err)
	}

	th := cairn.ThinkRequest{Content: "the flaky test races its own form", ScopeIDs: scope, IdempotencyKey: "think-1"}
	t1, err := eng.Think(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if t2, err := eng.Think(ctx, th); err != nil || t2.ID != t1.ID {
		t.Fatalf("retried think: %+v %v", t2, err)
	}

	pin := cairn.PinRequest{TargetID: o1.ID, Reason: "the command that failed", IdempotencyKey: "pin-1"}
	p1, err := eng.Pin(ctx, pin)
	if err != nil {
		t.Fatal(err)
	}
	if p2, err := eng.Pin(ctx, pin); err != nil || p2.ID != p1.ID {
		t.Fatalf("retried pin: %+v %v", p2, err)
	}

	before := export(t, eng)
	for name, call := range map[string]func() error{
		"log, same key, other content": func() error {
			r := logReq
			r.Content = "something else"
			_, err := eng.Log(ctx, r)
			return err
		},
		"think, same key, other content": func() error {
			r := th
			r.Content = "another thought"
			_, err := eng.Think(ctx, r)
			return err
		},
		"pin, same key, other target": func() error {
			r := pin
			r.TargetID = "obs_client_1"
			_, err := eng.Pin(ctx, r)
			return err
		},
		"capsule, same key, other intent": func() error {
			r := capReq
			r.Intent = "another"
			_, err := eng.OpenCapsule(ctx, r)
			return err
		},
	} {
		if err := call(); memory.CodeOf(err) != memory.CodeConflict || !strings.Contains(err.Error(), "already names another") {
			t.Errorf("%s: %v, want a conflict naming the id", name, err)
		}
	}
	for name, req := range map[string]cairn.LogRequest{
		"key and id":       {ID: "obs_x", IdempotencyKey: "k", Kind: memory.KindMessage, Content: "x"},
		"control in key":   {IdempotencyKey: "a\nb", Kind: memory.KindMessage, Content: "x"},
		"key over 255 B":   {IdempotencyKey: strings.Repeat("k", 256), Kind: memory.KindMessage, Content: "x"},
		"invalid utf8 key": {IdempotencyKey: "\xff", Kind: memory.KindMessage, Content: "x"},
	} {
		if _, err := eng.Log(ctx, req); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: %v, want invalid_params", name, err)
		}
	}
	if after := export(t, eng); after != before {
		t.Fatal("refused retries changed the database")
	}
	// A batch retried whole returns the first batch.
	batch := []cairn.LogRequest{
		{Kind: memory.KindMessage, Content: "first of two", IdempotencyKey: "b-1"},
		{Kind: memory.KindMessage, Content: "second of two", IdempotencyKey: "b-2"},
	}
	first, err := eng.LogBatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	again, err := eng.LogBatch(ctx, batch)
	if err != nil || len(again) != 2 || again[0].ID != first[0].ID || again[1].ID != first[1].ID {
		t.Fatalf("retried batch: %+v %v", again, err)
	}
}

// The knowledge graph's creating tools take keys too.
func TestRetriedGraphCreatesReturnTheFirstResult(t *testing.T) {
	eng := openAt(t, filepath.Join(t.TempDir(), "c.db"), nil)
	call := func(tool, args string) (map[string]any, error) {
		res, err := eng.CallJSON(ctx, tool, []byte(args))
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m, nil
	}
	twice := func(tool, args string) string {
		t.Helper()
		a, err := call(tool, args)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		b, err := call(tool, args)
		if err != nil || a["id"] != b["id"] {
			t.Fatalf("%s retried: %v %v; first %v", tool, b, err, a["id"])
		}
		return a["id"].(string)
	}
	src := twice("kg_entity_create", `{"name":"auth-service","type":"service","idempotencyKey":"e1"}`)
	dst := twice("kg_entity_create", `{"name":"postgres","type":"database","idempotencyKey":"e2"}`)
	twice("kg_observe", fmt.Sprintf(`{"entityId":%q,"content":"rotates keys nightly","idempotencyKey":"o1"}`, src))
	twice("kg_edge_create", fmt.Sprintf(`{"source":%q,"target":%q,"relation":"depends_on","idempotencyKey":"g1"}`, src, dst))
	list, err := call("kg_entities", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list["entities"].([]any)); n != 2 {
		t.Fatalf("%d entities after retries, want 2", n)
	}
	view, err := call("kg_entity_get", fmt.Sprintf(`{"entityId":%q}`, src))
	if err != nil {
		t.Fatal(err)
	}
	if obs, edges := view["observations"].([]any), view["edges"].([]any); len(obs) != 1 || len(edges) != 1 {
		t.Fatalf("after retries: %d facts and %d edges, want 1 and 1", len(obs), len(edges))
	}
	for tool, args := range map[string]string{
		"kg_entity_create": `{"name":"someone else","type":"person","idempotencyKey":"e1"}`,
		"kg_observe":       fmt.Sprintf(`{"entityId":%q,"content":"another fact","idempotencyKey":"o1"}`, src),
		"kg_edge_create":   fmt.Sprintf(`{"source":%q,"target":%q,"relation":"owns","idempotencyKey":"g1"}`, src, dst),
	} {
		if _, err := call(tool, args); memory.CodeOf(err) != memory.CodeConflict {
			t.Errorf("%s with a used key and other content: %v, want conflict", tool, err)
		}
	}
}
