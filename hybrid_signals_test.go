package cairn_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// TestHybridSignals checks the signals beyond words and meaning on the
// built-in embedder: the answer to a question takes more of it than a
// record after a statement does, a query naming a day favours that day's
// records, and word vectors match related words.
func TestHybridSignals(t *testing.T) {
	day := func(d int) int64 { return time.Date(2024, 3, d, 12, 0, 0, 0, time.UTC).UnixMilli() }
	scope := memory.Scope{RepoID: "r"}
	var dump memory.Dump
	capsule := func(id string, ts int64, turns ...string) {
		c := memory.Capsule{ID: id, Type: "session", Status: memory.CapsuleClosed, OpenedAt: ts, Scope: scope}
		for i, s := range turns {
			o := memory.Observation{ID: id + "_" + string(rune('a'+i)), Kind: memory.KindMessage, Content: s, TS: ts + int64(i)*60_000, Scope: scope}
			dump.Observations = append(dump.Observations, o)
			c.ObservationIDs = append(c.ObservationIDs, o.ID)
		}
		closed := ts + int64(len(turns))*60_000
		c.ClosedAt = &closed
		dump.Capsules = append(dump.Capsules, c)
	}
	capsule("cap_q", day(1), "Ann: did the flaky checkout test pass?", "Bo: yes, after the retry fix", "Ann: great news")
	capsule("cap_s", day(2), "Ann: I looked at the flaky checkout test.", "Bo: yes, after the retry fix", "Ann: great news")
	capsule("cap_d3", day(3), "Ann: the nightly build broke", "Bo: the children went to school")
	capsule("cap_d20", day(20), "Ann: the nightly build broke", "Bo: the invoice was paid")
	now := time.UnixMilli(day(21))
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "c.db"), &cairn.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.ImportDump(ctx, dump); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	w := retrieve.DefaultHybridWeights

	res := search(t, eng, cairn.RetrieveRequest{Query: "flaky checkout test", ScopeIDs: scope})
	afterQ, ok1 := candidate(res, "cap_q_b")
	afterS, ok2 := candidate(res, "cap_s_b")
	if !ok1 || !ok2 {
		t.Fatalf("both replies should be candidates: %v", candidateIDs(res))
	}
	if lq, ls := component(t, afterQ, "lexical"), component(t, afterS, "lexical"); lq <= ls {
		t.Fatalf("the answer to a question has lexical %v, the reply to a statement %v; want the answer higher (before %v, beforeOther %v)", lq, ls, w.Before, w.BeforeOther)
	}
	if _, ok := res.Provenance.Scoring.Params["periodFrom"]; ok {
		t.Fatalf("a query naming no period got one: %v", res.Provenance.Scoring.Params)
	}

	res = search(t, eng, cairn.RetrieveRequest{Query: "what broke in the nightly build on March 3, 2024?", ScopeIDs: scope})
	if ids := candidateIDs(res); len(ids) < 2 || ids[0] != "cap_d3_a" {
		t.Fatalf("ranking %v; want the build failure of March 3 first", ids)
	}
	p := res.Provenance.Scoring.Params
	if p["periodFrom"] != float64(time.Date(2024, 3, 3, 0, 0, 0, 0, time.UTC).UnixMilli()) ||
		p["periodTo"] != float64(time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC).Add(retrieve.PeriodSlack).UnixMilli()) {
		t.Fatalf("period params %v", p)
	}
	for _, c := range res.Candidates {
		want := 0.0
		if c.Entity.Time() >= day(3)-12*3600_000 && c.Entity.Time() < day(4)+7*24*3600_000 {
			want = 1
		}
		if got := component(t, c, "period"); got != want {
			t.Fatalf("candidate %s: period %v, want %v", c.Entity.ID(), got, want)
		}
		if c.Score < 0 || c.Score > 1 {
			t.Fatalf("candidate %s: score %v outside [0, 1]", c.Entity.ID(), c.Score)
		}
	}

	res = search(t, eng, cairn.RetrieveRequest{Query: "kids", ScopeIDs: scope})
	kids, ok := candidate(res, "cap_d3_b")
	if !ok || res.Candidates[0].Entity.ID() != "cap_d3_b" {
		t.Fatalf("ranking %v; want the record about children first", candidateIDs(res))
	}
	if s := component(t, kids, "soft"); s < 0.5 || s >= 1 {
		t.Fatalf("soft match of kids with children %v; want a strong partial match", s)
	}
}
