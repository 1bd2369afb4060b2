package peer_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/peer"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseRealFiles(t *testing.T) {
	o := peer.Options{Now: 1_764_000_000_000, Scope: memory.Scope{UserID: "alice"}}
	p, err := peer.Parse(peer.MCPMemory, read(t, "mcp-memory.jsonl"), o)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dump
	if len(d.Entities) != 3 || len(d.KGObservations) != 5 || len(d.Edges) != 2 || p.Mapped["relation → kg_edge"] != 2 {
		t.Fatalf("mcp-memory: %d entities, %d facts, %d edges", len(d.Entities), len(d.KGObservations), len(d.Edges))
	}
	if d.Edges[1].Relation != "depends on" || d.Edges[1].Source != d.Entities[1].ID || d.Entities[0].Scope.UserID != "alice" {
		t.Fatalf("edge %+v", d.Edges[1])
	}
	again, _ := peer.Parse(peer.MCPMemory, read(t, "mcp-memory.jsonl"), peer.Options{Now: 5})
	if again.Dump.Entities[0].ID != d.Entities[0].ID || again.Dump.Edges[0].ID != d.Edges[0].ID {
		t.Fatal("ids are not stable across reads")
	}

	p, err = peer.Parse(peer.Kindling, read(t, "kindling-export.json"), o)
	if err != nil {
		t.Fatal(err)
	}
	d = p.Dump
	if len(d.Observations) != 5 || len(d.Capsules) != 1 || len(d.Summaries) != 1 || len(d.Pins) != 1 {
		t.Fatalf("kindling: %+v", p.Mapped)
	}
	c := d.Capsules[0]
	if c.ID != "kd-cap-1" || c.Status != memory.CapsuleClosed || c.ClosedAt == nil || len(c.ObservationIDs) != 4 || d.Observations[1].TS != 1764000002000 {
		t.Fatalf("capsule %+v", c)
	}

	p, err = peer.Parse(peer.Mem0, read(t, "mem0.json"), o)
	if err != nil {
		t.Fatal(err)
	}
	th := p.Dump.Thoughts
	if len(th) != 3 || th[2].Scope.UserID != "bob" || th[2].Scope.SessionID != "run-7" || th[1].Scope.AgentID != "claude-code" {
		t.Fatalf("mem0 thoughts %+v", th)
	}
	if th[0].Origin != memory.OriginLogged || th[0].Pipeline != "mem0" || th[0].CreatedAt == o.Now || !strings.Contains(strings.Join(th[0].Tags, ","), "category=preferences") {
		t.Fatalf("mem0 thought %+v", th[0])
	}
}

func TestParseRefusesWhatItCannotRead(t *testing.T) {
	for _, c := range []struct{ peer, data string }{
		{peer.MCPMemory, "not json\n"},
		{peer.MCPMemory, `{"type":"entity","name":"a","entityType":"x","observations":[]}` + "\n" + `{"type":"entity","name":"a","entityType":"x","observations":[]}`},
		{peer.MCPMemory, `{"type":"widget"}`},
		{peer.MCPMemory, `{"type":"entity","name":"  ","entityType":"x"}`},
		{peer.Kindling, `{"version":"2.0","observations":[]}`},
		{peer.Kindling, `[1,2]`},
		{peer.Kindling, `{}`},
		{peer.Kindling, `{"bundleVersion":"1.0"}`},
		{peer.Kindling, `{"bundleVersion":"1.0","dataset":[]}`},
		{peer.Kindling, `{"bundleVersion":"1.0","dataset":{"version":"2.0"}}`},
		{peer.Kindling, `{"bundleVersion":"1.0","dataset":{"observations":[]}}`},
		{peer.Kindling, `{"version":"1.0","observations":[{"id":"kd-1","kind":"message","content":"x","provenance":[1]}]}`},
		{peer.Mem0, `{"results":[{"id":"1","memory":" "}]}`},
		{peer.Mem0, `[{"id":1}]`},
		{"letta", `{}`},
	} {
		if _, err := peer.Parse(c.peer, []byte(c.data), peer.Options{}); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s %q: %v, want invalid_params", c.peer, c.data, err)
		}
	}
}

func TestLabelsAreMadeValid(t *testing.T) {
	p, err := peer.Parse(peer.MCPMemory, []byte(`{"type":"entity","name":"ACME","entityType":"Company (B2B!)","observations":[]}`), peer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Dump.Entities[0].Type; got != "Company -B2B-" || len(p.Notes) != 1 {
		t.Fatalf("type %q, notes %v", got, p.Notes)
	}
}

// Kindling's own export writes a bundle around the store's dataset; both
// read as the same records, and a bundle of another format version is
// refused, naming the version found.
func TestParseKindlingBundle(t *testing.T) {
	o := peer.Options{Now: 1_764_000_000_000}
	bare, err := peer.Parse(peer.Kindling, read(t, "kindling-export.json"), o)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := peer.Parse(peer.Kindling, read(t, "kindling-bundle.json"), o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(bare, bundle) {
		t.Fatalf("the bundle reads as\n%+v\nthe bare dataset as\n%+v", bundle, bare)
	}
	if len(bundle.Dump.Observations) != 5 || len(bundle.Dump.Capsules) != 1 || bundle.Dump.Pins[0].ID != "kd-pin-1" {
		t.Fatalf("bundle: %+v", bundle.Mapped)
	}
	for _, c := range []struct{ version, want string }{
		{`"2.0"`, `bundle version "2.0"`},
		{`2`, `bundle version 2:`},
		{`null`, `bundle version null`},
		{`"` + strings.Repeat("9", 100) + `"`, `bundle version "99999`},
	} {
		data := `{"bundleVersion":` + c.version + `,"exportedAt":1,"dataset":{"version":"1.0","observations":[]}}`
		_, err := peer.Parse(peer.Kindling, []byte(data), o)
		if memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 200 {
			t.Errorf("bundle version %s: %v; want invalid_params naming %s", c.version, err, c.want)
		}
	}
}

// kindlingRows answers the store's queries from tables in memory, as the
// sqlite package answers them from kindling.db.
func kindlingRows(tables map[string][]map[string]any) peer.Rows {
	return func(_ context.Context, what, query string, limit int) ([]map[string]any, error) {
		rows, ok := tables[what]
		if !ok {
			return nil, memory.Errorf(memory.CodeInvalidParams, "the database file holds no readable %s", what)
		}
		return rows, nil
	}
}

// The store's rows map as the export of them does; a column of the wrong
// type or a table it lacks is invalid_params naming it.
func TestParseKindlingStore(t *testing.T) {
	obs := func() map[string]any {
		return map[string]any{"id": "kd-obs-1", "kind": "error", "content": "session expired", "provenance": `{"tool":"x"}`,
			"ts": int64(1764000001000), "scope_ids": `{"sessionId":"s1","repoId":"/src/shop"}`, "redacted": int64(0)}
	}
	tables := func() map[string][]map[string]any {
		return map[string][]map[string]any{
			"observations":         {obs()},
			"capsule observations": {{"capsule_id": "kd-cap-1", "observation_id": "kd-obs-1"}},
			"capsules": {{"id": "kd-cap-1", "type": "session", "intent": "fix", "status": "closed", "opened_at": int64(1764000000000),
				"closed_at": int64(1764000010000), "scope_ids": `{"sessionId":"s1","repoId":"/src/shop"}`},
				{"id": "kd-cap-2", "type": "session", "intent": "next", "status": "open", "opened_at": int64(1764000020000),
					"closed_at": nil, "scope_ids": `{"sessionId":"s2"}`}},
			"summaries": {{"id": "kd-sum-1", "capsule_id": "kd-cap-1", "content": "done", "confidence": 0.8, "created_at": int64(1764000009000),
				"evidence_refs": `["kd-obs-1"]`}},
			"pins": {{"id": "kd-pin-1", "target_type": "observation", "target_id": "kd-obs-1", "reason": nil, "created_at": int64(1764000011000),
				"expires_at": nil, "scope_ids": `{"sessionId":"s1"}`}},
		}
	}
	p, err := peer.ParseKindlingStore(context.Background(), kindlingRows(tables()), peer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dump
	if len(d.Observations) != 1 || string(d.Observations[0].Provenance) != `{"tool":"x"}` || d.Observations[0].Scope.RepoID != "/src/shop" ||
		len(d.Capsules) != 2 || d.Capsules[0].ClosedAt == nil || d.Capsules[1].ClosedAt != nil || len(d.Capsules[0].ObservationIDs) != 1 ||
		len(d.Capsules[1].ObservationIDs) != 0 || d.Summaries[0].Confidence != 0.8 || d.Pins[0].Reason != "" || d.Pins[0].ExpiresAt != nil {
		t.Fatalf("store read as %+v", d)
	}
	for name, c := range map[string]struct {
		change func(map[string][]map[string]any)
		says   string
	}{
		"ts as text":       {func(m map[string][]map[string]any) { m["observations"][0]["ts"] = "yesterday" }, "observation (kd-obs-1) has ts that is not a number"},
		"scope not JSON":   {func(m map[string][]map[string]any) { m["capsules"][0]["scope_ids"] = "{" }, "capsule (kd-cap-1) has scope_ids that is not JSON"},
		"no pins table":    {func(m map[string][]map[string]any) { delete(m, "pins") }, "not a Kindling store: the database file holds no readable pins"},
		"an id missing":    {func(m map[string][]map[string]any) { delete(m["summaries"][0], "id") }, "summary () has id that is not text"},
		"provenance array": {func(m map[string][]map[string]any) { m["observations"][0]["provenance"] = "[1]" }, "provenance must be a JSON object"},
	} {
		m := tables()
		c.change(m)
		_, err := peer.ParseKindlingStore(context.Background(), kindlingRows(m), peer.Options{})
		if memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want invalid_params saying %q", name, err, c.says)
		}
	}
}
