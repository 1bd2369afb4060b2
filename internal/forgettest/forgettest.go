// Package forgettest is the fixture the faces' tests share to check
// forgetting: one record of every kind that can be forgotten or deleted,
// written through the engine with a unique word in its text, the forget of
// each as a tool call (name and JSON arguments, which MCP and HTTP send
// as they are and the CLI maps to its commands), and a check, through the
// engine, that every one is gone.
package forgettest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// Records are the records Seed wrote, by kind.
type Records struct {
	Observation, Summary, Thought, Artifact, Entity, Fact, Edge string
	// Marked is a thought to mark for removal.
	Marked string
}

// Markers are the words the records' texts hold, one per record.
var Markers = []string{"zqobsmarker1", "zqsummarker2", "zqthomarker3", "zqartmarker4", "zqentmarker5", "zqfactmarker6", "zqedgemarker7"}

// Seed writes one record of each kind through eng, and indexes a small
// repository under root for the code artifact.
func Seed(t testing.TB, eng *cairn.Engine, root string) Records {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var r Records
	scope := memory.Scope{SessionID: "s1", RepoID: "/src/shop"}
	c, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{ScopeIDs: scope})
	must(err)
	o, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindCommand, Content: "export TOKEN=" + Markers[0], ScopeIDs: scope})
	must(err)
	r.Observation = o.ID
	s, err := eng.SetSummary(ctx, cairn.SummaryRequest{CapsuleID: c.ID, SummaryInput: cairn.SummaryInput{Content: "the token is " + Markers[1]}})
	must(err)
	r.Summary = s.ID
	th, err := eng.Think(ctx, cairn.ThinkRequest{Content: "the password is " + Markers[2], Tags: []string{"ops"}, ScopeIDs: scope})
	must(err)
	r.Thought = th.ID
	th2, err := eng.Think(ctx, cairn.ThinkRequest{Content: "an outdated conclusion", ScopeIDs: scope})
	must(err)
	r.Marked = th2.ID
	must(os.WriteFile(filepath.Join(root, "k.go"), []byte("package k\n\n// Key returns the key.\nfunc Key() string {\n\treturn \""+Markers[3]+"\"\n}\n"), 0o644))
	if _, err := eng.IndexCode(ctx, cairn.CodeIndexRequest{Root: root, RepoID: "k"}, nil); err != nil {
		t.Fatal(err)
	}
	ents, err := eng.CodeEntities(ctx, cairn.CodeEntitiesRequest{RepoID: "k"})
	must(err)
	if len(ents.Entities) != 1 {
		t.Fatalf("code entities: %+v", ents)
	}
	r.Artifact = ents.Entities[0].ArtifactHash
	a, err := eng.CreateEntity(ctx, cairn.EntityRequest{Name: "vault " + Markers[4], Type: "service"})
	must(err)
	r.Entity = a.ID
	b, err := eng.CreateEntity(ctx, cairn.EntityRequest{Name: "gateway", Type: "service"})
	must(err)
	f, err := eng.Observe(ctx, cairn.ObserveRequest{EntityID: b.ID, Content: "its admin password is " + Markers[5]})
	must(err)
	r.Fact = f.ID
	g, err := eng.CreateEdge(ctx, cairn.EdgeRequest{Source: b.ID, Target: a.ID, Relation: "reads_from", Data: json.RawMessage(`{"token":"` + Markers[6] + `"}`)})
	must(err)
	r.Edge = g.ID
	return r
}

// Call is the forget (or delete) of one record as a tool call.
type Call struct {
	Kind string
	Tool string
	// Args name the record; Unknown name nothing; Bad hold a malformed id.
	Args, Unknown, Bad map[string]any
	// Redacts says the record's skeleton stays: calling again answers
	// the same. Otherwise it is deleted, and calling again is not_found.
	Redacts bool
	// ID is the record's id (an artifact's hash) and Op the last entry
	// the call leaves in the record's history (record_history).
	ID, Op string
}

// Calls forget every record of r, in an order that deletes a fact and an
// edge before the entity they could go with.
func Calls(r Records) []Call {
	return []Call{
		{Kind: "observation", Tool: "forget", Args: map[string]any{"observationId": r.Observation}, Redacts: true, ID: r.Observation, Op: memory.OpForget,
			Unknown: map[string]any{"observationId": "obs_unknown"}, Bad: map[string]any{"observationId": " obs_1"}},
		{Kind: "summary", Tool: "summary_forget", Args: map[string]any{"summaryId": r.Summary}, Redacts: true, ID: r.Summary, Op: memory.OpForget,
			Unknown: map[string]any{"summaryId": "sum_unknown"}, Bad: map[string]any{"summaryId": "sum\t1"}},
		{Kind: "thought", Tool: "thought_forget", Args: map[string]any{"thoughtId": r.Thought}, Redacts: true, ID: r.Thought, Op: memory.OpForget,
			Unknown: map[string]any{"thoughtId": "th_unknown"}, Bad: map[string]any{"thoughtId": " th_1"}},
		{Kind: "thought mark", Tool: "thought_mark", Args: map[string]any{"thoughtId": r.Marked, "status": "removal"}, Redacts: true, ID: r.Marked, Op: memory.OpMark,
			Unknown: map[string]any{"thoughtId": "th_unknown", "status": "removal"}, Bad: map[string]any{"thoughtId": r.Marked, "status": "archived"}},
		{Kind: "code artifact", Tool: "code_artifact_forget", Args: map[string]any{"hash": r.Artifact}, Redacts: true, ID: r.Artifact, Op: memory.OpForget,
			Unknown: map[string]any{"hash": strings.Repeat("0", 64)}, Bad: map[string]any{"hash": "XYZ"}},
		{Kind: "graph fact", Tool: "kg_observation_delete", Args: map[string]any{"observationId": r.Fact}, ID: r.Fact, Op: memory.OpDelete,
			Unknown: map[string]any{"observationId": "kgo_unknown"}, Bad: map[string]any{"observationId": "kgo\n1"}},
		{Kind: "graph edge", Tool: "kg_edge_delete", Args: map[string]any{"edgeId": r.Edge}, ID: r.Edge, Op: memory.OpDelete,
			Unknown: map[string]any{"edgeId": "edge_unknown"}, Bad: map[string]any{"edgeId": " edge_1"}},
		{Kind: "graph entity", Tool: "kg_entity_delete", Args: map[string]any{"entityId": r.Entity}, ID: r.Entity, Op: memory.OpDelete,
			Unknown: map[string]any{"entityId": "ent_unknown"}, Bad: map[string]any{"entityId": "ent_\t1"}},
	}
}

// JSON encodes tool arguments.
func JSON(args map[string]any) []byte {
	b, _ := json.Marshal(args)
	return b
}

// CheckResult checks the first answer of a call (its JSON): the redacted
// record, the thought marked, or the id deleted.
func CheckResult(t testing.TB, c Call, result []byte) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(result, &got); err != nil {
		t.Fatalf("%s: result %s: %v", c.Tool, result, err)
	}
	switch {
	case c.Tool == "thought_mark":
		if got["status"] != "removal" || got["id"] != c.Args["thoughtId"] {
			t.Fatalf("%s: result %s", c.Tool, result)
		}
	case c.Redacts:
		if got["content"] != memory.RedactedContent || got["redacted"] != true {
			t.Fatalf("%s: result %s; want the redacted record", c.Tool, result)
		}
	default:
		for _, v := range c.Args {
			if got["deleted"] != v {
				t.Fatalf("%s: result %s; want deleted %v", c.Tool, result, v)
			}
		}
	}
}

// CheckHistory checks the answer of record_history for the record of a
// call made (its JSON): the record's history begins with its creation,
// ends with what the call did, every entry is dated, and none holds any
// marker (the ledger keeps no text).
func CheckHistory(t testing.TB, c Call, result []byte) {
	t.Helper()
	var got cairn.RecordHistory
	if err := json.Unmarshal(result, &got); err != nil {
		t.Fatalf("record_history of %s: %s: %v", c.Kind, result, err)
	}
	es := got.Entries
	if got.ID != c.ID || len(es) < 2 || es[0].Op != memory.OpCreate || es[len(es)-1].Op != c.Op {
		t.Fatalf("record_history of %s %s: %s; want create ... %s", c.Kind, c.ID, result, c.Op)
	}
	for _, e := range es {
		if e.ID != c.ID || e.At <= 0 {
			t.Fatalf("record_history of %s: entry %+v", c.Kind, e)
		}
	}
	for _, m := range Markers {
		if strings.Contains(string(result), m) {
			t.Fatalf("record_history of %s holds %s: %s", c.Kind, m, result)
		}
	}
}

// CheckGone checks through the engine that every record of r is forgotten
// or deleted, and that the export holds no marker.
func CheckGone(t testing.TB, eng *cairn.Engine, r Records) {
	t.Helper()
	ctx := context.Background()
	if o, err := eng.Observation(ctx, r.Observation); err != nil || !o.Redacted {
		t.Errorf("observation after forget: %+v, %v", o, err)
	}
	if s, err := eng.Summary(ctx, r.Summary); err != nil || !s.Redacted {
		t.Errorf("summary after forget: %+v, %v", s, err)
	}
	if th, err := eng.Thought(ctx, r.Thought); err != nil || !th.Redacted {
		t.Errorf("thought after forget: %+v, %v", th, err)
	}
	if th, err := eng.Thought(ctx, r.Marked); err != nil || th.Status != memory.StatusRemoval || th.Redacted {
		t.Errorf("thought after mark: %+v, %v", th, err)
	}
	if _, err := eng.Entity(ctx, r.Entity); !memory.IsCode(err, memory.CodeNotFound) {
		t.Errorf("entity after delete: %v", err)
	}
	edges, err := eng.Edges(ctx, cairn.EdgesRequest{})
	if err != nil || len(edges.Edges) != 0 {
		t.Errorf("edges after delete: %+v, %v", edges, err)
	}
	var b strings.Builder
	if _, err := eng.Export(ctx, &b); err != nil {
		t.Fatal(err)
	}
	for _, m := range Markers {
		if strings.Contains(b.String(), m) {
			t.Errorf("the export still holds %s", m)
		}
	}
	if !strings.Contains(b.String(), r.Artifact) || !strings.Contains(b.String(), `"redacted":true`) {
		t.Error("the export lacks the forgotten records' skeletons")
	}
}
