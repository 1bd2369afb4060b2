package cairn_test

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// historyText calls record_history as a face does and renders the
// entries as "op[fields]@seconds-since-start".
func historyText(t *testing.T, eng *cairn.Engine, id string, start time.Time) string {
	t.Helper()
	out, err := eng.CallJSON(ctx, "record_history", []byte(`{"id":`+strconv.Quote(id)+`}`))
	if err != nil {
		t.Fatalf("record_history %s: %v", id, err)
	}
	h := out.(cairn.RecordHistory)
	var parts []string
	for _, e := range h.Entries {
		s := e.Op
		if len(e.Fields) > 0 {
			s += "[" + strings.Join(e.Fields, ",") + "]"
		}
		parts = append(parts, s+"@"+strconv.FormatInt((e.At-start.UnixMilli())/1000, 10))
	}
	return strings.Join(parts, " ")
}

// TestRecordHistory: every engine write to a record is in its history,
// dated by the engine's clock; an import is an import; a deleted
// record's history stays readable; bad arguments are invalid_params and
// an id naming nothing not_found.
func TestRecordHistory(t *testing.T) {
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	clock := start
	at := func(s int) { clock = start.Add(time.Duration(s) * time.Second) }
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Embedder: embed.Hash{Dim: 32},
		Now: func() time.Time { return clock }})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	scope := memory.Scope{SessionID: "s1", RepoID: repo}
	c, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{ScopeIDs: scope})
	must(err)
	at(1)
	o, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindCommand, Content: "export TOKEN=zqledger1", ScopeIDs: scope})
	must(err)
	at(2)
	s, err := eng.SetSummary(ctx, cairn.SummaryRequest{CapsuleID: c.ID, SummaryInput: cairn.SummaryInput{Content: "first"}})
	must(err)
	at(3)
	p, err := eng.Pin(ctx, cairn.PinRequest{TargetID: o.ID})
	must(err)
	at(4)
	_, err = eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: c.ID, Summary: &cairn.SummaryInput{Content: "final"}})
	must(err)
	at(5)
	must(eng.Unpin(ctx, p.ID))
	_, err = eng.Forget(ctx, o.ID)
	must(err)
	at(6)
	th, err := eng.Think(ctx, cairn.ThinkRequest{Content: "a conclusion", ScopeIDs: scope})
	must(err)
	at(7)
	_, err = eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: th.ID, Status: memory.StatusRemoval})
	must(err)
	at(8)
	ent, err := eng.CreateEntity(ctx, cairn.EntityRequest{Name: "vault", Type: "service"})
	must(err)
	at(9)
	_, err = eng.UpdateEntity(ctx, cairn.EntityRequest{EntityID: ent.ID, Type: "database"})
	must(err)
	at(10)
	_, err = eng.DeleteEntity(ctx, ent.ID)
	must(err)
	at(11)
	_, err = eng.Import(ctx, strings.NewReader(`{"thought":{"id":"th_imported","content":"from elsewhere","origin":"human","tags":[],"status":"active","significance":0.5,"is_summary":false,"summary_of":[],"created_at":1,"scopeIds":{}}}`+"\n"), cairn.ImportOptions{})
	must(err)

	for id, want := range map[string]string{
		c.ID:          "create@0 close[status,closed_at]@4",
		o.ID:          "create@1 forget[content,redacted]@5",
		s.ID:          "create@2 update[content,created_at]@4",
		p.ID:          "create@3 delete@5",
		th.ID:         "create@6 mark[status]@7",
		ent.ID:        "create@8 update[type]@9 delete@10",
		"th_imported": "import@11",
	} {
		if got := historyText(t, eng, id, start); got != want {
			t.Errorf("history of %s: %s; want %s", id, got, want)
		}
	}
	out, err := eng.CallJSON(ctx, "record_history", []byte(`{"id":"`+o.ID+`"}`))
	must(err)
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), "zqledger1") {
		t.Fatalf("the history of a forgotten observation holds its text: %s", b)
	}
	for _, args := range []string{`{}`, `{"id":""}`, `{"id":" x"}`, `{"id":"` + o.ID + `","limit":0}`, `{"id":"` + o.ID + `","limit":1001}`,
		`{"id":"` + o.ID + `","after":-1}`, `{"id":"` + o.ID + `","extra":1}`} {
		_, err := eng.CallJSON(ctx, "record_history", []byte(args))
		wantErr(t, "record_history "+args, err, memory.CodeInvalidParams)
	}
	_, err = eng.CallJSON(ctx, "record_history", []byte(`{"id":"obs_nothing"}`))
	wantErr(t, "record_history of an unknown id", err, memory.CodeNotFound)
	// Paging: next_after names the next page until the last.
	var seqs []int64
	req := cairn.HistoryRequest{ID: c.ID, Limit: ptr(1)}
	for range 3 {
		h, err := eng.RecordHistory(ctx, req)
		must(err)
		for _, e := range h.Entries {
			seqs = append(seqs, e.Seq)
		}
		if h.NextAfter == 0 {
			break
		}
		req.After = h.NextAfter
	}
	if len(seqs) != 2 || seqs[0] >= seqs[1] {
		t.Fatalf("paged history of %s: seqs %v; want 2 in order", c.ID, seqs)
	}
}
