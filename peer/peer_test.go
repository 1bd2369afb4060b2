package peer_test

import (
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
