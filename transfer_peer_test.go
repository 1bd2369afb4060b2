package cairn_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/peer"
)

func TestImportPeerIdempotentAndMerging(t *testing.T) {
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), nil)
	// The user made "auth-service" in cairn already: the peer's facts
	// join it.
	mine, err := eng.CreateEntity(ctx, cairn.EntityRequest{Name: "auth-service", Type: "service"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("peer", "testdata", "mcp-memory.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eng.ImportPeer(ctx, peer.MCPMemory, strings.NewReader(string(data)), cairn.PeerImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported[memory.SectionEntities] != 2 || rep.Present[memory.SectionEntities] != 1 || rep.Imported[memory.SectionEdges] != 2 {
		t.Fatalf("report %+v", rep)
	}
	facts, err := eng.CallJSON(ctx, "kg_entity_get", []byte(`{"entityId":"`+mine.ID+`"}`))
	if err != nil || !strings.Contains(mustJSON(t, facts), "Issues session tokens valid for 15 minutes") {
		t.Fatalf("the fact did not join the user's entity: %s %v", mustJSON(t, facts), err)
	}
	before := export(t, eng)
	again, err := eng.ImportPeer(ctx, peer.MCPMemory, strings.NewReader(string(data)), cairn.PeerImportOptions{})
	if err != nil || len(again.Imported) != 0 || export(t, eng) != before {
		t.Fatalf("second import: %+v %v", again, err)
	}
	// A bad scope or peer changes nothing.
	if _, err := eng.ImportPeer(ctx, "letta", strings.NewReader("{}"), cairn.PeerImportOptions{}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("unknown peer: %v", err)
	}
	if export(t, eng) != before {
		t.Fatal("a refused import changed the database")
	}
}

func TestImportPeerKindlingRetrievable(t *testing.T) {
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), nil)
	f, err := os.Open(filepath.Join("peer", "testdata", "kindling-export.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := eng.ImportPeer(ctx, peer.Kindling, f, cairn.PeerImportOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "clock skew", ScopeIDs: memory.Scope{RepoID: "/src/shop"}})
	if err != nil || len(res.Pins) != 1 || res.Pins[0].Pin.ID != "kd-pin-1" || len(res.Candidates) == 0 {
		t.Fatalf("retrieve after the import: %+v %v", res, err)
	}
}
