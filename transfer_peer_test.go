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

// Kindling's store file (kindling.db) imports in place, read-only, as its
// own export of it does: the same records, the file untouched, nothing
// beside it created; a damaged store file writes nothing.
func TestImportPeerKindlingStoreFile(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("peer", "testdata", "kindling.db"))
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "kindling.db")
	if err := os.WriteFile(store, src, 0o644); err != nil {
		t.Fatal(err)
	}
	fromStore := openAt(t, filepath.Join(dir, "a", "cairn.db"), nil)
	f, err := os.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := fromStore.ImportPeerFile(ctx, peer.Kindling, f, cairn.PeerImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported[memory.SectionObservations] != 5 || rep.Imported[memory.SectionCapsules] != 1 || rep.Imported[memory.SectionSummaries] != 1 || rep.Imported[memory.SectionPins] != 1 {
		t.Fatalf("report %+v", rep)
	}
	fromExport := openAt(t, filepath.Join(dir, "b", "cairn.db"), nil)
	ex, err := os.Open(filepath.Join("peer", "testdata", "kindling-export.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if _, err := fromExport.ImportPeerFile(ctx, peer.Kindling, ex, cairn.PeerImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if a, b := export(t, fromStore), export(t, fromExport); a != b {
		t.Fatalf("the store file and its export import differently:\n%s\n%s", a, b)
	}
	if after, _ := os.ReadFile(store); string(after) != string(src) {
		t.Fatal("importing changed the store file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Fatalf("importing left files beside the store: %v", entries)
	}
	// Importing it again writes nothing.
	again, err := fromStore.ImportPeerFile(ctx, peer.Kindling, f, cairn.PeerImportOptions{})
	if err != nil || len(again.Imported) != 0 || again.Present[memory.SectionObservations] != 5 {
		t.Fatalf("second import: %+v %v", again, err)
	}

	// Damaged: cut short, or its pages overwritten after the header. Into
	// an empty database, so a partial write would show.
	empty := openAt(t, filepath.Join(dir, "c", "cairn.db"), nil)
	before := export(t, empty)
	garbled := append([]byte{}, src...)
	for i := 100; i < len(garbled); i++ {
		garbled[i] = byte(i * 7)
	}
	for name, data := range map[string][]byte{"cut short": src[:len(src)/3], "garbled": garbled, "the header alone": src[:16]} {
		path := filepath.Join(t.TempDir(), "kindling.db")
		os.WriteFile(path, data, 0o644)
		bad, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = empty.ImportPeerFile(ctx, peer.Kindling, bad, cairn.PeerImportOptions{})
		bad.Close()
		if memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: %v; want invalid_params", name, err)
		} else if msg := memory.Public(err).Message; strings.Contains(strings.ToLower(msg), "sql logic") || strings.Contains(msg, "SELECT") {
			t.Errorf("%s: the message shows SQLite's insides: %s", name, msg)
		}
	}
	// Another program's SQLite file (here cairn's own) is not Kindling's.
	other, err := os.Open(filepath.Join(dir, "b", "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := empty.ImportPeerFile(ctx, peer.Kindling, other, cairn.PeerImportOptions{}); memory.CodeOf(err) != memory.CodeInvalidParams ||
		!strings.Contains(err.Error(), "not a Kindling store") {
		t.Errorf("cairn's database as a Kindling store: %v", err)
	}
	// A store file given on standard input cannot be read in place.
	if _, err := empty.ImportPeer(ctx, peer.Kindling, strings.NewReader(string(src)), cairn.PeerImportOptions{}); memory.CodeOf(err) != memory.CodeInvalidParams ||
		!strings.Contains(err.Error(), "by its path") {
		t.Errorf("a store file on standard input: %v", err)
	}
	if export(t, empty) != before {
		t.Fatal("a refused store file changed the database")
	}
}
